import type BetterSqlite3 from 'better-sqlite3';
import type { FastifyInstance } from 'fastify';

/**
 * One benchmark case: the same operation against Cairn and against the bare baseline (Fastify +
 * better-sqlite3 running the same SQL). Add a case by writing a module in `bench/cases/` and listing
 * it in `bench/cases/index.ts`; the runner, servers and report need no change.
 */
export interface BenchCase<State = unknown> {
  /** Short id, used on the command line (`npm run bench -- view-by-id`) and in the report. */
  name: string;
  /** One line for the report. */
  description: string;
  /** The throughput Cairn should reach, as a fraction of the baseline's (shown in the report). */
  target?: number;
  /** Another case this one is measured against: when both are selected they run in shared rounds,
   * and the report prints this case's Cairn throughput as a fraction of that case's and whether it
   * reaches `target`. */
  relativeTo?: { name: string; target?: number };
  /** Units of work (records) one request of this case does, 1 when absent: a case measured relative
   * to another is compared per unit, so 50 creates in one request compare with 50 requests. */
  unitsPerRequest?: number;
  /**
   * Runs in the bench process before the load starts, with Cairn serving and the baseline's database
   * open (the baseline server is not running yet). Creates collections and data through Cairn's API,
   * then copies the tables into the baseline (`ctx.copyToBaseline`), so both serve identical data.
   */
  prepare(ctx: PrepareContext): Promise<State>;
  /** Runs in the baseline process: registers the baseline's route(s) for this case. */
  baseline(app: FastifyInstance, db: BetterSqlite3.Database): void;
  /** What autocannon sends to each target. */
  request(state: State, target: Target): BenchRequest;
  /**
   * Runs after each round of load on Cairn (its warm-up included), before the next round, with the
   * number of requests answered as expected: waits for the background work the round caused (e.g.
   * webhook deliveries) to finish. Its wall time is reported as the round's drain time, and Cairn's
   * CPU until it returns is reported per request besides the CPU of the round alone.
   */
  afterRound?(state: State, answered: number): Promise<void>;
  /** Runs right after the case's rounds: releases what would weigh on the cases measured after it
   * (connections, processes), keeping in `state` what `report` needs. */
  done?(state: State): Promise<void>;
  /** Runs once every case is measured: lines for the report (figures measured outside the rounds). */
  report?(state: State): Promise<string[]>;
}

export type Target = 'cairn' | 'baseline';

export interface BenchRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Paths are sent round-robin (one entry for a fixed path). */
  paths: string[];
  /** A JSON body, sent with `content-type: application/json`. */
  body?: unknown;
  headers?: Record<string, string>;
  /** The status every answer must have; anything else counts as an error in the report. */
  expectStatus?: number;
  /** Each request's path, instead of `paths`, for requests that use something up (a delete): shared
   * by every round, so no two requests of the run get the same path. */
  nextPath?: () => string;
  /** A new TCP connection for every request (as PocketBase's benchmark sends them), not kept-alive ones. */
  freshConnections?: boolean;
}

export interface PrepareContext {
  /** Cairn's HTTP API as its administrator. */
  cairn: CairnClient;
  /** The baseline's database (better-sqlite3, the same pragmas as Cairn's driver). */
  baseline: BetterSqlite3.Database;
  /** Copies a table of Cairn's `main` database (its DDL, indexes and rows) into the baseline. */
  copyToBaseline(table: string): void;
  /** Cairn's resident memory in bytes now, where the OS tells (Linux). */
  cairnRss(): number | undefined;
}

export interface CairnClient {
  url: string;
  adminToken: string;
  /** A JSON request as the administrator; throws unless the answer is 2xx. */
  admin<T = any>(method: string, path: string, body?: unknown): Promise<T>;
  /** Creates `count` records in `collection` (several requests in flight); returns their ids. */
  createRecords(collection: string, count: number, make: (i: number) => Record<string, unknown>): Promise<string[]>;
}

/**
 * A case measured on Cairn alone, outside the alternating rounds: it runs its own load and prints its
 * own lines (a sustained run, a comparison with something other than the baseline server). Listed in
 * `soloCases` (bench/cases/index.ts); selected by name like the others; measured after them.
 */
export interface SoloCase<State = unknown> {
  name: string;
  description: string;
  prepare(ctx: PrepareContext): Promise<State>;
  measure(state: State, env: SoloEnv): Promise<string[]>;
}

export interface SoloEnv {
  cairn: { url: string; cpuSeconds(): number | undefined };
  /** BENCH_CONNECTIONS, BENCH_RATE and the other load settings. */
  load: import('./lib/load.ts').LoadOptions;
}
