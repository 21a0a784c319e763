// storage-independent: the generated types depend only on the collections' definitions, which every other file reads on both drivers; run in the first pass only (scripts/run-tests.mjs).
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { driverEnv, dropDatabaseFor, onPostgres } from '../helpers/postgres.ts';
import { runCli } from '../helpers/process.ts';
import { startServer } from '../helpers/server.ts';
import { everyFieldType, scratchDir, typeCheck } from './helpers.ts';

const REPO = fileURLToPath(new URL('../..', import.meta.url));

const USAGE = `
import PocketBase from 'pocketbase';
import type { RecordService } from 'pocketbase';
import type { CollectionRecords, PostsCreate, PostsRecord, PostsUpdate, TypedPocketBase, UsersCreate, UsersRecord } from './types';

const pb = new PocketBase('http://127.0.0.1:8090') as TypedPocketBase;

export async function use(): Promise<void> {
  const posts: RecordService<PostsRecord> = pb.collection('posts');
  const post = await posts.getOne('abc', { expand: 'author' });
  const title: string = post.title;
  const views: number = post.views;
  const published: boolean = post.published;
  const status: 'draft' | 'live' | '' = post.status;
  const flags: Array<'a' | 'b' | 'c'> = post.flags;
  const author: string = post.author;
  const tags: string[] = post.tags;
  const cover: string = post.cover;
  const gallery: string[] = post.gallery;
  const meta: unknown = post.meta;
  const hidden: string | undefined = post.secret_note;
  const name: 'posts' = post.collectionName;
  // @ts-expect-error: no such field
  post.nope;
  void [title, views, published, status, flags, author, tags, cover, gallery, meta, hidden, name];

  const page = await pb.collection('posts').getList(1, 20, { filter: 'views > 1' });
  const first: PostsRecord | undefined = page.items[0];
  void first;

  const create: PostsCreate = { title: 'hello', views: 2, status: 'live', flags: ['a', 'c'], tags: ['t1'], meta: { any: 'thing' } };
  const created = await pb.collection('posts').create<PostsRecord>(create);
  const update: PostsUpdate = { views: 3 };
  await pb.collection('posts').update<PostsRecord>(created.id, update);
  // @ts-expect-error: title is required
  const noTitle: PostsCreate = { views: 1 };
  // @ts-expect-error: views is a number
  const wrong: PostsUpdate = { views: 'many' };
  // @ts-expect-error: not one of the select's values
  const archived: PostsUpdate = { status: 'archived' };
  void [noTitle, wrong, archived];

  const user: UsersRecord = await pb.collection('users').getOne('u');
  const verified: boolean = user.verified;
  const signUp: UsersCreate = { email: 'a@b.co', password: 'p', passwordConfirm: 'p', name: 'A' };
  void [verified, signUp];
  const byName: CollectionRecords['blog_entries'] = await pb.collection('blog_entries').getOne('x');
  const n: number = byName.n;
  void n;
  // Any other name still works, untyped.
  await pb.collection('unknown').getOne('x');
}
`;

describe('cairn typegen', () => {
  let dir: string;
  let env: Record<string, string>;
  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'cairn-typegen-'));
    const server = await startServer({ dir });
    await everyFieldType(server);
    await server.admin('POST', '/api/databases', { body: { name: 'other' } });
    await server.close();
    env = await driverEnv(dir);
  });
  after(async () => {
    rmSync(dir, { recursive: true, force: true });
    if (onPostgres) await dropDatabaseFor(dir);
  });

  test('writes types that compile with the PocketBase SDK (strict)', async () => {
    const scratch = scratchDir();
    try {
      const out = path.join(scratch, 'types.ts');
      const run = await runCli(['typegen', '--dir', dir, '--out', out], env);
      assert.equal(run.code, 0, run.stderr);
      const types = readFileSync(out, 'utf8');
      for (const name of ['PostsRecord', 'PostsCreate', 'PostsUpdate', 'UsersRecord', 'TagsRecord', 'BlogEntriesRecord', 'interface TypedPocketBase']) assert.ok(types.includes(name), name);
      assert.doesNotMatch(types, /passwordHash|tokenKey/);
      assert.deepEqual(typeCheck(scratch, { 'types.ts': types, 'use.ts': USAGE }), []);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });

  test("where the cairn package is installed, the types also type hooks' e.record by collection name", async () => {
    const scratch = scratchDir();
    try {
      // An application directory with the package installed (here: this repository, built).
      mkdirSync(path.join(scratch, 'node_modules'));
      symlinkSync(REPO, path.join(scratch, 'node_modules', 'cairn'), 'dir');
      const out = path.join(scratch, 'types.ts');
      const run = await runCli(['typegen', '--dir', dir, '--out', out], env);
      assert.equal(run.code, 0, run.stderr);
      const types = readFileSync(out, 'utf8');
      assert.match(types, /declare module 'cairn' \{\n  interface CollectionRecords \{\n[^}]*    posts: PostsRecord;/);
      const hooks = `
import './types';
import { defineHooks } from 'cairn';
export default defineHooks((app) => {
  app.onRecordCreate(async (e) => {
    const title: string = e.record.title;
    const views: number = e.record.views;
    // @ts-expect-error: title is a string
    const wrong: number = e.record.title;
    void [title, views, wrong];
    await e.next();
  }, 'posts');
  app.onRecordUpdate(async (e) => {
    const untyped: unknown = e.record.anything;
    void untyped;
    await e.next();
  });
});
`;
      assert.deepEqual(typeCheck(scratch, { 'types.ts': types, 'hooks.ts': hooks }), []);
      // Without the package there, the declaration would not compile: it is left out.
      const bare = scratchDir();
      try {
        const plain = await runCli(['typegen', '--dir', dir, '--out', path.join(bare, 'types.ts')], env);
        assert.equal(plain.code, 0, plain.stderr);
        assert.doesNotMatch(readFileSync(path.join(bare, 'types.ts'), 'utf8'), /declare module 'cairn'/);
      } finally {
        rmSync(bare, { recursive: true, force: true });
      }
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });

  test('--db picks the database; standard output without --out; an unknown database is an error', async () => {
    const other = await runCli(['typegen', '--dir', dir, '--db', 'other'], env);
    assert.equal(other.code, 0, other.stderr);
    assert.match(other.stdout, /export type UsersRecord/);
    assert.doesNotMatch(other.stdout, /export type PostsRecord/);
    const missing = await runCli(['typegen', '--dir', dir, '--db', 'nope'], env);
    assert.equal(missing.code, 1);
    assert.match(missing.stderr, /Database "nope" not found/);
  });
});

/** PocketBase's "Export collections" JSON in its 0.23 shape: system fields listed, options flat. */
const EXPORT_023 = [
  {
    id: 'pbc_3142635823',
    name: '_superusers',
    type: 'auth',
    system: true,
    fields: [
      { name: 'id', type: 'text', system: true, primaryKey: true },
      { name: 'password', type: 'password', system: true, hidden: true },
      { name: 'email', type: 'email', system: true },
      { name: 'created', type: 'autodate', system: true },
    ],
  },
  {
    id: 'pbc_1',
    name: 'articles',
    type: 'base',
    fields: [
      { name: 'id', type: 'text', system: true, primaryKey: true },
      { name: 'title', type: 'text', required: true, max: 100 },
      { name: 'state', type: 'select', values: ['draft', 'live'], maxSelect: 1 },
      { name: 'labels', type: 'select', values: ['x', 'y'], maxSelect: 2 },
      { name: 'writers', type: 'relation', collectionId: '_pb_users_auth_', maxSelect: 5 },
      { name: 'updated', type: 'autodate', onUpdate: true, system: true },
    ],
  },
];

/** The same collection as PocketBase 0.22 exports it: `schema`, options nested. */
const EXPORT_022 = [
  {
    id: 'abc123def456ghi',
    name: 'articles',
    type: 'base',
    schema: [
      { name: 'title', type: 'text', required: true, options: { max: 100 } },
      { name: 'state', type: 'select', options: { values: ['draft', 'live'], maxSelect: 1 } },
      { name: 'labels', type: 'select', options: { values: ['x', 'y'], maxSelect: 2 } },
      { name: 'writers', type: 'relation', options: { collectionId: '_pb_users_auth_', maxSelect: 5 } },
    ],
  },
];

const EXPORT_USAGE = `
import PocketBase from 'pocketbase';
import type { ArticlesCreate, ArticlesRecord, TypedPocketBase } from './types';

const pb = new PocketBase('http://127.0.0.1:8090') as TypedPocketBase;

export async function use(): Promise<void> {
  const a: ArticlesRecord = await pb.collection('articles').getOne('x');
  const state: 'draft' | 'live' | '' = a.state;
  const labels: Array<'x' | 'y'> = a.labels;
  const writers: string[] = a.writers;
  // @ts-expect-error: no such field
  a.updated2;
  const create: ArticlesCreate = { title: 't' };
  void [state, labels, writers, create];
}
`;

describe('cairn typegen --from a PocketBase export', () => {
  test('reads both shapes alike; the types compile with SDK 0.21 and SDK 0.28', async () => {
    const scratch = scratchDir();
    try {
      const outputs: string[] = [];
      for (const [name, data] of [['export-023.json', EXPORT_023], ['export-022.json', EXPORT_022]] as const) {
        const file = path.join(scratch, name);
        writeFileSync(file, JSON.stringify(data));
        const run = await runCli(['typegen', '--from', file]);
        assert.equal(run.code, 0, run.stderr);
        assert.match(run.stdout, new RegExp(`PocketBase export "${name}"`));
        outputs.push(run.stdout.replace(/^.*PocketBase export.*$/m, ''));
      }
      const articles = (text: string) => /export type ArticlesRecord = [\s\S]*?\n};/.exec(text)![0];
      assert.equal(articles(outputs[0]), articles(outputs[1]), 'the same record type from either shape');
      assert.match(outputs[0], /SuperusersRecord/);
      assert.doesNotMatch(articles(outputs[0]), /updated2|password/);
      assert.deepEqual(typeCheck(scratch, { 'types.ts': outputs[0], 'use.ts': EXPORT_USAGE }), []);
      const for028 = (text: string) => text.replaceAll("from 'pocketbase'", "from 'pocketbase-0.28'");
      assert.deepEqual(typeCheck(scratch, { 'types.ts': for028(outputs[0]), 'use.ts': for028(EXPORT_USAGE) }), []);

      writeFileSync(path.join(scratch, 'bad.json'), '{"nope": 1}');
      const bad = await runCli(['typegen', '--from', path.join(scratch, 'bad.json')]);
      assert.equal(bad.code, 1);
      assert.match(bad.stderr, /expected a JSON array of collections/);
    } finally {
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});
