import pg from 'pg';

/** What a database that is not up yet answers: retried. Anything else (a wrong password, a database
 * that does not exist) is an answer, and fails at once. */
const NOT_UP_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'EAI_AGAIN', 'EPIPE', '57P03', '57P01', '53300']);
const NOT_UP_MESSAGE = /starting up|shutting down|not yet accepting|recovery mode|Connection terminated|timeout/i;

export function databaseNotUp(err: unknown): boolean {
  const e = err as { code?: unknown; message?: unknown };
  return (typeof e?.code === 'string' && NOT_UP_CODES.has(e.code)) || NOT_UP_MESSAGE.test(String(e?.message ?? ''));
}

export interface WaitLog {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

/**
 * Waits until PostgreSQL at `url` answers a query: while it refuses connections or is starting up,
 * retries with backoff (100 ms doubling to 2 s) for up to `waitMs`, saying so in the log, then throws
 * the last error. Any other error is thrown at once.
 */
export async function waitForPostgres(url: string, waitMs: number, log: WaitLog): Promise<void> {
  const deadline = Date.now() + waitMs;
  let delay = 100;
  let told = false;
  for (;;) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: Math.max(1000, Math.min(10_000, deadline - Date.now())) });
    client.on('error', () => {});
    try {
      await client.connect();
      await client.query('SELECT 1');
      if (told) log.info({}, 'the database answers');
      return;
    } catch (err) {
      if (!databaseNotUp(err) || Date.now() + delay > deadline) throw err;
      if (!told) {
        told = true;
        log.warn({ err: String((err as Error).message ?? err), waitMs }, 'the database is not up yet; waiting for it (CAIRN_DB_WAIT_MS)');
      }
    } finally {
      await client.end().catch(() => {});
    }
    await new Promise((r) => setTimeout(r, delay));
    delay = Math.min(2000, delay * 2);
  }
}
