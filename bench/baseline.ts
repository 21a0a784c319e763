// The bare baseline: Fastify and better-sqlite3 with nothing in between, serving each case's route
// from a copy of Cairn's tables, with the same SQLite pragmas as Cairn's driver.
// Usage (by bench/run.ts): node --import tsx bench/baseline.ts --db FILE --port N
import BetterSqlite3 from 'better-sqlite3';
import Fastify from 'fastify';
import { parseArgs } from 'node:util';
import { PRAGMAS } from '../src/storage/sqlite/driver.ts';
import { cases } from './cases/index.ts';

const { values } = parseArgs({ options: { db: { type: 'string' }, port: { type: 'string' }, cases: { type: 'string' } } });
if (!values.db || !values.port) throw new Error('usage: baseline.ts --db FILE --port N [--cases a,b]');

const db = new BetterSqlite3(values.db);
for (const pragma of PRAGMAS) db.pragma(pragma);

const app = Fastify({ logger: false });
app.get('/api/health', async () => ({ code: 200, message: 'API is healthy.', data: {} }));
const wanted = values.cases === undefined ? undefined : new Set(values.cases.split(','));
for (const c of cases) if (!wanted || wanted.has(c.name)) c.baseline(app, db);

const stop = async () => {
  await app.close();
  db.close();
  process.exit(0);
};
process.on('SIGTERM', () => void stop());
process.on('SIGINT', () => void stop());
await app.listen({ host: '127.0.0.1', port: Number(values.port) });
