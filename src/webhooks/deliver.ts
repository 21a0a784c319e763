import { createHmac } from 'node:crypto';
import type { Agent } from 'undici';
import { signHs256 } from '../lib/jwt.ts';
import { VERSION } from '../version.ts';
import { type OutboxRow, triggerBody } from './outbox.ts';
import { signingKey } from './target.ts';

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
  if (row.secret !== '') {
    headers['webhook-id'] = row.id;
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

/**
 * Sends webhook requests over a shared connection pool. The timeout applies to connecting, to the
 * answer's headers and to its body, through the pool's own timers; `interrupt` ends every request in
 * flight at once. No timer or abort signal per request, which matters at thousands of deliveries a
 * second. undici (some 15 MB resident) is imported with the first attempt: an instance without
 * webhooks never loads it.
 */
export class Sender {
  private pool?: { agent: Agent; request: typeof import('undici').request };
  private loading?: Promise<NonNullable<Sender['pool']>>;
  private interrupted = false;

  constructor(private readonly timeoutMs: number) {}

  private load(): Promise<NonNullable<Sender['pool']>> {
    this.loading ??= import('undici').then(({ Agent, request }) => {
      const timeoutMs = this.timeoutMs;
      this.pool = { agent: new Agent({ connect: { timeout: timeoutMs }, headersTimeout: timeoutMs, bodyTimeout: timeoutMs }), request };
      return this.pool;
    });
    return this.loading;
  }

  async send(req: DeliveryRequest): Promise<DeliveryResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    try {
      const { agent, request } = this.pool ?? (await this.load());
      if (this.interrupted) throw new Error('interrupted');
      const res = await request(req.url, { method: req.method as 'POST', headers: req.headers, body: req.body ?? undefined, dispatcher: agent });
      // The answer's body is not used; reading it (bounded) frees the connection for reuse.
      await res.body.dump({ limit: 64 * 1024 });
      const ok = res.statusCode >= 200 && res.statusCode < 300;
      return { ok, statusCode: res.statusCode, durationMs: elapsed(), error: ok ? '' : `The receiver answered ${res.statusCode}.`, interrupted: false };
    } catch (err) {
      if (this.interrupted) return { ok: false, statusCode: 0, durationMs: elapsed(), error: 'Interrupted by shutdown; the event was returned to the queue.', interrupted: true };
      const code = (err as { code?: string }).code;
      if (code && TIMEOUT_CODES.has(code)) return { ok: false, statusCode: 0, durationMs: elapsed(), error: `Timed out after ${this.timeoutMs} ms.`, interrupted: false };
      return { ok: false, statusCode: 0, durationMs: elapsed(), error: describe(err), interrupted: false };
    }
  }

  /** Ends every request in flight (shutdown); their attempts report `interrupted`. */
  async interrupt(): Promise<void> {
    this.interrupted = true;
    await (this.pool ?? (await this.loading))?.agent.destroy();
  }

  async close(): Promise<void> {
    if (!this.interrupted) await (this.pool ?? (await this.loading))?.agent.close();
  }
}
