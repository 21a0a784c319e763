import type BetterSqlite3 from 'better-sqlite3';
import type { FastifyInstance } from 'fastify';
import { randomId } from '../../src/lib/ids.ts';
import type { BenchCase } from '../case.ts';
import { collectionIdOf, createPosts, post, type PostRow, postJson, rememberCollection } from './posts.ts';

const NAME = 'bench_create';

/** The baseline's create endpoint for a posts table: the insert and the record JSON back. */
export function baselineCreate(app: FastifyInstance, db: BetterSqlite3.Database, name: string): void {
  const collectionId = collectionIdOf(db, name);
  const insert = db.prepare(
    `INSERT INTO ${name} (id, created, updated, title, body, views, published) VALUES (?, ?, ?, ?, ?, ?, ?) RETURNING id, created, updated, title, body, views, published`,
  );
  app.post(`/api/collections/${name}/records`, async (req) => {
    const input = req.body as { title: string; body: string; views: number; published: boolean };
    const now = new Date().toISOString();
    const row = insert.get(randomId(), now, now, input.title, input.body, input.views, input.published ? 1 : 0) as PostRow;
    return postJson(row, collectionId, name);
  });
}

/** POST a record: validation, insert and the record JSON back. */
export const createCase: BenchCase = {
  name: 'create',
  description: 'create a record (POST, 4 fields)',
  target: 0.5,

  async prepare(ctx) {
    const collection = await createPosts(ctx.cairn, NAME);
    ctx.copyToBaseline(NAME);
    rememberCollection(ctx.baseline, NAME, collection.id);
  },

  baseline: (app, db) => baselineCreate(app, db, NAME),

  request: () => ({ method: 'POST', paths: [`/api/collections/${NAME}/records`], body: post(7), expectStatus: 200 }),
};
