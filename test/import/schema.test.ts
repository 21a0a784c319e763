// storage-independent: nothing here opens a database; run in the first pass only (scripts/run-tests.mjs).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { draftCollection, standardQuotes, type TargetInfo } from '../../src/import/schema.ts';
import type { PbCollection, PbField } from '../../src/import/source.ts';
import { toDate, toJson, toList, toSingle } from '../../src/import/values.ts';

// The pure half of the import: PocketBase's stored collections and values → Cairn's.

const field = (name: string, type: string, options: Record<string, unknown> = {}): PbField => ({
  id: `f_${name}`, name, type, system: false, required: false, presentable: false, hidden: false, unique: false, options, raw: { name, type, ...options },
});

function collection(fields: PbField[], extra: Partial<PbCollection> = {}): PbCollection {
  return {
    id: 'c1', name: 'things', type: 'base', system: false, fields, indexes: [], listRule: null, viewRule: null,
    createRule: null, updateRule: null, deleteRule: null, options: {}, created: '', updated: '', ...extra,
  };
}

const targets = new Map<string, TargetInfo>([
  ['_pb_users_auth_', { name: 'users', type: 'auth' }],
  ['v1', { name: 'a_view', type: 'view' }],
]);

test('values: PocketBase dates become ISO, lists and JSON keep their values', () => {
  assert.equal(toDate('2024-01-02 03:04:05.678Z'), '2024-01-02T03:04:05.678Z');
  assert.equal(toDate(''), '');
  assert.equal(toDate('not a date'), '');
  assert.equal(toList('["a","b"]'), '["a","b"]');
  assert.equal(toList('a'), '["a"]', 'a single value left from before the field held several');
  assert.equal(toList(''), '[]');
  assert.equal(toSingle('["a","b"]'), 'a');
  assert.equal(toJson('{"x":1}'), '{"x":1}');
  assert.equal(toJson('null'), null);
  assert.equal(toJson('{oops'), '"{oops"', 'text that is not JSON is kept as a JSON string');
});

test('legacy: a relation without maxSelect holds several; username becomes a field', () => {
  const draft = draftCollection(
    collection([field('friends', 'relation', { collectionId: '_pb_users_auth_', maxSelect: null }), field('best', 'relation', { collectionId: '_pb_users_auth_', maxSelect: 1 })], { type: 'auth', name: 'users' }),
    { generation: 'legacy', targets, indexNames: new Set() },
  );
  const byName = new Map(draft.fields.map((f) => [f.body.name, f]));
  assert.equal((byName.get('friends')!.body.options as { maxSelect: unknown }).maxSelect, null);
  assert.equal((byName.get('best')!.body.options as { maxSelect: unknown }).maxSelect, 1);
  assert.equal((byName.get('friends')!.body.options as { toCollection: unknown }).toCollection, 'users');
  assert.ok(byName.has('username'));
  assert.equal(draft.system.get('passwordHash')!.source, 'passwordHash');
});

test('0.23+: flat options, autodate, geoPoint, a base collection\'s own email, unknown types and view targets', () => {
  const draft = draftCollection(
    collection([
      field('id', 'text', { primaryKey: true }),
      field('tags', 'select', { maxSelect: 2, values: ['a', 'b'] }),
      field('kind', 'select', { maxSelect: 1, values: ['a'] }),
      field('count', 'number', { onlyInt: true, min: 0, max: null }),
      field('seen', 'autodate', { onCreate: true }),
      field('where', 'geoPoint'),
      field('email', 'email'),
      field('odd', 'vector'),
      field('v', 'relation', { collectionId: 'v1', maxSelect: 1 }),
      field('created', 'autodate', { onCreate: true }),
    ]),
    { generation: 'current', targets, indexNames: new Set() },
  );
  const byName = new Map(draft.fields.map((f) => [f.body.name, f.body]));
  assert.ok(!byName.has('id') && !byName.has('created'), 'system fields are columns, not fields');
  assert.deepEqual(byName.get('tags')!.options, { values: ['a', 'b'], maxSelect: 2 });
  assert.equal((byName.get('kind')!.options as { maxSelect: number }).maxSelect, 1);
  assert.equal((byName.get('count')!.options as { noDecimal: boolean }).noDecimal, true);
  assert.equal(byName.get('seen')!.type, 'autodate');
  assert.deepEqual(byName.get('seen')!.options, { onCreate: true, onUpdate: false });
  assert.equal(byName.get('where')!.type, 'geoPoint');
  assert.equal(byName.get('email')!.type, 'email', 'a base collection keeps its own email field under its name');
  assert.ok(!byName.has('email_field'));
  assert.ok(!byName.has('odd') && !byName.has('v'));
  const why = draft.notes.map((n) => `${n.what}: ${n.why}`).join('\n');
  assert.match(why, /things\.odd: not carried: Cairn has no "vector" field type/);
  assert.match(why, /things\.v: not carried: it points at the view "a_view"/);
  assert.match(why, /no "updated" field/);
  assert.ok(draft.system.has('created') && !draft.system.has('updated'));
});

test('0.23+: an auth collection\'s sign-in alert is carried as it is, without a note (Cairn sends the mail)', () => {
  const authAlert = { enabled: true, emailTemplate: { subject: 'New sign-in', body: '<p>{ALERT_INFO}</p>' } };
  const draft = draftCollection(collection([field('email', 'email')], { type: 'auth', name: 'members', options: { authAlert } }), {
    generation: 'current',
    targets,
    indexNames: new Set(),
  });
  assert.deepEqual(draft.options.authAlert, authAlert);
  assert.deepEqual(draft.notes.filter((n) => n.what.includes('authAlert')), []);
});

test('indexes: names starting with "_" are renamed (never dropped), uniqueness and the rest kept', () => {
  const taken = new Set(['pb_x_username_idx']);
  const draft = draftCollection(
    collection([field('username', 'text')], {
      indexes: ['CREATE UNIQUE INDEX `_x_username_idx` ON `things` (username)', 'CREATE INDEX `idx_plain` ON `things` (`created`)'],
    }),
    { generation: 'current', targets, indexNames: taken },
  );
  assert.deepEqual(draft.indexes, ['CREATE UNIQUE INDEX "pb_x_username_idx_2" ON "things" (username)', 'CREATE INDEX "idx_plain" ON "things" ("created")']);
  assert.match(draft.notes.map((n) => n.why).join('\n'), /index "_x_username_idx" renamed "pb_x_username_idx_2"/);
  assert.equal(draft.notes.find((n) => n.why.includes('renamed'))!.kind, 'renamed');
});

test('indexes: backquotes become double quotes, string literals stay', () => {
  assert.equal(standardQuotes("CREATE UNIQUE INDEX `idx_a` ON `t` (`b`) WHERE `c` != 'x`y'"), `CREATE UNIQUE INDEX "idx_a" ON "t" ("b") WHERE "c" != 'x\`y'`);
});
