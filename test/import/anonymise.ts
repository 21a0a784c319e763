/**
 * Makes a test fixture of a real PocketBase data directory without anything personal in it:
 *
 *   node --import tsx test/import/anonymise.ts <pb_data dir> <fixture dir>
 *
 * Every email, name, phone-like and free-text value becomes a generated one (seeded, so a run gives
 * the same output); structure, types, record and collection ids, relations, numbers, dates, select
 * values and booleans stay. Password hashes are replaced with fresh bcrypt hashes (PocketBase's
 * format): the first accounts of each auth collection and the first administrator get the passwords
 * written to `known.json` beside the data, the others random ones. Files keep their records but get
 * new names and generated content. Settings (`_params`), sign-in traces (`_mfas`, `_otps`,
 * `_authOrigins`) and collection secrets are cleared; two synthetic OAuth2 links are added. The result
 * is VACUUMed, so nothing overwritten survives in free pages.
 */
import Sqlite from 'better-sqlite3';
import { hashSync } from '@node-rs/bcrypt';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PocketBaseSource, type PbCollection } from '../../src/import/source.ts';
import { normalizeDate } from '../../src/lib/time.ts';

const [input, output] = process.argv.slice(2);
if (!input || !output) {
  process.stderr.write('usage: anonymise.ts <pb_data dir> <fixture dir>\n');
  process.exit(2);
}

// A small seeded generator (mulberry32): the same input gives the same fixture.
let seed = 0x5eed1234;
function random(): number {
  seed = (seed + 0x6d2b79f5) | 0;
  let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
  t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const pick = <T>(list: readonly T[]): T => list[Math.floor(random() * list.length)];
const ALNUM = 'abcdefghijklmnopqrstuvwxyz0123456789';
const token = (n: number, alphabet = ALNUM) => Array.from({ length: n }, () => pick([...alphabet])).join('');
const WORDS = 'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor incididunt ut labore et dolore magna aliqua enim ad minim veniam quis nostrud exercitation ullamco laboris nisi aliquip ex ea commodo consequat'.split(' ');

function words(length: number): string {
  const out: string[] = [];
  let size = 0;
  do {
    const w = pick(WORDS);
    out.push(w);
    size += w.length + 1;
  } while (size < Math.max(3, Math.min(length, 400)));
  return out.join(' ');
}

let people = 0;
const emailFor = new Map<string, string>();
function email(old: string, prefix = 'person'): string {
  if (old === '') return '';
  if (old === '__pbinstaller@example.com') return old;
  let e = emailFor.get(old.toLowerCase());
  if (!e) emailFor.set(old.toLowerCase(), (e = `${prefix}${++people}@example.com`));
  return e;
}

const EMAIL = /[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.[A-Za-z]{2,}/g;
const PHONEISH = /^[+()\d\s.-]{6,}$/;

/** Record ids of every table: text that is one of them is a reference and stays. */
const recordIds = new Set<string>();

function fakeText(value: string): string {
  if (value === '' || recordIds.has(value)) return value;
  if (normalizeDate(value) !== undefined) return value;
  if (EMAIL.test(value)) {
    EMAIL.lastIndex = 0;
    return value.replace(EMAIL, (m) => email(m));
  }
  if (PHONEISH.test(value)) return value.replace(/\d/g, () => String(Math.floor(random() * 10)));
  if (/^-?\d+(\.\d+)?$/.test(value)) return value;
  return words(value.length);
}

function fakeJson(value: unknown): unknown {
  if (typeof value === 'string') return fakeText(value);
  if (Array.isArray(value)) return value.map(fakeJson);
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fakeJson(v)]));
  return value;
}

// Generated file contents by extension: small, and valid enough for a content-type check.
const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000' + '1f15c4890000000d4944415478da63f8cfc0f01f0005000201' + '6b0d5c2a0000000049454e44ae426082', 'hex');
const PDF = Buffer.from('%PDF-1.4\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj 2 0 obj<</Type/Pages/Kids[]/Count 0>>endobj\ntrailer<</Root 1 0 R>>\n%%EOF\n');
function fileContent(name: string): Buffer {
  const ext = path.extname(name).toLowerCase();
  if (['.png', '.jpg', '.jpeg', '.webp', '.gif', '.avif', '.svg'].includes(ext)) return PNG;
  if (ext === '.pdf') return PDF;
  return Buffer.from(`generated test content for ${name}\n`);
}
const renamed = new Map<string, string>();
function newFileName(old: string): string {
  let n = renamed.get(old);
  if (!n) {
    const ext = path.extname(old).toLowerCase().replace(/[^a-z0-9.]/g, '').slice(0, 10);
    renamed.set(old, (n = `file_${token(10, 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789')}${ext}`));
  }
  return n;
}

function listOf(raw: unknown): string[] | undefined {
  if (typeof raw !== 'string' || !raw.startsWith('[')) return undefined;
  try {
    const parsed = JSON.parse(raw);
    return Array.isArray(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

// 1. A working copy with the WAL folded in, so the fixture is one file.
const work = mkdtempSync(path.join(tmpdir(), 'pb-anon-'));
for (const suffix of ['', '-wal', '-shm']) {
  if (existsSync(path.join(input, `data.db${suffix}`))) copyFileSync(path.join(input, `data.db${suffix}`), path.join(work, `data.db${suffix}`));
}
const workFile = path.join(work, 'data.db');
{
  const db = new Sqlite(workFile);
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.pragma('journal_mode = DELETE');
  db.close();
}
const source = PocketBaseSource.open(workFile);
const collections = source.collections();
const generation = source.generation;
source.close();
const db = new Sqlite(workFile);

const tables = collections.filter((c) => c.type !== 'view' && db.prepare("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?").get(c.name));
for (const c of tables) for (const r of db.prepare(`SELECT id FROM "${c.name}"`).all() as { id: string }[]) recordIds.add(r.id);

const known: { accounts: Record<string, Array<{ id: string; email: string; password: string }>>; administrators: Array<{ email: string; password: string }> } = { accounts: {}, administrators: [] };
const outStorage = path.join(output, 'storage');
rmSync(output, { recursive: true, force: true });
mkdirSync(outStorage, { recursive: true });

const hash = (password: string) => hashSync(password, 10);

function anonymiseCollection(c: PbCollection): void {
  const isAuth = c.type === 'auth';
  const passwordColumn = generation === 'current' ? 'password' : 'passwordHash';
  const rows = db.prepare(`SELECT rowid AS _rowid, * FROM "${c.name}" ORDER BY rowid`).all() as Record<string, unknown>[];
  const byName = new Map(c.fields.map((f) => [f.name, f]));
  let knownCount = 0;
  for (const row of rows) {
    const set: Record<string, unknown> = {};
    for (const [column, value] of Object.entries(row)) {
      if (column === '_rowid' || column === 'id' || column === 'created' || column === 'updated') continue;
      const field = byName.get(column);
      if (isAuth && column === 'email') set.email = email(String(value ?? ''), c.system ? 'admin' : 'person');
      else if (isAuth && column === 'username') set.username = `user_${token(8)}`;
      else if (isAuth && column === 'tokenKey') set.tokenKey = token(50);
      else if (isAuth && column === passwordColumn) continue;
      else if (!field || typeof value !== 'string' || value === '') continue;
      else if (field.type === 'text' || field.type === 'editor') set[column] = field.type === 'editor' ? `<p>${words(value.length)}</p>` : fakeText(value);
      else if (field.type === 'email') set[column] = email(value);
      else if (field.type === 'url') set[column] = `https://example.com/${token(8)}`;
      else if (field.type === 'json' || field.type === 'geoPoint') {
        try {
          set[column] = JSON.stringify(field.type === 'geoPoint' ? { lon: Math.round(random() * 3600) / 10 - 180, lat: Math.round(random() * 1800) / 10 - 90 } : fakeJson(JSON.parse(value)));
        } catch {
          set[column] = JSON.stringify(fakeText(value));
        }
      } else if (field.type === 'file') {
        const names = listOf(value) ?? [value];
        const next = names.map((n) => (typeof n === 'string' && n !== '' ? newFileName(n) : n));
        for (let i = 0; i < names.length; i++) {
          const from = path.join(input, 'storage', c.id, String(row.id), String(names[i]));
          if (typeof names[i] === 'string' && existsSync(from)) {
            mkdirSync(path.join(outStorage, c.id, String(row.id)), { recursive: true });
            writeFileSync(path.join(outStorage, c.id, String(row.id), String(next[i])), fileContent(String(next[i])));
          }
        }
        set[column] = listOf(value) ? JSON.stringify(next) : next[0];
      }
    }
    if (isAuth && passwordColumn in row) {
      const account = String(set.email ?? '');
      const admin = c.system;
      let password = `random-${token(20)}`;
      if (account !== '' && account !== '__pbinstaller@example.com' && knownCount < (admin ? 1 : 2)) {
        knownCount++;
        password = admin ? `pb-admin-password-${knownCount}` : `${c.name}-password-${knownCount}`;
        if (admin) known.administrators.push({ email: account, password });
        else (known.accounts[c.name] ??= []).push({ id: String(row.id), email: account, password });
      }
      set[passwordColumn] = hash(password);
    }
    const columns = Object.keys(set);
    if (columns.length > 0) db.prepare(`UPDATE "${c.name}" SET ${columns.map((k) => `"${k}" = ?`).join(', ')} WHERE rowid = ?`).run(...columns.map((k) => set[k] as never), row._rowid as never);
  }
}

db.transaction(() => {
  for (const c of tables) anonymiseCollection(c);
  // Administrators before 0.23 are not a collection.
  if (generation === 'legacy') {
    const admins = db.prepare('SELECT rowid AS r, email FROM _admins ORDER BY rowid').all() as { r: number; email: string }[];
    admins.forEach((a, i) => {
      const account = email(a.email, 'admin');
      const password = i === 0 ? 'pb-admin-password-1' : `random-${token(20)}`;
      if (i === 0) known.administrators.push({ email: account, password });
      db.prepare('UPDATE _admins SET email = ?, passwordHash = ?, tokenKey = ? WHERE rowid = ?').run(account, hash(password), token(50), a.r);
    });
  }
  // Settings hold SMTP and S3 credentials, sign-in traces hold addresses and devices.
  // sqlite_stat4 keeps sample index keys (values of the rows), which ANALYZE took from the real data.
  for (const table of ['_params', '_mfas', '_otps', '_authOrigins', '_externalAuths', 'sqlite_stat4']) {
    if (db.prepare("SELECT 1 FROM sqlite_master WHERE type='table' AND name=?").get(table)) db.prepare(`DELETE FROM "${table}"`).run();
  }
  // Collection secrets (token signing keys, OAuth2 client secrets) and emails in rules.
  for (const c of collections) {
    const options = JSON.parse(JSON.stringify(c.options), (k, v) => (k === 'secret' && typeof v === 'string' ? token(50) : k === 'clientSecret' ? '' : v));
    const rules = ['listRule', 'viewRule', 'createRule', 'updateRule', 'deleteRule'].map((r) => {
      const text = (c as unknown as Record<string, string | null>)[r];
      return typeof text === 'string' ? text.replace(EMAIL, (m) => email(m)) : text;
    });
    db.prepare('UPDATE _collections SET options = ?, listRule = ?, viewRule = ?, createRule = ?, updateRule = ?, deleteRule = ? WHERE id = ?').run(JSON.stringify(options), ...rules, c.id);
  }
  // Two synthetic OAuth2 links to the first accounts, so that imports of links are tested.
  const firstAuth = Object.entries(known.accounts)[0];
  if (firstAuth) {
    const collection = collections.find((c) => c.name === firstAuth[0])!;
    const [columnCollection, columnRecord] = generation === 'current' ? ['collectionRef', 'recordRef'] : ['collectionId', 'recordId'];
    firstAuth[1].forEach((account, i) => {
      db.prepare(`INSERT INTO _externalAuths (id, "${columnCollection}", "${columnRecord}", provider, providerId, created, updated) VALUES (?, ?, ?, ?, ?, ?, ?)`).run(
        token(15),
        collection.id,
        account.id,
        i === 0 ? 'google' : 'github',
        token(21, '0123456789'),
        '2024-01-02 03:04:05.678Z',
        '2024-01-02 03:04:05.678Z',
      );
    });
  }
})();
db.prepare('VACUUM INTO ?').run(path.join(output, 'data.db'));
db.close();
rmSync(work, { recursive: true, force: true });
writeFileSync(path.join(output, 'known.json'), `${JSON.stringify(known, null, 2)}\n`);
process.stdout.write(`${output}: ${tables.length} tables, ${renamed.size} files, ${people} people\n`);
