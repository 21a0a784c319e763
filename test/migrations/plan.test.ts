// storage-independent: nothing here opens a database; run in the first pass only (scripts/run-tests.mjs).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import type { Collection } from '../../src/collections/model.ts';
import { normalizeCollection } from '../../src/collections/normalize.ts';
import type { DatabaseSchema, InstanceSchema } from '../../src/migrations/model.ts';
import { planDatabase, planMigration } from '../../src/migrations/plan.ts';
import { migrationToYaml, parseMigrationText } from '../../src/migrations/schema-file.ts';
import { transformDatabase } from '../../src/migrations/transform.ts';
import { isVersion, nextVersion } from '../../src/migrations/versions.ts';

const ctx = { validateRule: () => undefined, validateOptions: [] };

/** Collections made by the collections layer itself, relations resolved against the earlier ones. */
function schema(bodies: Record<string, unknown>[], fts: DatabaseSchema['fts'] = {}): DatabaseSchema {
  const list: Collection[] = [];
  for (const body of bodies) {
    const find = (n: string) => list.find((c) => c.name.toLowerCase() === n.toLowerCase() || c.id === n);
    list.push(normalizeCollection(body, undefined, { find, validateRule: () => undefined, validateOptions: [] }));
  }
  return { collections: list, fts };
}

/** What a schema means, without per-instance ids and timestamps. */
function meaning(s: DatabaseSchema) {
  return {
    fts: s.fts,
    collections: s.collections
      .map((c) => ({
        name: c.name,
        type: c.type,
        rules: [c.listRule, c.viewRule, c.createRule, c.updateRule, c.deleteRule],
        indexes: c.indexes,
        query: c.options.query,
        fields: c.fields.map(({ id: _id, ...f }) => ({ ...f, options: { ...f.options, collectionId: undefined } })),
      }))
      .sort((a, b) => a.name.localeCompare(b.name)),
  };
}

const text = (name: string, options: Record<string, unknown> = {}) => ({ name, type: 'text', options });
const posts = (fields: unknown[], extra: Record<string, unknown> = {}) => ({ name: 'posts', type: 'base', fields, ...extra });

describe('migration planner', () => {
  test('a field dropped and re-added under the same name with another definition is dropped and added', () => {
    const from = schema([posts([text('title'), text('body')])]);
    const to = schema([posts([{ name: 'title', type: 'number' }, text('body')])]);
    const ops = planDatabase(from, to);
    assert.deepEqual(Object.keys(ops), ['posts']);
    assert.deepEqual(ops.posts.drop_columns, ['title']);
    assert.equal(ops.posts.add_columns?.length, 1);
    assert.equal(ops.posts.add_columns?.[0].name, 'title');
    assert.equal(ops.posts.add_columns?.[0].type, 'number');
    assert.equal(ops.posts.create_table, undefined);

    // Applied to the old schema, the field is redefined; applied where it was generated, nothing changes.
    assert.deepEqual(meaning(transformDatabase('main', from, ops, ctx)), meaning(to));
    assert.deepEqual(meaning(transformDatabase('main', to, ops, ctx)), meaning(to));
  });

  test('a field re-added with the same definition (a new id) is no change', () => {
    const from = schema([posts([text('title', { max: 10 })])]);
    const to = schema([posts([text('title', { max: 10 })])]);
    assert.notEqual(from.collections[0].fields[0].id, to.collections[0].fields[0].id);
    assert.deepEqual(planDatabase(from, to), {});
  });

  test('a collection dropped and re-created as another type is dropped and created', () => {
    const from = schema([posts([text('title')])]);
    const to = schema([posts([text('title')], { type: 'auth' })]);
    const ops = planDatabase(from, to);
    assert.equal(ops.posts.drop_table, true);
    assert.equal(ops.posts.create_table?.type, 'auth');
    assert.deepEqual(meaning(transformDatabase('main', from, ops, ctx)), meaning(to));
  });

  test('a relation to a collection created in the same migration resolves, whatever the file order', () => {
    const to = schema([
      { name: 'authors', type: 'base', fields: [text('name')] },
      posts([text('title'), { name: 'author', type: 'relation', options: { toCollection: 'authors' } }]),
    ]);
    const ops = planDatabase({ collections: [], fts: {} }, to);
    assert.deepEqual(Object.keys(ops).sort(), ['authors', 'posts']);
    const relation = ops.posts.create_table!.schema.find((f) => f.name === 'author')!;
    assert.equal(relation.options?.toCollection, 'authors');
    assert.equal(relation.options?.collectionId, undefined, 'ids are per instance; files name the target');

    const reversed = { posts: ops.posts, authors: ops.authors };
    const result = transformDatabase('main', { collections: [], fts: {} }, reversed, ctx);
    const authors = result.collections.find((c) => c.name === 'authors')!;
    const author = result.collections.find((c) => c.name === 'posts')!.fields.find((f) => f.name === 'author')!;
    assert.equal(author.options.collectionId, authors.id);
    assert.deepEqual(meaning(result), meaning(to));
  });

  test('a relation to a collection the migration drops is refused', () => {
    const from = schema([{ name: 'authors', type: 'base', fields: [text('name')] }, posts([{ name: 'author', type: 'relation', options: { toCollection: 'authors' } }])]);
    assert.throws(() => transformDatabase('main', from, { authors: { drop_table: true } }, ctx), /relation field "author" points at "authors"/);
  });

  test('rules-only changes give update_rules and nothing else', () => {
    const from = schema([posts([text('title')], { listRule: null, viewRule: '' })]);
    const to = schema([posts([text('title')], { listRule: 'title != ""', viewRule: '' })]);
    const ops = planDatabase(from, to);
    assert.deepEqual(ops, { posts: { update_rules: { list: 'title != ""', view: '', create: null, update: null, delete: null } } });
    assert.deepEqual(meaning(transformDatabase('main', from, ops, ctx)), meaning(to));
  });

  test('rules are checked with the collection rule validator', () => {
    const from = schema([posts([text('title')])]);
    const strict = { validateRule: (_c: Collection, rule: string) => (rule.includes('nope') ? 'unknown field "nope"' : undefined), validateOptions: [] };
    assert.throws(() => transformDatabase('main', from, { posts: { update_rules: { list: 'nope = 1' } } }, strict), /listRule: unknown field "nope"/);
  });

  test('rules are checked against the whole result, collections created alongside included', () => {
    const seen: string[][] = [];
    const recording = {
      validateRule: (_c: Collection, rule: string, others: readonly Collection[]) => {
        seen.push(others.map((o) => o.name).sort());
        return rule.includes('@collection.authors') && !others.some((o) => o.name === 'authors') ? 'unknown collection "authors"' : undefined;
      },
      validateOptions: [],
    };
    const result = transformDatabase(
      'main',
      schema([posts([text('title')])]),
      {
        authors: { create_table: { name: 'authors', type: 'base', schema: [text('name')] } },
        posts: { update_rules: { list: '@collection.authors.name ?= "x"' } },
      },
      recording,
    );
    assert.equal(result.collections.find((c) => c.name === 'posts')!.listRule, '@collection.authors.name ?= "x"');
    assert.deepEqual(seen, [['authors', 'posts']]);
  });

  test('only the database that changed appears', () => {
    const main = schema([posts([text('title')])]);
    const from: InstanceSchema = { main, analytics: schema([{ name: 'events', type: 'base', fields: [text('kind')] }]) };
    const to: InstanceSchema = { main, analytics: schema([{ name: 'events', type: 'base', fields: [text('kind'), { name: 'count', type: 'number' }] }]) };
    const plan = planMigration(from, to);
    assert.deepEqual(Object.keys(plan), ['analytics']);
    assert.deepEqual(plan.analytics.collections.events.add_columns?.map((f) => f.name), ['count']);
  });

  test('indexes, views and full-text indexes are planned', () => {
    const from = schema([posts([text('title'), text('body')])]);
    const to = schema([posts([text('title'), text('body')], { indexes: ['CREATE INDEX idx_title ON posts (title)'] })], { posts: { fields: ['title', 'body'] } });
    to.collections.push({ ...to.collections[0], id: 'v'.repeat(15), name: 'titles', type: 'view', fields: [], indexes: [], options: { query: 'SELECT id, title FROM posts' } });
    const ops = planDatabase(from, to);
    assert.deepEqual(ops.posts.add_indexes, [{ name: 'idx_title', sql: 'CREATE INDEX idx_title ON posts (title)' }]);
    assert.deepEqual(ops.posts.create_fts, { fields: ['title', 'body'] });
    assert.deepEqual(ops.titles.create_views, [{ name: 'titles', sql: 'SELECT id, title FROM posts' }]);
    const back = planDatabase(to, from);
    assert.deepEqual(back.posts, { drop_indexes: ['idx_title'], drop_fts: true });
    assert.deepEqual(back.titles, { drop_views: ['titles'] });
  });

  test('dropping a field a full-text index uses is refused unless the index goes too', () => {
    const from = schema([posts([text('title'), text('body')])], { posts: { fields: ['title', 'body'] } });
    assert.throws(() => transformDatabase('main', from, { posts: { drop_columns: ['body'] } }, ctx), /full-text index uses "body"/);
    const ok = transformDatabase('main', from, { posts: { drop_columns: ['body'], drop_fts: true, create_fts: { fields: ['title'] } } }, ctx);
    assert.deepEqual(ok.fts, { posts: { fields: ['title'] } });
  });

  test('system and auth columns are handled automatically', () => {
    const result = transformDatabase(
      'main',
      { collections: [], fts: {} },
      { members: { create_table: { name: 'members', type: 'auth', schema: [{ name: 'id', type: 'text' }, { name: 'email', type: 'email' }, { name: 'nick', type: 'text' }] } } },
      ctx,
    );
    assert.deepEqual(result.collections[0].fields.map((f) => f.name), ['nick']);
    assert.throws(() => transformDatabase('main', result, { members: { drop_columns: ['created'] } }, ctx), /system column/);
  });

  test('a generated file survives the trip through YAML', () => {
    const to = schema([{ name: 'authors', type: 'base', fields: [text('name')] }, posts([{ name: 'author', type: 'relation', options: { toCollection: 'authors' } }])]);
    const migration = { version: '20240102_030405_006', name: 'init', created_at: '2024-01-02T03:04:05.006Z', databases: planMigration({}, { main: to }) };
    assert.deepEqual(parseMigrationText(migrationToYaml(migration)).migration, migration);
  });
});

describe('migration files', () => {
  test('malformed YAML is a 400 with line and column', () => {
    const yaml = 'version: 20240102_030405_006\nname: x\ndatabases:\n  main: [unclosed\n';
    assert.throws(
      () => parseMigrationText(yaml),
      (err: any) => {
        assert.equal(err.status, 400);
        assert.match(err.message, /line \d+, column \d+/);
        assert.equal(typeof err.data.yaml.line, 'number');
        assert.equal(typeof err.data.yaml.column, 'number');
        return true;
      },
    );
  });

  test('an unknown operation names itself and where it is', () => {
    const yaml = ['version: 20240102_030405_006', 'name: x', 'databases:', '  main:', '    collections:', '      posts:', '        rename_column: [a, b]', ''].join('\n');
    assert.throws(
      () => parseMigrationText(yaml),
      (err: any) => {
        assert.equal(err.status, 400);
        assert.match(err.message, /line 7, column 9/);
        assert.match(err.message, /unknown operation "rename_column"/);
        assert.deepEqual([err.data.yaml.line, err.data.yaml.column], [7, 9]);
        return true;
      },
    );
  });

  test('a wrongly shaped value points at the value', () => {
    const yaml = ['name: x', 'databases:', '  main:', '    collections:', '      posts:', '        drop_columns: title', ''].join('\n');
    assert.throws(() => parseMigrationText(yaml), /line 6, column 23.*drop_columns must be a list/);
  });

  test('hostile YAML is a 400: alias bombs, several documents, tagged non-mappings', () => {
    const levels = ['a0: &a0 [x, x, x, x, x, x, x, x, x, x]'];
    for (let i = 1; i < 10; i++) levels.push(`a${i}: &a${i} [${Array(10).fill(`*a${i - 1}`).join(', ')}]`);
    assert.throws(() => parseMigrationText(levels.join('\n')), (err: any) => err.status === 400 && /alias/i.test(err.message));
    assert.throws(() => parseMigrationText('name: a\n---\nname: b\n'), (err: any) => err.status === 400 && /line 2/.test(err.message));
    const binary = 'name: x\ndatabases: {main: {collections: {p: {add_columns: [{name: t, type: text, options: !!binary aGVsbG8=}]}}}}\n';
    assert.throws(() => parseMigrationText(binary), (err: any) => err.status === 400 && /options must be a mapping/.test(err.message));
  });

  test('a version that is not YYYYMMDD_HHMMSS_mmm is refused', () => {
    assert.throws(() => parseMigrationText('version: 2024-01-02\nname: x\n'), /line 1, column 10.*YYYYMMDD_HHMMSS_mmm/);
    assert.throws(() => parseMigrationText('version: 20241302_030405_006\nname: x\n'), /YYYYMMDD_HHMMSS_mmm/);
  });

  test('versions are UTC timestamps that move to the next free millisecond', () => {
    const at = Date.UTC(2024, 0, 2, 3, 4, 5, 998);
    assert.equal(nextVersion(() => false, at), '20240102_030405_998');
    const taken = new Set(['20240102_030405_998', '20240102_030405_999']);
    assert.equal(nextVersion((v) => taken.has(v), at), '20240102_030406_000');
    assert.equal(isVersion('20240102_030406_000'), true);
    assert.equal(isVersion('20240230_000000_000'), false);
  });
});
