import { createHash } from 'node:crypto';
import pg from 'pg';

/**
 * The PostgreSQL pass of the test suite. `scripts/run-tests.mjs` runs every test twice: once on SQLite,
 * once with CAIRN_TEST_POSTGRES set to a server URL. Then each data directory a test uses gets its own
 * PostgreSQL database (named after the directory, so a server restarted on the same directory finds
 * its data again), created on first use and dropped when the test's server is done with it; the
 * runner drops whatever a crashed test left behind (every name carries the run's id).
 */
export const PG_SERVER_URL = process.env.CAIRN_TEST_POSTGRES;
export const onPostgres = PG_SERVER_URL !== undefined && PG_SERVER_URL !== '';
const RUN = process.env.CAIRN_TEST_RUN ?? 'local';

/** For tests about one driver only: `test('…', { skip: skipOn('postgres', 'why') }, …)`. */
export function skipOn(driver: 'sqlite' | 'postgres', why: string): string | false {
  // The message names the driver the test is for: the other one.
  return (driver === 'postgres') === onPostgres ? `${driver === 'postgres' ? 'sqlite' : 'postgres'} only: ${why}` : false;
}

export function databaseNameFor(dir: string): string {
  return `cairn_t_${RUN}_${createHash('sha1').update(dir).digest('hex').slice(0, 16)}`;
}

function urlOf(database: string): string {
  const url = new URL(PG_SERVER_URL!);
  url.pathname = `/${database}`;
  return url.toString();
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: PG_SERVER_URL });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** The URL of the directory's database, created when missing. */
export async function databaseUrlFor(dir: string): Promise<string> {
  const name = databaseNameFor(dir);
  await admin(async (c) => {
    const found = await c.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) {
      try {
        await c.query(`CREATE DATABASE "${name}"`);
      } catch (err) {
        if ((err as { code?: string }).code !== '42P04') throw err;
      }
    }
  });
  return urlOf(name);
}

/** Runs `fn` with a client of the directory's database. */
export async function withDatabase<T>(dir: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: await databaseUrlFor(dir) });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export async function dropDatabaseFor(dir: string): Promise<void> {
  await admin((c) => c.query(`DROP DATABASE IF EXISTS "${databaseNameFor(dir)}" WITH (FORCE)`));
}

/** The environment a server or CLI on `dir` needs in this pass (nothing on SQLite). */
export async function driverEnv(dir: string): Promise<Record<string, string>> {
  if (!onPostgres) return {};
  return { CAIRN_DATABASE_URL: await databaseUrlFor(dir), CAIRN_PG_POOL_SIZE: '4' };
}
