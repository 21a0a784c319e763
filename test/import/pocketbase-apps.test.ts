import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { dropDatabaseFor, onPostgres } from '../helpers/postgres.ts';
import { runCli } from '../helpers/process.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startServer, type TestServer } from '../helpers/server.ts';
import { appFiles, checksums, PB_APPS, pocketbaseToken, readPocketBase } from './pb-fixtures.ts';

/**
 * The five real applications' PocketBase files (`../shared/fixtures/pocketbase-apps`), each imported
 * into a database of its own and compared with the source, read here with better-sqlite3: every
 * collection (type, id, rules, fields with their types and options, indexes with their uniqueness,
 * auth options), every record (id, dates, every value) and every sign-in origin as the API answers
 * them.
 */

type Row = Record<string, unknown>;
type PbField = Record<string, unknown> & { id: string; name: string; type: string };

const SYSTEM = new Set(['id', 'password', 'tokenKey', 'email', 'emailVisibility', 'verified']);
const FAR = 2524604461;

/** A PocketBase field with its options in one object (before 0.23 they are nested in `options`). */
function flat(field: Row, legacy: boolean): PbField {
  return (legacy ? { ...(field.options as Row), ...field, options: undefined } : field) as PbField;
}

// A PocketBase date as Cairn answers it: normalised to milliseconds, written as PocketBase writes dates (§23).
const iso = (v: unknown) => (typeof v === 'string' && v !== '' ? new Date(v.replace(' ', 'T')).toISOString().replace('T', ' ') : '');

function isMultiple(f: PbField, legacy: boolean): boolean {
  const max = f.maxSelect;
  if (f.type === 'relation' && legacy && (max === null || max === undefined)) return true;
  return typeof max === 'number' && max > 1;
}

function listOf(raw: unknown): string[] {
  if (typeof raw === 'string' && raw.startsWith('[')) return JSON.parse(raw) as string[];
  return raw ? [String(raw)] : [];
}

/** What the record API answers for a PocketBase stored value. */
function expectedValue(f: PbField, raw: unknown, legacy: boolean): unknown {
  switch (f.type) {
    case 'number':
      return Number(raw ?? 0);
    case 'bool':
      return raw === 1 || raw === 'true';
    case 'date':
    case 'autodate':
      return iso(raw);
    case 'select':
    case 'relation':
    case 'file':
      return isMultiple(f, legacy) ? listOf(raw) : (listOf(raw)[0] ?? '');
    case 'json': {
      if (raw === null || raw === undefined || raw === '') return null;
      try {
        return JSON.parse(String(raw));
      } catch {
        // Text that is not JSON (written there by other means) is kept as a JSON string.
        return String(raw);
      }
    }
    case 'geoPoint':
      return raw ? JSON.parse(String(raw)) : { lon: 0, lat: 0 };
    default:
      return raw ?? '';
  }
}

const nonEmpty = (v: unknown) => (Array.isArray(v) ? v : []);

/** The options Cairn must hold for a PocketBase field, in Cairn's names. */
function expectedOptions(f: PbField, legacy: boolean, idOf: (pbId: string) => string | undefined): Row {
  const int = (v: unknown) => (typeof v === 'number' && v !== 0 ? v : null);
  switch (f.type) {
    case 'text':
      return { min: int(f.min), max: int(f.max), pattern: f.pattern ?? '', ...(f.autogeneratePattern ? { autogeneratePattern: f.autogeneratePattern } : {}) };
    case 'editor':
      return { convertUrls: f.convertURLs === true || f.convertUrls === true, ...(typeof f.maxSize === 'number' && f.maxSize > 0 ? { maxSize: f.maxSize } : {}) };
    case 'number':
      return { min: f.min ?? null, max: f.max ?? null, noDecimal: f.onlyInt === true || f.noDecimal === true };
    case 'email':
    case 'url':
      return { exceptDomains: nonEmpty(f.exceptDomains), onlyDomains: nonEmpty(f.onlyDomains) };
    case 'date':
      return { min: f.min ?? '', max: f.max ?? '' };
    case 'autodate':
      return { onCreate: f.onCreate === true, onUpdate: f.onUpdate === true };
    case 'select':
      return { values: f.values, maxSelect: isMultiple(f, legacy) ? f.maxSelect : 1 };
    case 'json':
      return { maxSize: typeof f.maxSize === 'number' && f.maxSize > 0 ? f.maxSize : 2_000_000 };
    case 'file':
      return {
        maxSelect: isMultiple(f, legacy) ? f.maxSelect : 1,
        mimeTypes: nonEmpty(f.mimeTypes),
        thumbs: nonEmpty(f.thumbs),
        protected: f.protected === true,
        ...(typeof f.maxSize === 'number' && f.maxSize > 0 ? { maxSize: f.maxSize } : {}),
      };
    case 'relation':
      return {
        collectionId: idOf(String(f.collectionId)),
        cascadeDelete: f.cascadeDelete === true,
        maxSelect: isMultiple(f, legacy) ? (f.maxSelect ?? null) : 1,
        minSelect: int(f.minSelect),
      };
    default:
      return {};
  }
}

/** An index as a comparable shape: uniqueness, table, columns and condition, quoting left out. */
function indexShape(sql: string): string {
  const m = /^\s*CREATE\s+(UNIQUE\s+)?INDEX\s+(?:IF\s+NOT\s+EXISTS\s+)?\S+\s+ON\s+(.*)$/is.exec(sql);
  assert.ok(m, `an index: ${sql}`);
  return `${m[1] ? 'unique ' : ''}${m[2].replace(/[`"[\]]/g, '').replace(/\s+/g, ' ').trim().toLowerCase()}`;
}

async function allRecords(server: TestServer, db: string, collection: string): Promise<Row[]> {
  const items: Row[] = [];
  for (let page = 1; ; page++) {
    const res = await server.admin('GET', `/api/collections/${collection}/records?perPage=500&page=${page}`, { db });
    assert.equal(res.status, 200, res.text);
    items.push(...res.body.items);
    if (page >= res.body.totalPages) return items;
  }
}

const dbName = (file: string) => file.replace(/\.db$/, '').replace(/[^a-z0-9]+/g, '_');

describe('cairn import pocketbase: five real applications, collection by collection and record by record', () => {
  let dir: string;
  let server: TestServer;
  const reports = new Map<string, string>();
  const before_ = new Map<string, Map<string, string>>();

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'cairn-pbapps-'));
    const res = await runCli(['admin', 'create', ADMIN_EMAIL, ADMIN_PASSWORD, '--dir', dir]);
    assert.equal(res.code, 0, res.stderr);
    before_.set('apps', checksums(PB_APPS));
    for (const file of appFiles()) {
      const imported = await runCli(['import', 'pocketbase', path.join(PB_APPS, file), '--db', dbName(file), '--dir', dir], {}, 120_000);
      assert.equal(imported.code, 0, `${file}: ${imported.stderr}`);
      reports.set(file, imported.stdout);
    }
    server = await startServer({ dir });
  });
  after(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
    if (onPostgres) await dropDatabaseFor(dir);
  });

  test('the application files are left byte for byte, with nothing beside them', () => {
    assert.deepEqual(checksums(PB_APPS), before_.get('apps'));
  });

  for (const file of appFiles()) {
    test(`${file}: every collection and record as in PocketBase`, async () => {
      const db = dbName(file);
      const source = readPocketBase(path.join(PB_APPS, file));
      try {
        const legacy = !(source.prepare("SELECT name FROM pragma_table_info('_collections')").all() as Row[]).some((c) => c.name === 'fields');
        // Left behind only what is not there to carry: files the fixture does not ship (its storage/ is
        // not part of it), and administrators whose email an earlier import here already brought.
        const report = reports.get(file)!;
        const left = (report.split('Not carried:\n')[1] ?? '').split('\n\n')[0].split('\n').filter((l) => l.trim() !== '');
        for (const line of left) assert.match(line, /files its records name are not in|Cairn already has an administrator with that email|holds no token secret/, report);
        const pbCollections = (source.prepare('SELECT * FROM _collections').all() as Row[]).filter((c) => !String(c.name).startsWith('_'));
        const list = await server.admin('GET', '/api/collections?perPage=500', { db });
        const byName = new Map<string, Row>(list.body.items.map((c: Row) => [c.name, c]));
        const idOf = (pbId: string) => pbCollections.find((c) => c.id === pbId)?.id as string | undefined;
        for (const pb of pbCollections) {
          const name = String(pb.name);
          const c = byName.get(name);
          assert.ok(c, `${file}: ${name} carried`);
          assert.equal(c.type, pb.type, `${name}: type`);
          assert.equal(c.id, pb.id, `${name}: PocketBase's collection id`);
          for (const rule of ['listRule', 'viewRule', 'createRule', 'updateRule', 'deleteRule']) assert.equal(c[rule], pb[rule], `${name}.${rule} verbatim`);
          const options = JSON.parse(String(pb.options || '{}')) as Row;
          const fields = (JSON.parse(String(legacy ? pb.schema : pb.fields)) as Row[]).map((f) => flat(f, legacy));

          // Fields: type, flags and options.
          // ≥ 0.23's field (flags, flat options) with v0.22's options of the same field beside it.
          const legacyOptions = new Map((c.schema as Row[]).map((f) => [f.name as string, f.options as Row]));
          const cairnFields = new Map((c.fields as Row[]).map((f) => [f.name as string, { ...f, options: { ...f, ...legacyOptions.get(f.name as string) } } as Row]));
          for (const f of fields) {
            if (SYSTEM.has(f.name) && (f.system === true || c.type === 'auth')) continue;
            if ((f.name === 'created' || f.name === 'updated') && f.type === 'autodate') continue;
            const cf = cairnFields.get(f.name);
            assert.ok(cf, `${name}.${f.name}: carried under its own name`);
            assert.equal(cf.type, f.type, `${name}.${f.name}: type`);
            assert.equal(cf.required, f.required === true, `${name}.${f.name}: required`);
            assert.equal(cf.hidden, f.hidden === true, `${name}.${f.name}: hidden`);
            assert.equal(cf.presentable, f.presentable === true, `${name}.${f.name}: presentable`);
            assert.equal(cf.help, typeof f.help === 'string' ? f.help : '', `${name}.${f.name}: help`);
            const got = cf.options as Row;
            // An empty list is PocketBase's null or [] alike (Cairn answers null, as PocketBase's Go does for none).
            const same = (v: unknown) => (Array.isArray(v) && v.length === 0 ? null : v);
            for (const [key, value] of Object.entries(expectedOptions(f, legacy, idOf))) assert.deepEqual(same(got[key]), same(value), `${name}.${f.name}: option ${key}`);
          }
          if (c.type === 'view') continue;

          // created/updated: PocketBase's autodate definitions (0.23+), kept with their ids.
          if (!legacy) {
            const system = new Map((c.fields as Row[]).map((f) => [f.name, f]));
            for (const f of fields.filter((x) => x.type === 'autodate' && (x.name === 'created' || x.name === 'updated'))) {
              assert.deepEqual(system.get(f.name), { ...f }, `${name}.${f.name}: PocketBase's autodate definition`);
            }
          }

          // Indexes, uniqueness included (names starting with "_" are renamed).
          const indexes = JSON.parse(String(pb.indexes || '[]')) as string[];
          assert.deepEqual((c.indexes as string[]).map(indexShape).sort(), indexes.map(indexShape).sort(), `${name}: indexes`);

          // Auth options.
          if (c.type === 'auth') {
            if (legacy) {
              const identities = [...(options.allowEmailAuth !== false ? ['email'] : []), ...(options.allowUsernameAuth === true ? ['username'] : [])];
              assert.deepEqual(c.passwordAuth, { enabled: identities.length > 0, identityFields: identities }, `${name}: password sign-in`);
              assert.equal((c.oauth2 as Row).enabled, options.allowOAuth2Auth !== false);
              assert.equal(c.manageRule, options.manageRule ?? null);
              assert.equal(c.authRule, options.onlyVerified === true ? 'verified = true' : '');
            } else {
              for (const key of ['authRule', 'manageRule', 'passwordAuth', 'mfa']) assert.deepEqual(c[key], options[key], `${name}.${key}`);
              const otp = options.otp as Row;
              assert.deepEqual(c.otp, { enabled: otp.enabled, duration: otp.duration, length: otp.length, emailTemplate: otp.emailTemplate }, `${name}.otp`);
              for (const kind of ['authToken', 'passwordResetToken', 'emailChangeToken', 'verificationToken', 'fileToken']) {
                assert.deepEqual(c[kind], { duration: (options[kind] as Row).duration }, `${name}.${kind}: the duration, never the secret`);
              }
              for (const key of ['verificationTemplate', 'resetPasswordTemplate', 'confirmEmailChangeTemplate']) assert.deepEqual(c[key], options[key], `${name}.${key}`);
              assert.equal((c.oauth2 as Row).enabled, (options.oauth2 as Row).enabled);
            }
          }

          // Records: ids, dates, every value.
          const records = new Map((await allRecords(server, db, name)).map((r) => [r.id as string, r]));
          const rows = source.prepare(`SELECT * FROM "${name}" ORDER BY rowid`).all() as Row[];
          assert.equal(records.size, rows.length, `${name}: records`);
          for (const row of rows) {
            const record = records.get(row.id as string);
            assert.ok(record, `${name}/${row.id}`);
            for (const column of ['created', 'updated']) if (column in row) assert.equal(record[column], iso(row[column]), `${name}/${row.id}.${column}`);
            if (c.type === 'auth') {
              assert.equal(record.email, row.email, `${name}/${row.id}.email`);
              assert.equal(record.verified, row.verified === 1, `${name}/${row.id}.verified`);
              assert.equal(record.emailVisibility, row.emailVisibility === 1, `${name}/${row.id}.emailVisibility`);
              if (legacy) assert.equal(record.username, row.username, `${name}/${row.id}.username`);
            }
            for (const f of fields) {
              if (SYSTEM.has(f.name) && (f.system === true || c.type === 'auth')) continue;
              if ((f.name === 'created' || f.name === 'updated') && f.type === 'autodate') continue;
              assert.deepEqual(record[f.name], expectedValue(f, row[f.name], legacy), `${name}/${row.id}.${f.name} (${f.type})`);
            }
          }
        }

        // Sign-in origins (0.23+): every row of a carried account, with its id, account, fingerprint and
        // dates; a superuser's is carried with the superuser (not when an earlier import brought the email).
        if (!legacy) {
          const superusersId = (source.prepare("SELECT id FROM _collections WHERE name = '_superusers'").get() as Row).id;
          const carried = new Map((await allRecords(server, db, '_authOrigins')).map((r) => [r.id as string, r]));
          let expectedCount = 0;
          for (const o of source.prepare('SELECT * FROM _authOrigins').all() as Row[]) {
            const got = carried.get(o.id as string);
            if (o.collectionRef === superusersId && (await server.admin('GET', `/api/collections/_superusers/records/${o.recordRef}`)).status !== 200) {
              assert.equal(got, undefined, `_authOrigins/${o.id}: its superuser was not carried`);
              continue;
            }
            expectedCount++;
            assert.ok(got, `${file}: _authOrigins/${o.id} carried`);
            assert.deepEqual(
              [got.collectionRef, got.recordRef, got.fingerprint, got.created, got.updated],
              [o.collectionRef, o.recordRef, o.fingerprint, iso(o.created), iso(o.updated)],
              `_authOrigins/${o.id}`,
            );
          }
          assert.equal(carried.size, expectedCount, `${file}: _authOrigins rows`);
        }
      } finally {
        source.close();
      }
    });
  }

  test("an account signed in to the PocketBase app stays signed in: PocketBase's token works on Cairn", async () => {
    let checked = 0;
    for (const file of appFiles()) {
      const source = readPocketBase(path.join(PB_APPS, file));
      try {
        if ((source.prepare("SELECT name FROM pragma_table_info('_collections')").all() as Row[]).every((c) => c.name !== 'fields')) continue;
        for (const c of source.prepare("SELECT id, name, options FROM _collections WHERE type = 'auth' AND name NOT LIKE '\\_%' ESCAPE '\\'").all() as Row[]) {
          const account = source.prepare(`SELECT id, tokenKey FROM "${c.name}" LIMIT 1`).get() as Row | undefined;
          if (!account) continue;
          const secret = (JSON.parse(String(c.options)).authToken as Row).secret as string;
          const token = pocketbaseToken({ id: account.id, type: 'auth', collectionId: c.id, exp: FAR, refreshable: true }, String(account.tokenKey) + secret);
          const refreshed = await server.request('POST', `/api/collections/${c.name}/auth-refresh`, { db: dbName(file), token });
          assert.equal(refreshed.status, 200, `${file} ${c.name}: ${refreshed.text}`);
          assert.equal(refreshed.body.record.id, account.id);
          checked++;
        }
      } finally {
        source.close();
      }
    }
    assert.ok(checked >= 2, `accounts checked: ${checked}`);
  });
});
