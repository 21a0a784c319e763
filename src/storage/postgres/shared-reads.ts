import type pg from 'pg';
import { isConnectionError, query, socketOf } from './statements.ts';

/** Where the lanes' connections come from and go back to (PgServer's own small pool for them). */
export interface ConnectionSource {
  /** A pooled connection whose search_path names `schema`. */
  connect(schema: string): Promise<pg.PoolClient>;
  release(client: pg.PoolClient, err?: unknown): void;
}

/** Reads queued on one lane at most; past that a read takes a connection of its own. */
const LANE_DEPTH = 64;

interface Lane {
  client?: pg.PoolClient;
  /** Reads written on it and not yet answered. */
  pending: number;
  /** Whether its socket is corked until the end of this event-loop turn. */
  corked: boolean;
  /** The reads asked for in this turn (not written yet), by text and parameters. */
  asked: Map<string, Promise<pg.QueryResult>>;
}

/** A read's text and parameters as one key, when its parameters are plain strings and numbers. */
function keyOf(text: string, params: readonly unknown[] | undefined): string | undefined {
  let key = text;
  if (params) {
    for (const p of params) {
      if (typeof p !== 'string' && typeof p !== 'number') return undefined;
      key += `\u0000${p}`;
    }
  }
  return key;
}

function copied(result: pg.QueryResult): pg.QueryResult {
  return { ...result, rows: result.rows.map((row: Record<string, unknown>) => ({ ...row })) };
}

/**
 * Reads by key outside a transaction (the account a token names, the record a request views), from
 * every request in flight, on one connection per database kept for them (a lane, beside the pool
 * transactions and other reads use), pipelined: each read is written without waiting for the one
 * before, and all an event-loop turn asks for leave in one write, which PostgreSQL answers together.
 *
 * With a connection taken from the pool per read, each one cost a write, a wake-up of a PostgreSQL
 * backend and a read of its answer: on this 2-core machine those system calls were most of a small
 * request's CPU on both sides (views by id: Cairn 171 → 98 µs, PostgreSQL 87 → 27 µs a request, and
 * twice the requests a second; docs/postgres.md#shared-reads).
 *
 * A lane is opened on a database's first read and kept; while it opens, and for the reads past
 * LANE_DEPTH waiting on it (a slow read holds those behind it), reads take a connection of their own
 * as before. At most `lanes` databases get one. A lane whose connection fails is dropped (the reads on
 * it fail as they would on any broken connection) and opened again on the next read.
 */
export class SharedReads {
  private readonly byschema = new Map<string, Lane>();
  private closed = false;

  constructor(
    private readonly source: ConnectionSource,
    private readonly lanes: number,
  ) {}

  /**
   * The read on `schema`'s lane, or undefined when it has none ready with room: the caller runs it itself.
   * A read asked for again in the same event-loop turn (many requests of one user name the same
   * account; many clients view the same record) joins the first: it is not written yet, so
   * PostgreSQL runs it after both requests arrived, and the one answer holds for both. Each gets rows
   * of its own.
   */
  run(schema: string, text: string, params: readonly unknown[] | undefined): Promise<pg.QueryResult> | undefined {
    const lane = this.laneFor(schema);
    if (!lane?.client || lane.pending >= LANE_DEPTH) return undefined;
    const key = keyOf(text, params);
    if (key === undefined) return this.send(schema, lane, lane.client, text, params);
    const asked = lane.asked.get(key);
    if (asked) return asked.then(copied);
    const sent = this.send(schema, lane, lane.client, text, params);
    lane.asked.set(key, sent);
    return sent;
  }

  private async send(schema: string, lane: Lane, client: pg.PoolClient, text: string, params: readonly unknown[] | undefined): Promise<pg.QueryResult> {
    lane.pending += 1;
    this.batch(lane, client);
    try {
      return await query(client, schema, text, params);
    } catch (err) {
      if (isConnectionError(err)) this.drop(schema, lane, err);
      throw err;
    } finally {
      lane.pending -= 1;
    }
  }

  /**
   * Corks the lane's socket until the event loop has run every callback ready now (setImmediate):
   * the reads of all requests it handles in this turn go out in one write.
   */
  private batch(lane: Lane, client: pg.PoolClient): void {
    if (lane.corked) return;
    const stream = socketOf(client);
    lane.corked = true;
    stream?.cork?.();
    setImmediate(() => {
      lane.corked = false;
      lane.asked.clear();
      stream?.uncork?.();
    });
  }

  private laneFor(schema: string): Lane | undefined {
    const known = this.byschema.get(schema);
    if (known || this.closed || this.byschema.size >= this.lanes) return known;
    const lane: Lane = { pending: 0, corked: false, asked: new Map() };
    this.byschema.set(schema, lane);
    this.source.connect(schema).then(
      (client) => {
        if (this.closed || this.byschema.get(schema) !== lane) return this.source.release(client);
        lane.client = client;
        // Out of the pool, an idle connection's failure (a restarted server) is no one's to catch.
        client.on('error', (err) => this.drop(schema, lane, err));
      },
      // No connection now (the pool is busy or the database away): the next read tries again.
      () => {
        if (this.byschema.get(schema) === lane) this.byschema.delete(schema);
      },
    );
    return lane;
  }

  private drop(schema: string, lane: Lane, err: unknown): void {
    if (this.byschema.get(schema) !== lane) return;
    this.byschema.delete(schema);
    if (lane.client) this.source.release(lane.client, err);
    lane.client = undefined;
  }

  /** Gives the lanes' connections back, so the pool can end (requests are finished by then). */
  close(): void {
    this.closed = true;
    for (const lane of this.byschema.values()) if (lane.client) this.source.release(lane.client);
    this.byschema.clear();
  }
}
