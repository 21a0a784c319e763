import { createDecipheriv } from 'node:crypto';
import type { Note } from './schema.ts';
import type { Generation } from './source.ts';
import { isPlainObject } from '../lib/objects.ts';

/**
 * PocketBase's settings (`_params`) as Cairn's instance settings (system.db `_settings`, one JSON
 * document per section). Which goes where:
 *
 * | PocketBase | Cairn section |
 * | --- | --- |
 * | `meta.appName`, `appURL` (`appUrl` before 0.23), `senderName`, `senderAddress` | `meta` (`appName`, `appUrl`, `senderName`, `senderAddress`), which Cairn's mails use |
 * | before 0.23: `googleAuth`, `githubAuth`, … (instance-wide OAuth2 providers) | `oauth2.providers`, Cairn's instance-wide providers |
 * | `smtp`, `s3`, `backups`, `rateLimits`, `trustedProxy`, `batch`, `logs` | the sections of the same names, in PocketBase's shape (secrets included, in system.db like the OAuth2 client secrets); `s3` only when enabled, `backups` only with a schedule or its bucket enabled |
 * | `superuserIPs` | `superuserIPs`: administrators are served only from those addresses, as on PocketBase |
 * | `meta.hideControls`, `meta.accentColor` | `pocketbase`, kept as they were |
 * | before 0.23: `recordAuthToken`, … (token secrets and lifetimes), `meta.*Template` | each auth collection's settings (schema.ts) |
 *
 * PocketBase started with `--encryptionEnv` keeps the document encrypted (AES-256-GCM under the
 * 32-character key in that variable); `PB_ENCRYPTION_KEY` in the environment decrypts it, and
 * without it nothing of the settings is carried and the report says so.
 */

export interface SettingsPlan {
  /** Section name → value to store. */
  sections: Map<string, unknown>;
  /** The document, for what collections take from it (before 0.23: token secrets, templates). */
  document?: Record<string, unknown>;
  notes: Note[];
}

/** PocketBase's `security.Decrypt`: base64 of nonce (12 bytes) + ciphertext + GCM tag (16 bytes). */
export function decryptSettings(text: string, key: string): Record<string, unknown> | undefined {
  try {
    const data = Buffer.from(text, 'base64');
    if (data.length < 12 + 16 || Buffer.byteLength(key) !== 32) return undefined;
    const decipher = createDecipheriv('aes-256-gcm', Buffer.from(key), data.subarray(0, 12));
    decipher.setAuthTag(data.subarray(data.length - 16));
    const plain = Buffer.concat([decipher.update(data.subarray(12, data.length - 16)), decipher.final()]).toString('utf8');
    const parsed: unknown = JSON.parse(plain);
    return isPlainObject(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

/** PocketBase's instance-wide OAuth2 providers before 0.23 (`googleAuth: {enabled, clientId, clientSecret, authUrl, tokenUrl, userApiUrl}`). */
const LEGACY_PROVIDER_KEYS = /^([a-z0-9]+)Auth$/;

function legacyProviders(doc: Record<string, unknown>, notes: Note[]): unknown[] {
  const providers: unknown[] = [];
  for (const [key, value] of Object.entries(doc)) {
    const m = LEGACY_PROVIDER_KEYS.exec(key);
    if (!m || !isPlainObject(value) || key === 'recordAuth' || key === 'adminAuth') continue;
    if (value.enabled !== true && !value.clientId) continue;
    const name = m[1].toLowerCase();
    const provider: Record<string, unknown> = { name, clientId: value.clientId, clientSecret: value.clientSecret, enabled: value.enabled === true };
    for (const [from, to] of [['authUrl', 'authUrl'], ['tokenUrl', 'tokenUrl'], ['userApiUrl', 'userInfoUrl']]) {
      if (typeof value[from] === 'string' && value[from] !== '') provider[to] = value[from];
    }
    if (typeof value.displayName === 'string' && value.displayName !== '') provider.displayName = value.displayName;
    providers.push(provider);
    notes.push({ what: 'settings.oauth2', why: `the OAuth2 provider "${name}" (${value.enabled === true ? 'enabled' : 'disabled'}) is carried to Cairn's instance-wide providers` });
  }
  return providers;
}

/**
 * What to store of PocketBase's settings. `raw` is what the file holds (the document, or its
 * encrypted text); `encryptionKey` is PB_ENCRYPTION_KEY.
 */
export function planSettings(raw: { json?: Record<string, unknown>; encrypted?: string }, generation: Generation, encryptionKey: string | undefined): SettingsPlan {
  const notes: Note[] = [];
  const sections = new Map<string, unknown>();
  let doc = raw.json;
  if (!doc && raw.encrypted !== undefined) {
    doc = encryptionKey ? decryptSettings(raw.encrypted, encryptionKey) : undefined;
    if (!doc) {
      notes.push({
        what: 'settings',
        why: encryptionKey
          ? "not carried: PocketBase's settings are encrypted and PB_ENCRYPTION_KEY does not decrypt them; set Cairn's own (application name and URL, senders, SMTP, S3, backups, rate limits)"
          : "not carried: PocketBase's settings are encrypted; run the import again with PB_ENCRYPTION_KEY set to PocketBase's encryption key to carry them",
        kind: 'not-carried',
      });
      return { sections, notes };
    }
  }
  if (!doc || Object.keys(doc).length === 0) return { sections, notes };

  const meta = isPlainObject(doc.meta) ? doc.meta : {};
  const cairnMeta: Record<string, unknown> = {};
  if (typeof meta.appName === 'string' && meta.appName.trim() !== '') cairnMeta.appName = meta.appName;
  const url = meta.appURL ?? meta.appUrl;
  if (typeof url === 'string' && /^https?:\/\//i.test(url)) cairnMeta.appUrl = url;
  if (typeof meta.senderName === 'string' && meta.senderName.trim() !== '') cairnMeta.senderName = meta.senderName;
  if (typeof meta.senderAddress === 'string' && meta.senderAddress.trim() !== '') cairnMeta.senderAddress = meta.senderAddress;
  if (Object.keys(cairnMeta).length > 0) {
    sections.set('meta', cairnMeta);
    notes.push({ what: 'settings.meta', why: `carried to Cairn's meta settings: ${Object.keys(cairnMeta).join(', ')}` });
  }

  for (const name of ['smtp', 's3', 'backups', 'rateLimits', 'trustedProxy', 'batch', 'logs']) {
    if (isPlainObject(doc[name])) sections.set(name, doc[name]);
  }
  // Saved, `s3` and `backups` decide where files and backups go and the backup schedule, over the
  // environment: PocketBase's defaults (S3 off, no schedule) would move a Cairn on CAIRN_STORAGE=s3
  // back to its local disk, away from the files just imported into the bucket. Only what was set on
  // PocketBase is carried.
  const s3 = sections.get('s3') as { enabled?: unknown } | undefined;
  if (s3 && s3.enabled !== true) sections.delete('s3');
  const backups = sections.get('backups') as { cron?: unknown; s3?: { enabled?: unknown } } | undefined;
  if (backups && !(typeof backups.cron === 'string' && backups.cron !== '') && backups.s3?.enabled !== true) sections.delete('backups');
  const kept = ['smtp', 's3', 'backups', 'rateLimits', 'trustedProxy', 'batch', 'logs'].filter((n) => sections.has(n));
  if (kept.length > 0) {
    notes.push({
      what: 'settings',
      why:
        `carried as Cairn's settings sections ${kept.join(', ')} (PocketBase's shape, secrets included), shown and written through /api/settings, acting as when saved there` +
        (kept.includes('smtp') ? '; mail goes through the SMTP server of `smtp` when it is enabled and CAIRN_SMTP_URL is not set' : '') +
        (kept.includes('s3') ? "; new uploads go to PocketBase's S3 bucket, and the records' files are copied there under Cairn's keys" : ''),
    });
  }
  if (Array.isArray(doc.superuserIPs) && doc.superuserIPs.length > 0) {
    sections.set('superuserIPs', doc.superuserIPs);
    notes.push({ what: 'settings.superuserIPs', why: `carried: administrators are served only from ${doc.superuserIPs.join(', ')} (\`cairn superuser ips\` changes or clears the list)` });
  }
  const extra: Record<string, unknown> = {};
  for (const key of ['hideControls', 'accentColor']) if (meta[key] !== undefined) extra[key] = meta[key];
  if (Object.keys(extra).length > 0) sections.set('pocketbase', extra);

  if (generation === 'legacy') {
    const providers = legacyProviders(doc, notes);
    if (providers.length > 0) sections.set('oauth2', { providers });
  }
  return { sections, document: doc, notes };
}
