import { createHmac } from 'node:crypto';
import type { Pool } from 'undici';
import { signHs256 } from '../lib/jwt.ts';
import { OutboundPolicy } from '../lib/outbound.ts';
import { VERSION } from '../version.ts';
import { signingKey } from './target.ts';
import { type OutboxRow, triggerBody } from './types.ts';

/** Lifetime of the JWT a delivery carries: long enough for a slow receiver, short enough to be useless later. */
const TOKEN_TTL_SECONDS = 300;

export interface DeliveryRequest {
  url: string;
  method: string;
  headers: Record<string, string>;
  body: string | null;
}

export interface DeliveryResult {
  ok: boolean;
  /** 0 when no answer came. */
  statusCode: number;
  durationMs: number;
  error: string;
  /** Stopped by shutdown, not by the receiver: the attempt does not count. */
  interrupted: boolean;
}

/** The Standard Webhooks signature header value: `v1,<base64 HMAC-SHA256 of "id.timestamp.body">`. */
export function standardSignature(secret: string, id: string, timestamp: number, body: string): string {
  return `v1,${createHmac('sha256', signingKey(secret)).update(`${id}.${timestamp}.${body}`).digest('base64')}`;
}

/**
 * The HTTP request for one attempt of an event. Signed per attempt, so the JWT's `exp` and the
 * Standard Webhooks timestamp are fresh on retries while `webhook-id` stays the event id.
 */
export function requestFor(row: OutboxRow, database: string, instanceSecret: string, now: Date): DeliveryRequest {
  const seconds = Math.floor(now.getTime() / 1000);
  const body = row.change === null ? row.body : triggerBody(row, database, row.change);
  const headers: Record<string, string> = {
    'user-agent': `cairn-webhooks/${VERSION}`,
    // Signed with the instance secret itself (CAIRN_JWT_SECRET), so a receiver verifies it with the value it is configured with.
    authorization: `Bearer ${signHs256({ iss: 'cairn', sub: 'webhook', evt: row.id, db: database, col: row.collection, iat: seconds, exp: seconds + TOKEN_TTL_SECONDS }, instanceSecret)}`,
    ...(JSON.parse(row.headers) as Record<string, string>),
  };
  if (body !== null) headers['content-type'] = 'application/json';
  // The event id on every delivery, signed or not: what a receiver drops duplicates by.
  headers['webhook-id'] = row.id;
  if (row.secret !== '') {
    headers['webhook-timestamp'] = String(seconds);
    headers['webhook-signature'] = standardSignature(row.secret, row.id, seconds, body ?? '');
  }
  return { url: row.url, method: row.method, headers, body };
}

function describe(err: unknown): string {
  const e = err as { code?: string; message?: string; cause?: { code?: string; message?: string } };
  const text = e.cause?.message ?? e.message ?? String(err);
  const code = e.cause?.code ?? e.code;
  return code && !text.includes(code) ? `${code}: ${text}` : text;
}

const TIMEOUT_CODES = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

/** Most of an answer's body read; past it the connection is dropped rather than read on. */
const BODY_LIMIT = 64 * 1024;

// A URL's origin and path, as undici's dispatch takes them: parsed once per target URL (a trigger's
// events all go to the same one).
const parsedUrls = new Map<string, { origin: string; path: string; hostname: string }>();
function splitUrl(url: string): { origin: string; path: string; hostname: string } {
  let parsed = parsedUrls.get(url);
  if (!parsed) {
    const u = new URL(url);
    parsed = { origin: u.origin, path: `${u.pathname}${u.search}`, hostname: u.hostname };
    // Targets are few; the bound only keeps a stream of one-off URLs (cron, workflows) from growing it.
    if (parsedUrls.size >= 1000) parsedUrls.clear();
    parsedUrls.set(url, parsed);
  }
  return parsed;
}

type Handler = Parameters<Pool['dispatch']>[1];
type Undici = typeof import('undici');

// Pools kept for origins no longer used: past this many, those idle for POOL_IDLE_MS are closed
// (cron jobs and workflow steps may name many one-off origins).
const MAX_IDLE_POOLS = 64;
const POOL_IDLE_MS = 60_000;

/**
 * One undici Pool per receiver origin. This is what
 * undici's Agent does, without its bookkeeping of connections per origin: the Agent counts `connect`
 * and `disconnect` events per origin and closes an origin's pool when the count reaches zero, but a
 * closed pool's later events land on the origin's next pool. Once keep-alive sockets time out while
 * others are connecting (deliveries paused for about the keep-alive time, as the pacer does under
 * load), each new pool is closed by the previous one's disconnects and every request opens a new
 * connection for good: measured in a standalone script (about one run in three), 10,000 connections
 * for 10,000 requests and about 13× the CPU. test/webhooks/sender.test.ts checks that connections
 * are reused across such pauses.
 */
class OriginPools {
  private readonly pools = new Map<string, { pool: Pool; used: number }>();
  /** Closed or destroyed: like undici's Agent then, every request fails rather than opening a new pool. */
  private ended = false;

  constructor(
    private readonly undici: Undici,
    private readonly options: Pool.Options,
  ) {}

  dispatch(opts: Parameters<Pool['dispatch']>[0] & { origin: string }, handler: Handler): void {
    if (this.ended) {
      (handler as { onError(err: Error): void }).onError(new this.undici.errors.ClientDestroyedError());
      return;
    }
    let entry = this.pools.get(opts.origin);
    if (!entry) {
      if (this.pools.size >= MAX_IDLE_POOLS) this.sweep();
      // No `connections` limit: the workers bound requests per origin (DELIVERY.maxPerOrigin), and a
      // pool at its limit queues requests with no timeout until a connection drains (one such wait
      // stalled deliveries in test/cluster).
      entry = { pool: new this.undici.Pool(opts.origin, this.options), used: 0 };
      this.pools.set(opts.origin, entry);
    }
    entry.used = performance.now();
    entry.pool.dispatch(opts, handler);
  }

  private sweep(): void {
    const before = performance.now() - POOL_IDLE_MS;
    for (const [origin, { pool, used }] of this.pools) {
      const { running, pending } = pool.stats;
      if (used < before && running === 0 && pending === 0) {
        this.pools.delete(origin);
        void pool.close();
      }
    }
  }

  async close(): Promise<void> {
    this.ended = true;
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map(({ pool }) => pool.close()));
  }

  async destroy(): Promise<void> {
    this.ended = true;
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map(({ pool }) => pool.destroy()));
  }
}

/**
 * Sends webhook requests over a shared pool of keep-alive connections (one undici pool per receiver
 * origin). The timeout applies to connecting, to the answer's headers and to its body, through the
 * pool's own timers; `interrupt` ends every request in flight at once. Requests go through undici's
 * `dispatch` with a handler that keeps only the status: the `request` API wraps each answer in a
 * stream and a promise chain, which cost about as much CPU again as the request itself (measured
 * 36–52 against 20 µs per request to a loopback receiver, in isolation). No timer or abort signal per
 * request.
 */
export class Sender {
  private agent?: OriginPools;
  private loading?: Promise<OriginPools>;
  private interrupted = false;
  private stopped = false;

  constructor(
    private readonly timeoutMs: number,
    /** Where deliveries may not go (link-local and metadata addresses), checked on every attempt. */
    private readonly outbound: OutboundPolicy = new OutboundPolicy(),
  ) {}

  /** The pools, once undici (some 15 MB resident) is loaded: with the first attempt, so an instance
   * without webhooks never loads it. */
  private pools(): Promise<OriginPools> {
    const timeoutMs = this.timeoutMs;
    this.loading ??= import('undici').then((undici) => {
      // Every new connection resolves its host through the policy: the address is checked after DNS.
      const agent = new OriginPools(undici, { connect: { timeout: timeoutMs, lookup: this.outbound.lookup } as Pool.Options['connect'], headersTimeout: timeoutMs, bodyTimeout: timeoutMs });
      // Stopped before the first attempt: its requests fail at once, as after a close.
      if (this.stopped) void agent.destroy();
      return (this.agent = agent);
    });
    return this.loading;
  }

  send(req: DeliveryRequest): Promise<DeliveryResult> {
    if (!this.agent) return this.pools().then(() => this.send(req));
    const agent = this.agent;
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    return new Promise<DeliveryResult>((resolve) => {
      let statusCode = 0;
      let received = 0;
      let done = false;
      let abort: ((err?: Error) => void) | undefined;
      const finish = () => {
        if (done) return;
        done = true;
        const ok = statusCode >= 200 && statusCode < 300;
        resolve({ ok, statusCode, durationMs: elapsed(), error: ok ? '' : `The receiver answered ${statusCode}.`, interrupted: false });
      };
      const fail = (err: unknown) => {
        if (done) return;
        done = true;
        if (this.interrupted) return resolve({ ok: false, statusCode: 0, durationMs: elapsed(), error: 'Interrupted by shutdown; the event was returned to the queue.', interrupted: true });
        const code = (err as { code?: string }).code;
        if (code && TIMEOUT_CODES.has(code)) return resolve({ ok: false, statusCode: 0, durationMs: elapsed(), error: `Timed out after ${this.timeoutMs} ms.`, interrupted: false });
        resolve({ ok: false, statusCode: 0, durationMs: elapsed(), error: describe(err), interrupted: false });
      };
      let target: { origin: string; path: string; hostname: string };
      try {
        target = splitUrl(req.url);
      } catch (err) {
        return fail(err);
      }
      // An address in the URL itself is connected to without a lookup: checked here, on every attempt.
      const refused = this.outbound.refusedHost(target.hostname);
      if (refused) return resolve({ ok: false, statusCode: 0, durationMs: elapsed(), error: refused, interrupted: false });
      agent.dispatch(
        { origin: target.origin, path: target.path, method: req.method as 'POST', headers: req.headers, body: req.body ?? undefined },
        {
          onConnect: (a: (err?: Error) => void) => {
            abort = a;
          },
          onHeaders: (status: number) => {
            statusCode = status;
            return true;
          },
          // The answer's body is not used; it is read (up to BODY_LIMIT) so the connection can be reused.
          onData: (chunk: Buffer) => {
            received += chunk.length;
            if (received > BODY_LIMIT) {
              finish();
              abort?.();
            }
            return true;
          },
          onComplete: finish,
          onError: fail,
        } as unknown as Handler,
      );
    });
  }

  /** Ends every request in flight (shutdown); their attempts report `interrupted`. */
  async interrupt(): Promise<void> {
    this.interrupted = true;
    this.stopped = true;
    await (this.agent ?? (await this.loading))?.destroy();
  }

  async close(): Promise<void> {
    this.stopped = true;
    if (!this.interrupted) await (this.agent ?? (await this.loading))?.close();
  }
}
