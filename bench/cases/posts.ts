import type BetterSqlite3 from 'better-sqlite3';
import type { FastifyInstance } from 'fastify';
import type { CairnClient } from '../case.ts';

/**
 * The collection the record cases work on: a few fields of the common types, rules open to everyone,
 * so both targets are called as guests and neither pays for authentication.
 */
export async function createPosts(cairn: Pick<CairnClient, 'admin'>, name: string): Promise<{ id: string }> {
  return cairn.admin('POST', '/api/collections', postsCollection(name));
}

/** The fields of the posts collection, every bench's record shape. */
export const POST_FIELDS = [
  { name: 'title', type: 'text', required: true, options: { max: 200 } },
  { name: 'body', type: 'editor' },
  { name: 'views', type: 'number' },
  { name: 'published', type: 'bool' },
];

/** The body that creates a posts collection named `name`, every rule open. */
export function postsCollection(name: string): Record<string, unknown> {
  return { name, type: 'base', fields: POST_FIELDS, listRule: '', viewRule: '', createRule: '', updateRule: '', deleteRule: '' };
}

export function post(i: number): Record<string, unknown> {
  return { title: `Post number ${i}`, body: `<p>Body of post ${i}, long enough to look like a short paragraph of text.</p>`, views: i % 1000, published: i % 2 === 0 };
}

export interface PostRow {
  id: string;
  created: string;
  updated: string;
  title: string;
  body: string;
  views: number;
  published: number;
}

/** The record JSON Cairn answers with, built by hand the way a bare endpoint would. */
export function postJson(row: PostRow, collectionId: string, collectionName: string) {
  return {
    id: row.id,
    collectionId,
    collectionName,
    created: row.created,
    updated: row.updated,
    title: row.title,
    body: row.body,
    views: row.views,
    published: row.published === 1,
  };
}

/** Collection id and name as the baseline must repeat them in each record (kept in a side table). */
export function rememberCollection(db: BetterSqlite3.Database, name: string, id: string): void {
  db.exec('CREATE TABLE IF NOT EXISTS bench_collections (name TEXT PRIMARY KEY, id TEXT NOT NULL)');
  db.prepare('INSERT OR REPLACE INTO bench_collections (name, id) VALUES (?, ?)').run(name, id);
}

export function collectionIdOf(db: BetterSqlite3.Database, name: string): string {
  const row = db.prepare('SELECT id FROM bench_collections WHERE name = ?').get(name) as { id: string } | undefined;
  if (!row) throw new Error(`bench collection ${name} was not prepared`);
  return row.id;
}

/**
 * The baseline's view by id of a posts collection: the same SELECT, the record JSON built by hand;
 * `shape` changes the answer (enrich cases).
 */
export function baselineView(app: FastifyInstance, db: BetterSqlite3.Database, name: string, shape = (record: ReturnType<typeof postJson>): object => record): void {
  const collectionId = collectionIdOf(db, name);
  const select = db.prepare(`SELECT id, created, updated, title, body, views, published FROM ${name} WHERE id = ?`);
  app.get<{ Params: { id: string } }>(`/api/collections/${name}/records/:id`, async (req, reply) => {
    const row = select.get(req.params.id) as PostRow | undefined;
    if (!row) return reply.status(404).send({ code: 404, message: 'Not found.', data: {} });
    return shape(postJson(row, collectionId, name));
  });
}

const USER_PASSWORD = 'bench-user-password';

/** A user registered and signed in through the API, with the bench's password. */
export async function signUp(cairn: CairnClient, email: string): Promise<{ id: string; token: string }> {
  const json = { 'content-type': 'application/json' };
  const registered = await fetch(`${cairn.url}/api/auth/register`, { method: 'POST', headers: json, body: JSON.stringify({ email, password: USER_PASSWORD, passwordConfirm: USER_PASSWORD }) });
  if (!registered.ok) throw new Error(`register answered ${registered.status}: ${await registered.text()}`);
  const login = await fetch(`${cairn.url}/api/auth/login`, { method: 'POST', headers: json, body: JSON.stringify({ email, password: USER_PASSWORD }) });
  if (!login.ok) throw new Error(`login answered ${login.status}: ${await login.text()}`);
  const body = (await login.json()) as { token: string; user: { id: string } };
  return { id: body.user.id, token: body.token };
}
