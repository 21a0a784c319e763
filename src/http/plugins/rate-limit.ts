import type { FastifyInstance, FastifyRequest } from 'fastify';
import { createHash } from 'node:crypto';
import { tooManyRequests } from '../../errors.ts';
import type { RateCounters } from '../../ratelimit/counters.ts';
import { memoryCounters } from './rate-limit-stores.ts';
import { ipListMatcher } from '../../lib/ip-list.ts';
import { findRule, type RateLimitSettings, ruleRequest } from './rate-limit-rules.ts';

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
  /** The `rateLimits` settings once saved: they replace the global limit (undefined: it holds). */
  saved?: () => RateLimitSettings | undefined;
  /** While true, nothing is counted (the start's warm-up requests, http/warm-up.ts). */
  paused?: () => boolean;
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
 * Rate limits. The general limit is CAIRN_RATE_LIMIT_GLOBAL per IP until the `rateLimits` settings
 * are saved; from then on their rules apply instead (on every node: the counters are shared where
 * the nodes share any), `enabled: false` lifting them. The sign-in limits (per IP and per identity)
 * stay as CAIRN_RATE_LIMIT says. The client address is `req.ip` (trusted-proxy.ts). Register before
 * the request context, so a flood is refused before any token is checked.
 */
export function registerRateLimit(app: FastifyInstance, options: RateLimitOptions): void {
  const { shared, onSharedError } = options;
  if (shared) app.addHook('onClose', () => shared.close());
  const global = options.enabled ? new Limit('global', options.globalMax, RATE_LIMITS.global.timeWindow, options.shareGlobal ? shared : undefined, onSharedError) : undefined;
  // One limit per rule in force, made when first needed (a changed rule is a new limit).
  const ruleLimits = new Map<string, Limit>();
  const excluded = ipListMatcher();
  const byRules = async (req: FastifyRequest, settings: RateLimitSettings) => {
    if (excluded(settings.excludedIPs, req.ip)) return;
    const rule = findRule(settings.rules, ruleRequest(req));
    if (!rule) return;
    const key = `${rule.label}\n${rule.audience}\n${rule.duration}\n${rule.maxRequests}`;
    let limit = ruleLimits.get(key);
    if (!limit) {
      if (ruleLimits.size > 1000) ruleLimits.clear();
      limit = new Limit(`rule:${createHash('sha256').update(key).digest('base64url').slice(0, 16)}`, rule.maxRequests, rule.duration * 1000, shared, onSharedError);
      ruleLimits.set(key, limit);
    }
    await limit.enforce(req.ip);
  };
  app.addHook('onRequest', async (req) => {
    if (options.paused?.()) return;
    const saved = options.saved?.();
    if (saved) {
      if (saved.enabled) await byRules(req, saved);
      return;
    }
    await global?.enforce(req.ip);
  });
  if (!options.enabled) return;
  const perIp = new Limit('ip', RATE_LIMITS.sensitivePerIp.max, RATE_LIMITS.sensitivePerIp.timeWindow, shared, onSharedError);
  const perIdentity = new Limit('identity', RATE_LIMITS.perIdentity.max, RATE_LIMITS.perIdentity.timeWindow, shared, onSharedError);

  // preHandler: the body, which names the identity, is parsed by then, and no password is hashed yet.
  app.addHook('preHandler', async (req) => {
    if (req.routeOptions.config?.identityLimit !== true || options.paused?.()) return;
    await perIp.enforce(req.ip);
    const identity = identityOf(req);
    if (identity === undefined) return;
    // Hashed: the counters (a table, Redis) hold no addresses of accounts.
    await perIdentity.enforce(createHash('sha256').update(`${req.routeOptions.url}\n${identity}`).digest('base64url'));
  });
}
