import type { FastifyInstance, FastifyRequest } from 'fastify';
import { createHash } from 'node:crypto';
import { tooManyRequests } from '../../errors.ts';
import type { RateCounters } from '../../ratelimit/counters.ts';
import { memoryCounters } from './rate-limit-stores.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Sign-in, sign-up, password reset and verification: stricter per-IP limits, plus a limit per
     * identity (the `email`/`identity`/`otpId` in the body) so one account cannot be guessed at from
     * many IPs.
     */
    identityLimit?: boolean;
  }
}

/** Route options that mark a route as identity-limited. */
export const identityLimited = { config: { identityLimit: true } } as const;

const MINUTE = 60_000;

/** Limits, per window of one minute (the global one's `max` is CAIRN_RATE_LIMIT_GLOBAL's default). */
export const RATE_LIMITS = {
  /** Every request, per client IP: loose, against floods. */
  global: { max: 3000, timeWindow: MINUTE },
  /** Identity-limited routes, per client IP. */
  sensitivePerIp: { max: 30, timeWindow: MINUTE },
  /** Identity-limited routes, per route and identity. */
  perIdentity: { max: 10, timeWindow: MINUTE },
};

export interface RateLimitOptions {
  enabled: boolean;
  /** The global limit: requests per minute per client IP. */
  globalMax: number;
  /** Counters the nodes share (PostgreSQL or Redis); without them every limit counts in memory. */
  shared?: RateCounters;
  /** Whether the global limit counts in `shared` too, or in each node's memory (see docs/auth.md). */
  shareGlobal: boolean;
  /** Called when the shared counters fail (the hit is then counted in memory). */
  onSharedError(err: unknown): void;
}

function identityOf(req: FastifyRequest): string | undefined {
  const body = req.body as Record<string, unknown> | undefined;
  const id = body?.email ?? body?.identity ?? body?.otpId;
  return typeof id === 'string' && id.trim() !== '' ? id.trim().toLowerCase().slice(0, 320) : undefined;
}

/**
 * One limit: at most `max` hits per key per window. Hits go to the shared counters when there are
 * some, else (and whenever they fail) to this node's memory, so a node whose Redis or database is
 * out of reach still limits what reaches it.
 */
class Limit {
  private readonly memory = memoryCounters();

  constructor(
    /** Keeps the limits' keys apart in shared counters. */
    private readonly name: string,
    private readonly max: number,
    private readonly windowMs: number,
    private readonly shared: RateCounters | undefined,
    private readonly onSharedError: (err: unknown) => void,
  ) {}

  async enforce(key: string): Promise<void> {
    const bucket = `${this.name}:${key}`;
    let hit: { count: number; ttlMs: number };
    if (this.shared) {
      try {
        hit = await this.shared.hit(bucket, this.windowMs);
      } catch (err) {
        this.onSharedError(err);
        hit = await this.memory.hit(bucket, this.windowMs);
      }
    } else {
      hit = await this.memory.hit(bucket, this.windowMs);
    }
    if (hit.count > this.max) throw tooManyRequests(Math.max(1, Math.ceil(hit.ttlMs / 1000)));
  }
}

/**
 * Rate limits, off with CAIRN_RATE_LIMIT=off. The client address is `req.ip`, which reads
 * X-Forwarded-For only when CAIRN_TRUST_PROXY names the proxy it came from. Register before the
 * request context, so a flood is refused before any token is checked.
 */
export function registerRateLimit(app: FastifyInstance, options: RateLimitOptions): void {
  if (!options.enabled) return;
  const { shared, onSharedError } = options;
  const global = new Limit('global', options.globalMax, RATE_LIMITS.global.timeWindow, options.shareGlobal ? shared : undefined, onSharedError);
  const perIp = new Limit('ip', RATE_LIMITS.sensitivePerIp.max, RATE_LIMITS.sensitivePerIp.timeWindow, shared, onSharedError);
  const perIdentity = new Limit('identity', RATE_LIMITS.perIdentity.max, RATE_LIMITS.perIdentity.timeWindow, shared, onSharedError);

  app.addHook('onRequest', async (req) => global.enforce(req.ip));
  // preHandler: the body, which names the identity, is parsed by then, and no password is hashed yet.
  app.addHook('preHandler', async (req) => {
    if (req.routeOptions.config?.identityLimit !== true) return;
    await perIp.enforce(req.ip);
    const identity = identityOf(req);
    if (identity === undefined) return;
    // Hashed: the counters (a table, Redis) hold no addresses of accounts.
    await perIdentity.enforce(createHash('sha256').update(`${req.routeOptions.url}\n${identity}`).digest('base64url'));
  });
  if (shared) app.addHook('onClose', () => shared.close());
}
