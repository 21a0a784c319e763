import { createHash } from 'node:crypto';
import { typeOf } from '../../collections/fields/registry.ts';
import type { Collection } from '../../collections/model.ts';
import { type RequestContext, systemContext, withRequest } from '../../context.ts';
import { badRequest, validationFailed } from '../../errors.ts';
import { randomId, randomSecret } from '../../lib/ids.ts';
import { isPlainObject } from '../../lib/objects.ts';
import { nowIso } from '../../lib/time.ts';
import type { RecordJson } from '../../records/serialize.ts';
import type { RecordService } from '../../records/service.ts';
import { shapeOf } from '../../records/shape.ts';
import type { SchemaStep } from '../../storage/index.ts';
import type { SettingsService } from '../../settings/service.ts';
import type { AuthResult, RecordAuthService } from '../record-auth.ts';
import type { StagedFile } from '../../files/staged.ts';
import type { OutboundPolicy } from '../../lib/outbound.ts';
import { type AvatarStaging, downloadAvatar } from './avatar.ts';
import { exchangeCode, fetchProfile, type OAuth2Profile } from './client.ts';
import { readsIdToken } from './presets.ts';
import { type OAuth2Settings, PRESETS, type ProviderConfig } from './providers.ts';
import { authSettingsOf } from '../../collections/auth-settings.ts';
import { quoteIdent } from '../../lib/identifiers.ts';
import { emailOptional } from '../../records/auth-fields.ts';
import { claimUnverified } from '../claim.ts';

/** Which provider account belongs to which auth record, per database. */
export const externalAuthsTableStep: SchemaStep = {
  id: 'auth.external_auths',
  async up(tx) {
    await tx.exec(`CREATE TABLE _external_auths (
      id TEXT PRIMARY KEY NOT NULL,
      collectionId TEXT NOT NULL,
      recordId TEXT NOT NULL,
      provider TEXT NOT NULL,
      providerId TEXT NOT NULL,
      created TEXT NOT NULL,
      updated TEXT NOT NULL,
      UNIQUE (collectionId, provider, providerId)
    );
    CREATE INDEX _external_auths_record ON _external_auths (collectionId, recordId)`);
  },
};

/** A provider as `/api/auth/methods` lists it: where to send the user, with fresh state and PKCE values. */
export interface ProviderListing {
  name: string;
  displayName: string;
  state: string;
  authUrl: string;
  codeVerifier: string;
  codeChallenge: string;
  codeChallengeMethod: 'S256' | '';
}

export interface OAuth2Input {
  provider?: unknown;
  code?: unknown;
  codeVerifier?: unknown;
  /** PocketBase ≥ 0.23 (and its SDKs) send `redirectURL`; `redirectUrl` is the earlier name. */
  redirectURL?: unknown;
  redirectUrl?: unknown;
  /** Fields for the record a sign-up creates (PocketBase's `createData`), under the create rule. */
  createData?: unknown;
}

export type OAuth2Result = AuthResult & {
  meta: { id: string; name: string; email: string; avatarUrl: string; isNew: boolean; rawUser: Record<string, unknown> };
};

function optionalText(v: unknown, max = 2048): string {
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string' || v.length > max) throw badRequest('Invalid OAuth2 parameters.');
  return v;
}

/**
 * OAuth2 sign-in: lists the configured providers, exchanges an authorization code at the provider,
 * reads the user's profile and links it to an auth record — the one already linked to that provider
 * account, else the signed-in record, else the record with the same email when the provider vouches
 * for it, else a new record.
 */
/** PocketBase's default avatar limit (5 MB), for a file field without its own. */
const AVATAR_MAX_BYTES = 5 * 1024 * 1024;

/** How long a name Apple sent with a redirect waits for the sign-in with its code (PocketBase's minute). */
const APPLE_NAME_MS = 60_000;

export class OAuth2Service {
  /** Names from Apple's redirect forms, by authorization code. This process's only: one node's. */
  private readonly appleNames = new Map<string, { name: string; until: number }>();

  constructor(
    private readonly settings: SettingsService,
    private readonly records: RecordService,
    private readonly recordAuth: RecordAuthService,
    /** For an avatar field that is a file field: downloads go to the file store's staging. */
    private readonly files?: AvatarStaging<StagedFile> & { discardStaged(staged: StagedFile[]): Promise<void> },
    private readonly outbound?: OutboundPolicy,
  ) {}

  /**
   * The providers a collection signs in with: its own (PocketBase ≥ 0.23 keeps them per collection;
   * an import carries them), then the instance's of other names. A collection's provider of a name
   * Cairn has no preset for, and without URLs, cannot be used and is left out.
   */
  private async providers(collection?: Collection): Promise<ProviderConfig[]> {
    const own: ProviderConfig[] = [];
    for (const p of collection?.type === 'auth' ? authSettingsOf(collection).oauth2.providers : []) {
      const preset = PRESETS[p.name];
      const config: ProviderConfig = {
        name: p.name,
        displayName: p.displayName || preset?.displayName || p.name,
        clientId: p.clientId,
        clientSecret: p.clientSecret,
        authUrl: p.authUrl || preset?.authUrl || '',
        tokenUrl: p.tokenUrl || preset?.tokenUrl || '',
        userInfoUrl: p.userInfoUrl || preset?.userInfoUrl || '',
        scopes: preset?.scopes ?? ['openid', 'email', 'profile'],
        enabled: true,
        pkce: p.pkce ?? preset?.pkce ?? true,
        extra: p.extra ?? undefined,
      };
      // Microsoft's address from the id_token needs one (PocketBase ≥ 0.39.6).
      if (typeof p.extra?.idTokenEmailClaim === 'string' && p.extra.idTokenEmailClaim !== '' && !config.scopes.includes('openid')) config.scopes = [...config.scopes, 'openid'];
      if (config.authUrl && config.tokenUrl && (config.userInfoUrl || readsIdToken(config))) own.push(config);
    }
    const names = new Set(own.map((p) => p.name));
    const instance = (await this.settings.get<OAuth2Settings>('oauth2')).providers.filter((p) => p.enabled && !names.has(p.name));
    return [...own, ...instance];
  }

  /**
   * The enabled providers with an authorization URL. As in PocketBase, the URL ends with
   * `redirect_uri=` for the client to complete, unless `redirectUrl` is given.
   */
  async list(redirectUrl?: string, collection?: Collection): Promise<ProviderListing[]> {
    return (await this.providers(collection)).map((p) => {
      const state = randomSecret(24);
      // A provider that refuses PKCE's parameters (Bitbucket, Linear, VK) gets none, and the client
      // no verifier to send back.
      const pkce = p.pkce !== false;
      const codeVerifier = pkce ? randomSecret(48) : '';
      const codeChallenge = pkce ? createHash('sha256').update(codeVerifier).digest('base64url') : '';
      const url = new URL(p.authUrl);
      url.searchParams.set('client_id', p.clientId);
      url.searchParams.set('response_type', 'code');
      if (p.scopes.length > 0) url.searchParams.set('scope', p.scopes.join(' '));
      url.searchParams.set('state', state);
      if (pkce) {
        url.searchParams.set('code_challenge', codeChallenge);
        url.searchParams.set('code_challenge_method', 'S256');
      }
      for (const [key, value] of Object.entries(PRESETS[p.name]?.authParams ?? {})) url.searchParams.set(key, value);
      const authUrl = `${url.href}&redirect_uri=${redirectUrl ? encodeURIComponent(redirectUrl) : ''}`;
      return { name: p.name, displayName: p.displayName, state, authUrl, codeVerifier, codeChallenge, codeChallengeMethod: pkce ? 'S256' : '' };
    });
  }

  /**
   * Apple's redirect form carries the user's name (`user: {"name": {"firstName", "lastName"}}`) at
   * the first sign-in only, and its id_token never does: kept a minute for the sign-in with `code`.
   */
  rememberAppleName(code: string, user: string): void {
    const now = Date.now();
    for (const [k, v] of this.appleNames) if (v.until < now) this.appleNames.delete(k);
    let parsed: unknown;
    try {
      parsed = JSON.parse(user);
    } catch {
      return;
    }
    const name = isPlainObject(parsed) && isPlainObject(parsed.name) ? parsed.name : {};
    const full = `${typeof name.firstName === 'string' ? name.firstName : ''} ${typeof name.lastName === 'string' ? name.lastName : ''}`;
    const trimmed = Buffer.from(full).subarray(0, 150).toString().replace(/\uFFFD$/, '').trim();
    if (trimmed !== '' && this.appleNames.size < 10_000) this.appleNames.set(code, { name: trimmed, until: now + APPLE_NAME_MS });
  }

  async authenticate(ctx: RequestContext, collection: Collection, input: OAuth2Input): Promise<OAuth2Result> {
    this.recordAuth.requireMethod(collection, 'oauth2');
    const name = optionalText(input.provider, 100);
    const code = optionalText(input.code);
    // As PocketBase: every form error at once, an unknown or disabled provider among them.
    const provider = name === '' ? undefined : (await this.providers(collection)).find((p) => p.name === name);
    const problems: Record<string, { code: string; message: string }> = {};
    if (name === '') problems.provider = { code: 'validation_required', message: 'Cannot be blank.' };
    else if (!provider) problems.provider = { code: 'validation_invalid_provider', message: `OAuth2 provider "${name}" is not configured.` };
    if (code === '') problems.code = { code: 'validation_required', message: 'Cannot be blank.' };
    if (!provider || code === '') throw validationFailed(problems);

    if (input.createData !== undefined && input.createData !== null && !isPlainObject(input.createData)) {
      throw validationFailed({ createData: { code: 'validation_invalid_data', message: 'Must be an object.' } });
    }
    const redirect = optionalText(input.redirectURL) || optionalText(input.redirectUrl);
    const token = await exchangeCode(provider, code, redirect, provider.pkce === false ? '' : optionalText(input.codeVerifier, 200));
    const profile = await fetchProfile(provider, token);
    const remembered = provider.name === 'apple' ? this.appleNames.get(code) : undefined;
    if (remembered) {
      this.appleNames.delete(code);
      if (!profile.name && remembered.until >= Date.now()) profile.name = remembered.name;
    }
    const { id, isNew } = await this.linkOrCreate(ctx, collection, provider.name, profile, isPlainObject(input.createData) ? input.createData : {});
    const result = await this.recordAuth.resultFor(ctx, collection, id, 'oauth2');
    return {
      ...result,
      meta: { id: profile.id, name: profile.name ?? '', email: profile.email ?? '', avatarUrl: profile.avatarUrl ?? '', isNew, rawUser: profile.raw },
    };
  }

  private async linkOrCreate(ctx: RequestContext, collection: Collection, provider: string, profile: OAuth2Profile, createData: Record<string, unknown>): Promise<{ id: string; isNew: boolean }> {
    const db = ctx.db;
    const table = shapeOf(collection).table;
    const linked = await db.get<{ id: string; recordId: string }>('SELECT id, recordRef AS recordId FROM _externalAuths WHERE collectionRef = ? AND provider = ? AND providerId = ?', [
      collection.id,
      provider,
      profile.id,
    ]);
    if (linked) {
      if (await db.get(`SELECT id FROM ${table} WHERE id = ?`, [linked.recordId])) return { id: linked.recordId, isNew: false };
      // The record was deleted since: the link is stale.
      await db.run('DELETE FROM _externalAuths WHERE id = ?', [linked.id]);
    }

    const auth = ctx.auth;
    if (auth.type === 'record' && auth.collectionId === collection.id) {
      await this.link(ctx, collection, auth.id, provider, profile.id);
      return { id: auth.id, isNew: false };
    }

    // Without an address (Spotify, Strava, … share none) an account is made only where the collection
    // lets a record have none, as in PocketBase.
    if (!profile.email && !emailOptional(collection)) throw badRequest('The OAuth2 provider did not share an email address; allow access to it and try again.');
    const existing = profile.email ? await db.get<{ id: string; verified: number }>(`SELECT id, verified FROM ${table} WHERE email = ?`, [profile.email]) : undefined;
    if (existing) {
      // Linking on an address the provider does not vouch for would hand the account to whoever typed it.
      if (!profile.verified) {
        throw badRequest('An account with this email already exists and the OAuth2 provider has not verified the address; sign in with your password instead.');
      }
      if (existing.verified !== 1) {
        // Whoever registered this unverified account with a password may not be the address's owner
        // (a pre-registered account): as PocketBase does, the password is replaced by a random one,
        // which also revokes every token issued to it.
        const password = randomSecret(32);
        await this.records.update(systemContext(ctx.dbName, db), collection, existing.id, { verified: true, password, passwordConfirm: password });
        // And their OAuth2 links go: an attacker's unverified OAuth2 identity would otherwise still
        // sign in to the account its owner just took (issue 36 hole 2).
        await claimUnverified(db, collection, existing.id, { revokeTokens: false });
      }
      await this.link(ctx, collection, existing.id, provider, profile.id);
      return { id: existing.id, isNew: false };
    }

    // The client's `createData` first, as PocketBase: its email when it gives one, the profile's name and
    // picture unless it sets them, a random password unless it gives one.
    const data: Record<string, unknown> = { emailVisibility: false, ...createData };
    if ((typeof data.email !== 'string' || data.email === '') && profile.email) data.email = profile.email;
    if (data.password === undefined) {
      const password = randomSecret(32);
      Object.assign(data, { password, passwordConfirm: password });
    }
    // The profile's values go to the fields the collection maps them to (PocketBase's
    // `oauth2.mappedFields`; its default `users` maps the name and the avatar).
    const mapped = authSettingsOf(collection).oauth2.mappedFields;
    const staged: StagedFile[] = [];
    for (const [field, value] of [
      [mapped.id, profile.id],
      [mapped.name, profile.name],
      [mapped.username, profile.username],
      [mapped.avatarURL, profile.avatarUrl],
    ] as const) {
      const def = field ? collection.fields.find((f) => f.name === field) : undefined;
      if (!def || value === undefined || value === '' || field in createData) continue;
      // A username someone has already is left out rather than failing the sign-up (PocketBase keeps
      // this for the unique usernames of collections from before 0.23).
      if (field === mapped.username && def.unique && (await db.get(`SELECT 1 AS taken FROM ${table} WHERE ${quoteIdent(field)} = ?`, [value]))) continue;
      if (def.type === 'file') {
        // PocketBase's default users keep the avatar as a file: the provider's picture is downloaded.
        if (!this.files) continue;
        const file = await downloadAvatar(value, Number(def.options.maxSize) || AVATAR_MAX_BYTES, this.files, this.outbound);
        if (file) {
          staged.push(file);
          data[field] = file;
        }
      } else if (typeOf(def).prepare(value, def).ok) data[field] = value;
    }
    // A sign-up is a create by the caller, under the collection's create rule, as PocketBase makes it
    // (an internal POST of these values: `@request.body` is them, `@request.context` is `oauth2`): a
    // rule closed to guests lets no one sign up this way. That the provider verified the address is
    // the server's to record, after.
    let created: RecordJson;
    try {
      created = (await this.records.create(withRequest(ctx, { method: 'POST', query: {}, body: data, context: 'oauth2' }), collection, data)) as RecordJson;
    } finally {
      if (staged.length > 0) await this.files!.discardStaged(staged);
    }
    // Verified only for the address the provider vouched for (`createData` may have given another).
    if (profile.verified && data.email === profile.email) await this.records.update(systemContext(ctx.dbName, db), collection, created.id, { verified: true });
    await this.link(ctx, collection, created.id, provider, profile.id);
    return { id: created.id, isNew: true };
  }

  private async link(ctx: RequestContext, collection: Collection, recordId: string, provider: string, providerId: string): Promise<void> {
    const now = nowIso();
    await ctx.db.run(
      'INSERT INTO _externalAuths (id, collectionRef, recordRef, provider, providerId, created, updated) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
      [randomId(), collection.id, recordId, provider, providerId, now, now],
    );
  }
}
