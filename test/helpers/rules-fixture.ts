import { driverEnv } from './postgres.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildServices, type Services } from '../../src/app.ts';
import type { Collection } from '../../src/collections/model.ts';
import { type Auth, GUEST, type RequestContext, type RequestInfo, systemContext } from '../../src/context.ts';
import { serializeRecord } from '../../src/records/serialize.ts';
import { shapeOf } from '../../src/records/shape.ts';
import { PRIVILEGED_VIEWER } from '../../src/records/viewer.ts';
import { RuleProgram } from '../../src/rules/access/program.ts';
import { RuleAccess, scopeOf } from '../../src/rules/access/rule-access.ts';
import { compileFilter } from '../../src/rules/index.ts';
import type { Database } from '../../src/storage/index.ts';
import type { Sql } from '../../src/storage/sql.ts';
import { testConfig } from './server.ts';

/**
 * Real services on a temporary data directory with a small schema for compiling filters and rules
 * and running them against SQLite: teams, users (with teams, manager, role), posts, comments.
 */
export interface RulesFixture {
  services: Services;
  db: Database;
  ids: Record<string, string>;
  access: RuleAccess;
  collection(name: string): Promise<Collection>;
  /** A request context for `auth`, with optional request parts. */
  ctx(auth?: Auth, request?: Partial<RequestInfo>): RequestContext;
  /** The signed-in user `name` (alice, bob, carol) as the authenticator builds it. */
  user(name: string): Promise<Auth>;
  /** The `title`/`name` values of the records of `collection` matching `where`, in insertion order. */
  matching(collection: string, where: Sql | null): Promise<string[]>;
  /** A caller's filter, compiled as the records layer does (an administrator by default). */
  filter(collection: string, text: string, ctx?: RequestContext): Promise<string[]>;
  /** A rule, compiled as saved and evaluated for `ctx`. */
  rule(collection: string, text: string, ctx: RequestContext): Promise<string[]>;
  close(): Promise<void>;
}

const ADMIN: Auth = { type: 'admin', id: 'admin0000000000', email: 'admin@example.com' };

export async function rulesFixture(): Promise<RulesFixture> {
  const dir = mkdtempSync(path.join(tmpdir(), 'cairn-rules-'));
  const services = await buildServices(testConfig(dir, await driverEnv(dir)));
  const db = await services.registry.get('main');
  const { collections } = services;
  const system = systemContext('main', db);
  const access = new RuleAccess();
  const ids: Record<string, string> = {};

  await collections.create(db, { name: 'teams', fields: [{ name: 'name', type: 'text' }, { name: 'active', type: 'bool' }] });
  const users = await collections.get(db, 'users');
  await collections.update(db, 'users', {
    fields: [
      ...users.fields,
      { name: 'teams', type: 'relation', options: { toCollection: 'teams', maxSelect: null } },
      { name: 'manager', type: 'relation', options: { toCollection: 'users' } },
    ],
  });
  await collections.create(db, {
    name: 'posts',
    fields: [
      { name: 'title', type: 'text' },
      { name: 'views', type: 'number' },
      { name: 'published', type: 'bool' },
      { name: 'author', type: 'relation', options: { toCollection: 'users' } },
      { name: 'editors', type: 'relation', options: { toCollection: 'users', maxSelect: null } },
      { name: 'tags', type: 'select', options: { values: ['news', 'tech', 'fun'], maxSelect: 3 } },
      { name: 'meta', type: 'json' },
      { name: 'due', type: 'date' },
      { name: 'secret', type: 'text', hidden: true },
    ],
  });
  await collections.create(db, {
    name: 'comments',
    fields: [
      { name: 'post', type: 'relation', options: { toCollection: 'posts' } },
      { name: 'text', type: 'text' },
      { name: 'author', type: 'relation', options: { toCollection: 'users' } },
    ],
  });

  const create = async (collection: string, key: string, data: Record<string, unknown>) => {
    const c = await collections.get(db, collection);
    const record = (await services.records.create(system, c, data)) as { id: string };
    ids[key] = record.id;
  };
  await create('teams', 'red', { name: 'red', active: true });
  await create('teams', 'blue', { name: 'blue', active: false });
  // Users are written directly: hashing three passwords would only slow the tests down.
  const now = new Date().toISOString();
  const userRows: Array<[string, string, string, boolean, string[], string]> = [
    ['carol', 'carol@example.com', '', false, [], ''],
    ['bob', 'bob@example.com', 'viewer', false, [ids.blue, ids.red], 'carol'],
    ['alice', 'alice@example.com', 'editor', true, [ids.red], 'bob'],
  ];
  for (const [name, email, role, visible, teams, manager] of userRows) {
    ids[name] = `${name.padEnd(5, 'x')}0000000000`;
    await db.run(
      'INSERT INTO users (id, created, updated, email, emailVisibility, verified, passwordHash, tokenKey, name, avatar, role, teams, manager) VALUES (?, ?, ?, ?, ?, FALSE, ?, ?, ?, ?, ?, ?, ?)',
      [ids[name], now, now, email, visible ? 1 : 0, 'unused', `key-${name}`, name, '', role, JSON.stringify(teams), manager ? ids[manager] : ''],
    );
  }
  await create('posts', 'hello', {
    title: 'Hello',
    views: 10,
    published: true,
    author: ids.alice,
    editors: [ids.bob],
    tags: ['news'],
    meta: { a: { b: 1 }, list: [1, 2] },
    due: '2024-01-01 10:00:00.000Z',
    secret: 's1',
  });
  await create('posts', 'second', {
    title: 'Second',
    views: 20,
    published: false,
    author: ids.bob,
    editors: [ids.alice, ids.carol],
    tags: ['news', 'tech'],
    meta: { a: { b: 2 } },
    due: '2030-01-01 00:00:00.000Z',
  });
  await create('posts', 'third', { title: 'Third 50%_off', views: 0, published: true, author: ids.carol });
  await create('posts', 'quote', { title: `It's "quoted" \\ here`, views: 5, author: ids.alice, tags: ['fun'] });
  await create('comments', 'c1', { post: ids.hello, text: 'nice', author: ids.bob });
  await create('comments', 'c2', { post: ids.hello, text: 'meh', author: ids.carol });
  await create('comments', 'c3', { post: ids.second, text: 'great', author: ids.alice });

  const request = (r: Partial<RequestInfo> = {}): RequestInfo => ({ method: 'GET', headers: {}, query: {}, body: {}, ip: '127.0.0.1', ...r });

  const fixture: RulesFixture = {
    services,
    db,
    ids,
    access,
    collection: (name) => collections.get(db, name),
    ctx: (auth = GUEST, r) => ({ dbName: 'main', db, auth, request: request(r) }),
    async user(name) {
      const c = await collections.get(db, 'users');
      const shape = shapeOf(c);
      const row = await db.get<Record<string, unknown>>(`SELECT ${shape.selectList} FROM users t0 WHERE t0.id = ?`, [ids[name]]);
      return { type: 'record', id: ids[name], collectionId: c.id, collectionName: c.name, record: serializeRecord(row!, shape, PRIVILEGED_VIEWER) };
    },
    async matching(collection, where) {
      const c = await collections.get(db, collection);
      const label = c.fields.some((f) => f.name === 'title') ? 'title' : c.fields.some((f) => f.name === 'text') ? 'text' : 'name';
      const text = `SELECT t0."${label}" AS label FROM "${c.name}" t0${where ? ` WHERE ${where.text}` : ''} ORDER BY ${db.dialect.insertionOrder('t0')}`;
      return (await db.all<{ label: string }>(text, where?.params ?? [])).map((r) => r.label);
    },
    async filter(collection, text, ctx = fixture.ctx(ADMIN)) {
      const c = await collections.get(db, collection);
      const set = await collections.all(db);
      return fixture.matching(collection, compileFilter(text, access.filterResolver(ctx, c, set), { dialect: db.dialect }));
    },
    async rule(collection, text, ctx) {
      const c = await collections.get(db, collection);
      const set = await collections.all(db);
      return fixture.matching(collection, RuleProgram.build(text, scopeOf(c, set), db.dialect).condition(ctx));
    },
    async close() {
      await services.registry.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return fixture;
}

export { ADMIN };
