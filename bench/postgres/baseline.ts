// The bare PostgreSQL baseline: Fastify and the same `pg` client and pool size as Cairn, running the
// same SQL as Cairn against the same tables (Cairn's `main` schema), with nothing in between.
// Usage (by bench/postgres/run.ts): node --import tsx bench/postgres/baseline.ts --url URL --port N
import Fastify from 'fastify';
import pg from 'pg';
import { parseArgs } from 'node:util';
import { randomId } from '../../src/lib/ids.ts';
import { PG_CASES } from './cases.ts';

const { values } = parseArgs({ options: { url: { type: 'string' }, port: { type: 'string' }, pool: { type: 'string' }, cases: { type: 'string' } } });
if (!values.url || !values.port) throw new Error('usage: baseline.ts --url URL --port N [--pool N]');

// Integers and booleans read as Cairn's driver reads them (numbers, 1/0), JSON left as text.
const pool = new pg.Pool({ connectionString: values.url, max: Number(values.pool ?? 10), options: '-c search_path=main' });
const app = Fastify({ logger: false });
app.get('/api/health', async () => ({ code: 200, message: 'API is healthy.', data: {} }));

const COLUMNS = 'id, created, updated, title, body, views, published';
interface Row {
  id: string;
  created: string;
  updated: string;
  title: string;
  body: string;
  views: number;
  published: boolean;
}
const json = (r: Row, collectionId: string, name: string) => ({
  id: r.id,
  collectionId,
  collectionName: name,
  created: r.created,
  updated: r.updated,
  title: r.title,
  body: r.body,
  views: r.views,
  published: r.published,
});

const selected = values.cases ? PG_CASES.filter((c) => values.cases!.split(',').includes(c.name)) : PG_CASES;
const ids = new Map<string, string>();
for (const c of selected) {
  const found = await pool.query<{ id: string }>('SELECT id FROM _collections WHERE name = $1', [c.collection]);
  ids.set(c.collection, found.rows[0].id);
}

for (const c of selected) {
  const name = c.collection;
  const collectionId = ids.get(name)!;
  if (c.kind === 'create') {
    app.post(`/api/collections/${name}/records`, async (req) => {
      const input = req.body as { title: string; body: string; views: number; published: boolean };
      const now = new Date().toISOString();
      const res = await pool.query<Row>({
        name: `create_${name}`,
        text: `INSERT INTO "${name}" (id, created, updated, title, body, views, published) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
        values: [randomId(), now, now, input.title, input.body, input.views, input.published],
      });
      return json(res.rows[0], collectionId, name);
    });
  } else if (c.kind === 'batch') {
    // The same inserts in one transaction, the same list of answers.
    app.post('/api/batch', async (req) => {
      const { requests } = req.body as { requests: Array<{ body: { title: string; body: string; views: number; published: boolean } }> };
      const client = await pool.connect();
      try {
        await client.query('BEGIN');
        const out = [];
        for (const r of requests) {
          const now = new Date().toISOString();
          const res = await client.query<Row>({
            name: `create_${name}`,
            text: `INSERT INTO "${name}" (id, created, updated, title, body, views, published) VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING ${COLUMNS}`,
            values: [randomId(), now, now, r.body.title, r.body.body, r.body.views, r.body.published],
          });
          out.push({ status: 200, body: json(res.rows[0], collectionId, name) });
        }
        await client.query('COMMIT');
        return out;
      } catch (err) {
        await client.query('ROLLBACK');
        throw err;
      } finally {
        client.release();
      }
    });
  } else if (c.kind === 'view') {
    app.get<{ Params: { id: string } }>(`/api/collections/${name}/records/:id`, async (req, reply) => {
      const res = await pool.query<Row>({ name: `view_${name}`, text: `SELECT ${COLUMNS} FROM "${name}" t0 WHERE t0.id = $1`, values: [req.params.id] });
      if (res.rows.length === 0) return reply.status(404).send({ code: 404, message: 'Not found.', data: {} });
      return json(res.rows[0], collectionId, name);
    });
  } else {
    app.get<{ Querystring: { page?: string; perPage?: string } }>(`/api/collections/${name}/records`, async (req) => {
      const page = Math.max(1, Number(req.query.page) || 1);
      const perPage = Math.min(500, Number(req.query.perPage) || 30);
      const rows = await pool.query<Row>({
        name: `list_${name}`,
        text: `SELECT ${COLUMNS} FROM "${name}" t0 ORDER BY t0.created DESC, t0."_seq" LIMIT $1 OFFSET $2`,
        values: [perPage, (page - 1) * perPage],
      });
      const count = await pool.query<{ n: string }>({ name: `count_${name}`, text: `SELECT COUNT(*) AS n FROM "${name}" t0` });
      const totalItems = Number(count.rows[0].n);
      return { page, perPage, totalItems, totalPages: Math.ceil(totalItems / perPage), items: rows.rows.map((r) => json(r, collectionId, name)) };
    });
  }
}

const stop = async () => {
  await app.close();
  await pool.end();
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
await app.listen({ host: '127.0.0.1', port: Number(values.port) });
