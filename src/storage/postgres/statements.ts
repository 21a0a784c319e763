import type pg from 'pg';
import { bindable } from '../bind.ts';
import { toPostgres } from './placeholders.ts';

/**
 * TCP keepalive for connections that stay open while idle (the pool's kept ones, the LISTEN one): a
 * probe after 30 s of silence keeps firewalls and NAT gateways between here and PostgreSQL (which
 * forget idle flows after 4-6 minutes) from dropping them without a word, and a peer that is gone is
 * noticed while idle rather than by the next request, or never by a connection that only listens.
 */
export const KEEP_ALIVE = { keepAlive: true, keepAliveInitialDelayMillis: 30_000 } as const;

/** Error codes meaning the connection or the server went away, not that the statement was wrong. */
const CONNECTION_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'ENOTFOUND', 'EHOSTUNREACH', '57P01', '57P02', '57P03', '08000', '08001', '08003', '08004', '08006']);

export function isConnectionError(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  if (e?.code && CONNECTION_CODES.has(e.code)) return true;
  const message = e?.message ?? '';
  return /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|connection is closed|Client was closed/i.test(message);
}

// Named (server-side prepared) statements skip parsing and planning on reuse. A statement gets a name
// on its second use, so one-off filters do not fill every connection's memory; names are never
// reused for other text, since a connection keeps what it prepared under a name.
const NAMED_LIMIT = 1000;
const uses = new Map<string, number>();
const names = new Map<string, string>();
let nameCounter = 0;

function statementName(key: string): string | undefined {
  const name = names.get(key);
  if (name !== undefined) return name;
  if (names.size >= NAMED_LIMIT) return undefined;
  const n = (uses.get(key) ?? 0) + 1;
  if (n < 2) {
    if (uses.size >= 10_000) uses.clear();
    uses.set(key, n);
    return undefined;
  }
  uses.delete(key);
  const fresh = `cairn_${++nameCounter}`;
  names.set(key, fresh);
  return fresh;
}

/** Runs one statement on a connection. */
export async function query(client: pg.PoolClient, schema: string, text: string, params?: readonly unknown[]): Promise<pg.QueryResult> {
  const values = bindable(params);
  if (values.length === 0) {
    // No parameters: user SQL (views, indexes) may contain `?` as an operator, and is sent as is.
    return client.query(toPostgres(text, false));
  }
  const key = `${schema}\u0000${text}`;
  const name = statementName(key);
  const translated = toPostgres(text, true);
  try {
    return await client.query({ name, text: translated, values });
  } catch (err) {
    // A view or table changed its columns since the statement was prepared on this connection.
    if (name !== undefined && (err as { code?: string }).code === '0A000') {
      names.delete(key);
      return client.query({ text: translated, values });
    }
    throw err;
  }
}

/**
 * Runs `write` (which sends statements on `client`, pipelined) with the connection's socket corked, so
 * the statements leave in one write.
 */
export function inOneWrite<R>(client: pg.PoolClient | pg.Client, write: () => R): R {
  const stream = socketOf(client);
  stream?.cork?.();
  try {
    return write();
  } finally {
    stream?.uncork?.();
  }
}

/** The socket under a pg connection, to cork: pg writes each statement as it is given. */
export function socketOf(client: pg.PoolClient | pg.Client): { cork?(): void; uncork?(): void } | undefined {
  return (client as unknown as { connection?: { stream?: { cork?(): void; uncork?(): void } } }).connection?.stream;
}
