import assert from 'node:assert/strict';
import Sqlite from 'better-sqlite3';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { PocketBaseSource, type PbCollection, type PbField } from '../../src/import/source.ts';
import { openStorage, withDatabase } from '../helpers/inspect.ts';
import { dropDatabaseFor, onPostgres } from '../helpers/postgres.ts';
import { runCli } from '../helpers/process.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startServer, type TestServer } from '../helpers/server.ts';

/**
 * `cairn import pocketbase` on real PocketBase data files of both schema generations (anonymised
 * copies of public repositories' pb_data, see fixtures/README.md): every collection and record is
 * compared with the source through the HTTP API of a server started on the imported data, users and
 * administrators sign in with their PocketBase passwords, imported rules are enforced, and refusals
 * (name clash, not PocketBase, a failure midway) leave the data as it was.
 */

const FIXTURES = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures');
const fixture = (name: string) => path.join(FIXTURES, name);

interface Known {
  accounts: Record<string, Array<{ id: string; email: string; password: string }>>;
  administrators: Array<{ email: string; password: string }>;
}
const known = (name: string): Known => JSON.parse(readFileSync(path.join(FIXTURES, name, 'known.json'), 'utf8'));

/** Fixture → database it is imported into; the order matters for administrators (first email wins). */
const IMPORTS: Array<[string, string]> = [
  ['current-quotes', 'quotes'],
  ['legacy-budget', 'budget'],
  ['current-flashcards', 'flashcards'],
  ['current-shifts', 'shifts'],
  ['legacy-market', 'market'],
];

function importCli(dir: string, source: string, ...args: string[]) {
  return runCli(['import', 'pocketbase', source, '--dir', dir, ...args], {}, 120_000);
}

async function freshDir(prefix: string): Promise<string> {
  const dir = mkdtempSync(path.join(tmpdir(), prefix));
  const res = await runCli(['admin', 'create', ADMIN_EMAIL, ADMIN_PASSWORD, '--dir', dir]);
  assert.equal(res.code, 0, res.stderr);
  return dir;
}

async function removeDir(dir: string): Promise<void> {
  rmSync(dir, { recursive: true, force: true });
  if (onPostgres) await dropDatabaseFor(dir);
}

/** Whether a PocketBase list field holds several values (PocketBase's own rule, per generation). */
function isMultiple(field: PbField, legacy: boolean): boolean {
  const max = field.options.maxSelect;
  if (field.type === 'relation' && legacy && (max === null || max === undefined)) return true;
  return typeof max === 'number' && max > 1;
}

/** What the record API must answer for a PocketBase stored value. */
function expected(field: PbField, raw: unknown, legacy: boolean): unknown {
  switch (field.type) {
    case 'number':
      return Number(raw ?? 0);
    case 'bool':
      return raw === 1 || raw === 'true';
    case 'date':
    case 'autodate':
      return typeof raw === 'string' && raw !== '' ? new Date(raw.replace(' ', 'T')).toISOString().replace('T', ' ') : '';
    case 'select':
    case 'relation':
    case 'file': {
      const list = typeof raw === 'string' && raw.startsWith('[') ? (JSON.parse(raw) as string[]) : raw ? [String(raw)] : [];
      return isMultiple(field, legacy) ? list : (list[0] ?? '');
    }
    case 'json':
    case 'geoPoint':
      return raw === null || raw === undefined || raw === '' ? null : JSON.parse(String(raw));
    default:
      return raw ?? '';
  }
}

const SYSTEM_FIELDS = new Set(['id', 'created', 'updated', 'password', 'tokenKey', 'email', 'emailVisibility', 'verified']);

async function allRecords(server: TestServer, db: string, collection: string): Promise<any[]> {
  const items: any[] = [];
  for (let page = 1; ; page++) {
    const res = await server.admin('GET', `/api/collections/${collection}/records?perPage=500&page=${page}`, { db });
    assert.equal(res.status, 200, res.text);
    items.push(...res.body.items);
    if (page >= res.body.totalPages) return items;
  }
}

describe('cairn import pocketbase: real PocketBase data of both generations', () => {
  let dir: string;
  let server: TestServer;
  const reports = new Map<string, string>();

  before(async () => {
    dir = await freshDir('cairn-import-');
    for (const [name, db] of IMPORTS) {
      const res = await importCli(dir, fixture(name), '--db', db);
      assert.equal(res.code, 0, `${name}: ${res.stderr}`);
      reports.set(name, res.stdout);
    }
    server = await startServer({ dir });
  });
  after(async () => {
    await server?.close();
    await removeDir(dir);
  });

  for (const [name, db] of IMPORTS) {
    test(`${name}: every collection and record as in PocketBase`, async () => {
      const source = PocketBaseSource.open(fixture(name));
      const legacy = source.generation === 'legacy';
      const raw = new Sqlite(path.join(fixture(name), 'data.db'), { readonly: true });
      try {
        const list = await server.admin('GET', '/api/collections?perPage=500', { db });
        assert.equal(list.status, 200, list.text);
        const byName = new Map<string, any>(list.body.items.map((c: any) => [c.name, c]));
        const wanted = source.collections().filter((c: PbCollection) => !c.system);
        for (const pb of wanted) {
          const c = byName.get(pb.name);
          assert.ok(c, `${name}: collection ${pb.name} is missing`);
          assert.equal(c.type, pb.type, `${pb.name} type`);
          for (const rule of ['listRule', 'viewRule'] as const) assert.equal(c[rule], pb[rule], `${pb.name}.${rule} carried verbatim`);
          if (pb.type === 'view') {
            const query = String(legacy ? pb.options.query : pb.options.viewQuery).replace(/;\s*$/, '');
            const count = (raw.prepare(`SELECT COUNT(*) AS n FROM (${query})`).get() as { n: number }).n;
            assert.equal((await allRecords(server, db, pb.name)).length, count, `${pb.name}: view rows`);
            continue;
          }
          if (!legacy) assert.equal(c.id, pb.id, `${pb.name}: collection id kept`);
          const records = new Map((await allRecords(server, db, pb.name)).map((r) => [r.id, r]));
          const rows = raw.prepare(`SELECT * FROM "${pb.name}" ORDER BY rowid`).all() as Record<string, unknown>[];
          assert.equal(records.size, rows.length, `${pb.name}: record count`);
          const fields = pb.fields.filter((f) => !(SYSTEM_FIELDS.has(f.name) && (f.system || f.type === 'autodate' || pb.type === 'auth')));
          for (const row of rows) {
            const record = records.get(row.id);
            assert.ok(record, `${pb.name}/${row.id} missing`);
            for (const column of ['created', 'updated']) {
              if (column in row) assert.equal(record[column], new Date(String(row[column]).replace(' ', 'T')).toISOString().replace('T', ' '), `${pb.name}/${row.id}.${column}`);
            }
            if (pb.type === 'auth') {
              assert.equal(record.email, row.email, `${pb.name}/${row.id}.email`);
              assert.equal(record.verified, row.verified === 1, `${pb.name}/${row.id}.verified`);
              assert.equal(record.emailVisibility, row.emailVisibility === 1, `${pb.name}/${row.id}.emailVisibility`);
              if (legacy) assert.equal(record.username, row.username, 'legacy username carried as a field');
            }
            for (const field of fields) {
              const key = field.name in record ? field.name : `${field.name}_field`;
              assert.deepEqual(record[key], expected(field, row[field.name], legacy), `${pb.name}/${row.id}.${field.name} (${field.type})`);
            }
          }
        }
      } finally {
        raw.close();
        source.close();
      }
    });
  }

  test('record files are served from Cairn with their content', async () => {
    let checked = 0;
    for (const [name, db] of IMPORTS) {
      // Protected fields (PocketBase's `protected` option is carried) need a file token.
      const token = (await server.admin('POST', '/api/files/token', { db })).body.token;
      const storage = path.join(fixture(name), 'storage');
      if (!existsSync(storage)) continue;
      const source = PocketBaseSource.open(fixture(name));
      const byId = new Map(source.collections().map((c) => [c.id, c.name]));
      source.close();
      for (const collectionId of readdirSync(storage)) {
        for (const recordId of readdirSync(path.join(storage, collectionId))) {
          for (const file of readdirSync(path.join(storage, collectionId, recordId))) {
            const res = await fetch(`${server.url}/api/files/${byId.get(collectionId)}/${recordId}/${file}?db=${db}&token=${token}`);
            assert.equal(res.status, 200, `${name}: ${collectionId}/${recordId}/${file}`);
            assert.deepEqual(Buffer.from(await res.arrayBuffer()), readFileSync(path.join(storage, collectionId, recordId, file)));
            checked++;
          }
        }
      }
    }
    assert.ok(checked > 100, `files checked: ${checked}`);
  });

  test('users sign in with their PocketBase password; the bcrypt hash becomes argon2id', async () => {
    const cases: Array<[string, string]> = [
      ['current-quotes', 'quotes'],
      ['legacy-budget', 'budget'],
      ['current-shifts', 'shifts'],
    ];
    for (const [name, db] of cases) {
      for (const [collection, accounts] of Object.entries(known(name).accounts)) {
        const account = accounts[0];
        const hashOf = () =>
          withDatabase(dir, db, async (q) => (await q.get<{ h: string }>(`SELECT "passwordHash" AS h FROM "${collection}" WHERE id = ?`, [account.id]))!.h);
        assert.match(await hashOf(), /^\$2[aby]\$/, 'imported as bcrypt');
        const wrong = await server.request('POST', `/api/collections/${collection}/auth-with-password`, { db, body: { identity: account.email, password: 'not-it' } });
        assert.equal(wrong.status, 401);
        assert.match(await hashOf(), /^\$2[aby]\$/, 'a wrong password changes nothing');
        const res = await server.request('POST', `/api/collections/${collection}/auth-with-password`, { db, body: { identity: account.email, password: account.password } });
        assert.equal(res.status, 200, `${name} ${collection}: ${res.text}`);
        assert.equal(res.body.record.id, account.id);
        assert.match(await hashOf(), /^\$argon2id\$/, 'rehashed with Cairn’s own function');
        const again = await server.request('POST', `/api/collections/${collection}/auth-with-password`, { db, body: { identity: account.email, password: account.password } });
        assert.equal(again.status, 200, 'the same password still works after the rehash');
        const me = await server.request('GET', `/api/collections/${collection}/records/${account.id}`, { db, token: res.body.token });
        assert.equal(me.status, 200, me.text);
      }
    }
  });

  test('administrators sign in with their PocketBase password (both generations), then with argon2id', async () => {
    for (const name of ['current-quotes', 'legacy-budget']) {
      const admin = known(name).administrators[0];
      const hashOf = () => withDatabase(dir, 'system', async (q) => (await q.get<{ h: string }>('SELECT passwordHash AS h FROM _admins WHERE email = ?', [admin.email]))!.h);
      assert.match(await hashOf(), /^\$2[aby]\$/);
      const res = await server.request('POST', '/api/admins/auth-with-password', { body: { identity: admin.email, password: admin.password } });
      assert.equal(res.status, 200, `${name}: ${res.text}`);
      assert.match(await hashOf(), /^\$argon2id\$/);
      const list = await server.request('GET', '/api/collections', { db: 'quotes', token: res.body.token });
      assert.equal(list.status, 200, 'an imported administrator administers');
      assert.equal((await server.request('POST', '/api/admins/auth-with-password', { body: { identity: admin.email, password: admin.password } })).status, 200);
    }
    // PocketBase's installer account (0.23+) and administrators whose email Cairn already has are not carried.
    const emails = await withDatabase(dir, 'system', (q) => q.all<{ email: string }>('SELECT email FROM _admins'));
    assert.ok(!emails.some((e) => e.email.startsWith('__pbinstaller')));
    assert.equal(new Set(emails.map((e) => e.email)).size, emails.length);
  });

  test('imported rules are enforced: @request.auth fields, @request.body on create, own-record rules', async () => {
    const account = known('current-quotes').accounts.app_users[0];
    const login = await server.request('POST', '/api/collections/app_users/auth-with-password', { db: 'quotes', body: { identity: account.email, password: account.password } });
    assert.equal(login.status, 200, login.text);
    const me = login.body.record;
    const raw = new Sqlite(path.join(fixture('current-quotes'), 'data.db'), { readonly: true });
    const tenants = raw.prepare('SELECT tenant FROM clientes').all() as { tenant: string }[];
    raw.close();
    const allowed = (t: string) => me.is_admin === true || me.tenant_default === t || (me.allowed_tenants as string[]).includes(t);
    const seen = await server.request('GET', '/api/collections/clientes/records?perPage=500', { db: 'quotes', token: login.body.token });
    assert.equal(seen.status, 200, seen.text);
    assert.equal(seen.body.totalItems, tenants.filter((t) => allowed(t.tenant)).length);
    const guest = await server.request('GET', '/api/collections/clientes/records', { db: 'quotes' });
    assert.equal(guest.body.totalItems ?? 0, 0, 'a guest sees no client');

    // createRule: @request.auth.tenant_default = @request.body.tenant || …
    const own = me.tenant_default || (me.allowed_tenants as string[])[0];
    // A copy of an existing tax (its required fields filled) in the user's own tenant.
    const template = (await allRecords(server, 'quotes', 'impuestos'))[0];
    const body = Object.fromEntries(Object.entries(template).filter(([k]) => !['id', 'created', 'updated', 'collectionId', 'collectionName'].includes(k)));
    const ok = await server.request('POST', '/api/collections/impuestos/records', { db: 'quotes', token: login.body.token, body: { ...body, tenant: own } });
    assert.equal(ok.status, 200, ok.text);
    if (me.is_admin !== true) {
      const values = (await server.admin('GET', '/api/collections/impuestos', { db: 'quotes' })).body.fields.find((f: any) => f.name === 'tenant').options.values as string[];
      const other = values.find((v) => !allowed(v));
      if (other) {
        const refused = await server.request('POST', '/api/collections/impuestos/records', { db: 'quotes', token: login.body.token, body: { ...body, tenant: other } });
        assert.ok(refused.status === 400 || refused.status === 403, refused.text);
      }
    }

    // legacy-budget: users see their own record only (id = @request.auth.id).
    const [first, second] = known('legacy-budget').accounts.users;
    const user = await server.request('POST', '/api/collections/users/auth-with-password', { db: 'budget', body: { identity: first.email, password: first.password } });
    assert.equal(user.status, 200, user.text);
    assert.equal((await server.request('GET', `/api/collections/users/records/${first.id}`, { db: 'budget', token: user.body.token })).status, 200);
    assert.equal((await server.request('GET', `/api/collections/users/records/${second.id}`, { db: 'budget', token: user.body.token })).status, 404);
  });

  test('OAuth2 links are carried to _externalAuths', async () => {
    for (const [name, db] of [['current-quotes', 'quotes'], ['legacy-budget', 'budget']]) {
      const source = PocketBaseSource.open(fixture(name));
      const links = source.externalAuths();
      source.close();
      const rows = await withDatabase(dir, db, (q) => q.all<{ recordId: string; provider: string; providerId: string }>('SELECT recordRef AS "recordId", provider, providerId FROM _externalAuths ORDER BY provider'));
      assert.equal(rows.length, links.length);
      assert.ok(links.length > 0);
      for (const link of links) assert.ok(rows.some((r) => r.recordId === link.recordId && r.provider === link.provider && r.providerId === link.providerId));
    }
  });

  test('the report lists collections, fields, records and files, and the largest fixture imports in under 10 s', () => {
    const report = reports.get('current-quotes')!;
    assert.match(report, /PocketBase 0\.23 or later/);
    assert.match(report, /control_movimientos \(base\): 18 fields, 763 records, 0 files/);
    assert.match(report, /espacios \(base\): \d+ fields, 40 records, 61 files/);
    assert.match(report, /Administrators carried: 3/);
    assert.match(report, /OAuth2 links carried: 2/);
    assert.match(report, /app_users: it has no "created" or "updated" field/);
    const seconds = Number(/Done in ([\d.]+) s/.exec(report)?.[1]);
    assert.ok(seconds < 10, `imported in ${seconds} s`);
    const legacy = reports.get('legacy-market')!;
    assert.match(legacy, /PocketBase before 0\.23/);
    assert.match(legacy, /users \(auth, replaces Cairn's default users\)/);
    assert.match(legacy, /user_manner_join_view \(view\)/);
    assert.match(legacy, /fields: username text,/, 'the username of every account before 0.23 is a field');
    assert.doesNotMatch(legacy, /allowUsernameAuth/, 'signing in with the username is carried, not reported as dropped');
    assert.match(reports.get('current-flashcards')!, /field16 geoPoint/);
  });
});

describe('cairn import pocketbase: refusals and dry runs change nothing', () => {
  let dir: string;
  before(async () => {
    dir = await freshDir('cairn-import-refused-');
  });
  after(() => removeDir(dir));

  /** What a refused or dry run must leave as it was. */
  async function state() {
    const storage = await openStorage(dir);
    try {
      const main = await storage.database('main');
      const collections = (await main.all<{ name: string }>('SELECT name FROM _collections ORDER BY name')).map((c) => c.name);
      const admins = (await storage.system.all<{ email: string }>('SELECT email FROM _admins ORDER BY email')).map((a) => a.email);
      const databases = (await storage.system.all<{ name: string }>('SELECT name FROM _databases ORDER BY name')).map((d) => d.name);
      const users = Number((await main.get<{ n: number }>('SELECT COUNT(*) AS n FROM users'))!.n);
      const files = existsSync(path.join(dir, 'storage')) ? readdirSync(path.join(dir, 'storage')).filter((f) => !f.startsWith('.')) : [];
      return { collections, admins, databases, users, files };
    } finally {
      await storage.close();
    }
  }

  test('a dry run prints the report and changes nothing', async () => {
    const before = await state();
    const res = await importCli(dir, fixture('current-quotes'), '--dry-run');
    assert.equal(res.code, 0, res.stderr);
    assert.match(res.stdout, /^Dry run: nothing was changed/);
    assert.match(res.stdout, /espacios \(base\): \d+ fields, 40 records, 61 files/);
    assert.match(res.stdout, /Administrators would be carried: 3/);
    assert.deepEqual(await state(), before);
    const other = await importCli(dir, fixture('legacy-market'), '--dry-run', '--db', 'elsewhere');
    assert.equal(other.code, 0, other.stderr);
    assert.match(other.stdout, /which would be created/);
    assert.deepEqual(await state(), before, 'no database made for a dry run');
  });

  test('a name the database already holds is refused before anything changes, naming it', async () => {
    const before = await state();
    // This PocketBase instance has a base collection named "users": Cairn's users is auth.
    const res = await importCli(dir, fixture('legacy-rentals'));
    assert.equal(res.code, 1);
    assert.match(res.stderr, /already holds a collection named "users"/);
    assert.deepEqual(await state(), before);

    const first = await importCli(dir, fixture('legacy-budget'));
    assert.equal(first.code, 0, first.stderr);
    const imported = await state();
    const again = await importCli(dir, fixture('legacy-budget'));
    assert.equal(again.code, 1);
    assert.match(again.stderr, /"users", "month"/);
    assert.deepEqual(await state(), imported);
    const records = await withDatabase(dir, 'main', (q) => q.get<{ n: number }>('SELECT COUNT(*) AS n FROM month'));
    assert.equal(Number(records!.n), 5);
  });

  test('a failure midway undoes everything: no collection, record, file, administrator or database is left', async () => {
    const copy = mkdtempSync(path.join(tmpdir(), 'cairn-import-broken-'));
    try {
      cpSync(fixture('current-quotes'), copy, { recursive: true });
      // Two accounts whose emails differ only in case: PocketBase took them, Cairn's emails are unique
      // whatever their case, so the copy fails once most of the data is written.
      const db = new Sqlite(path.join(copy, 'data.db'));
      const [a, b] = db.prepare('SELECT id, email FROM app_users ORDER BY rowid').all() as { id: string; email: string }[];
      db.prepare('UPDATE app_users SET email = ? WHERE id = ?').run(a.email.toUpperCase(), b.id);
      db.close();
      const before = await state();
      const res = await importCli(dir, copy, '--db', 'broken');
      assert.equal(res.code, 1);
      assert.match(res.stderr, /app_users/);
      assert.deepEqual(await state(), before);
      assert.ok(!existsSync(path.join(dir, 'storage', 'broken')) || readdirSync(path.join(dir, 'storage', 'broken')).length === 0, 'copied files removed');
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });

  test('a file that is not a PocketBase database is refused, saying so', async () => {
    const before = await state();
    const text = path.join(dir, 'notes.txt');
    writeFileSync(text, 'just some text, not a database\n'.repeat(100));
    let res = await importCli(dir, text);
    assert.equal(res.code, 1);
    assert.match(res.stderr, /is not an SQLite database/);
    const sqlite = path.join(dir, 'other.db');
    const other = new Sqlite(sqlite);
    other.exec('CREATE TABLE things (id TEXT)');
    other.close();
    res = await importCli(dir, sqlite);
    assert.equal(res.code, 1);
    assert.match(res.stderr, /not PocketBase's: it has no _collections table/);
    res = await importCli(dir, path.join(dir, 'missing', 'pb_data'));
    assert.equal(res.code, 1);
    assert.match(res.stderr, /no such file or directory/);
    rmSync(text);
    rmSync(sqlite);
    assert.deepEqual(await state(), before);
  });

  test('@request.data (PocketBase before 0.23) in an imported rule is enforced', async () => {
    const copy = mkdtempSync(path.join(tmpdir(), 'cairn-import-rule-'));
    try {
      cpSync(fixture('legacy-budget'), copy, { recursive: true });
      const db = new Sqlite(path.join(copy, 'data.db'));
      db.prepare("UPDATE _collections SET createRule = '@request.auth.id != \"\" && @request.data.budget > 0' WHERE name = 'month'").run();
      db.close();
      const res = await importCli(dir, copy, '--db', 'datarule');
      assert.equal(res.code, 0, res.stderr);
      const server = await startServer({ dir });
      try {
        const account = known('legacy-budget').accounts.users[0];
        const login = await server.request('POST', '/api/collections/users/auth-with-password', { db: 'datarule', body: { identity: account.email, password: account.password } });
        assert.equal(login.status, 200, login.text);
        const refused = await server.request('POST', '/api/collections/month/records', { db: 'datarule', token: login.body.token, body: { budget: 0 } });
        assert.ok(refused.status === 400 || refused.status === 403, refused.text);
        const ok = await server.request('POST', '/api/collections/month/records', { db: 'datarule', token: login.body.token, body: { budget: 10 } });
        assert.equal(ok.status, 200, ok.text);
      } finally {
        await server.close();
      }
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });

  test("PocketBase's users merged into Cairn's empty default users, a field of Cairn's name taking PocketBase's type", async () => {
    const copy = mkdtempSync(path.join(tmpdir(), 'cairn-import-role-'));
    try {
      cpSync(fixture('current-shifts'), copy, { recursive: true });
      // Cairn's users has a text `role`; here PocketBase's becomes a multiple select (a JSON column).
      const db = new Sqlite(path.join(copy, 'data.db'));
      const row = db.prepare("SELECT fields FROM _collections WHERE name = 'users'").get() as { fields: string };
      const fields = (JSON.parse(row.fields) as Array<Record<string, unknown>>).map((f) => (f.name === 'role' ? { ...f, maxSelect: 2 } : f));
      db.prepare("UPDATE _collections SET fields = ? WHERE name = 'users'").run(JSON.stringify(fields));
      db.prepare("UPDATE users SET role = json_array(role) WHERE role != ''").run();
      const roles = new Map((db.prepare('SELECT id, role FROM users').all() as { id: string; role: string }[]).map((r) => [r.id, JSON.parse(r.role || '[]')]));
      db.close();
      const res = await importCli(dir, copy, '--db', 'reshaped');
      assert.equal(res.code, 0, res.stderr);
      assert.match(res.stdout, /users \(auth, replaces Cairn's default users\)/);
      const server = await startServer({ dir });
      try {
        const users = await allRecords(server, 'reshaped', 'users');
        assert.equal(users.length, roles.size);
        for (const user of users) assert.deepEqual(user.role, roles.get(user.id), `role of ${user.id}`);
        const collection = await server.admin('GET', '/api/collections/users', { db: 'reshaped' });
        assert.equal(collection.body.system, false, "PocketBase's flag: the application's users, not Cairn's system collection");
        assert.equal(collection.body.schema.find((f: any) => f.name === 'role').options.maxSelect, 2);
        // The default auth routes keep working on the merged collection.
        const account = known('current-shifts').accounts.users[0];
        const login = await server.request('POST', '/api/collections/users/auth-with-password', { db: 'reshaped', body: { identity: account.email, password: account.password } });
        assert.equal(login.status, 200, login.text);
      } finally {
        await server.close();
      }
    } finally {
      rmSync(copy, { recursive: true, force: true });
    }
  });
});
