import rateLimit from '@fastify/rate-limit';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { tooManyRequests } from '../../errors.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /**
     * Sign-in, sign-up, password reset and verification: stricter per-IP limits, plus a limit per
     * identity (the `email`/`identity` in the body) so one account cannot be guessed at from many IPs.
     */
    identityLimit?: boolean;
  }
}

/** Route options that mark a route as identity-limited. */
export const identityLimited = { config: { identityLimit: true } } as const;

const MINUTE = 60_000;

/** Limits, per window of one minute. */
export const RATE_LIMITS = {
  /** Every request, per client IP: loose, against floods. */
  global: { max: 3000, timeWindow: MINUTE },
  /** Identity-limited routes, per client IP. */
  sensitivePerIp: { max: 30, timeWindow: MINUTE },
  /** Identity-limited routes, per route and identity. */
  perIdentity: { max: 10, timeWindow: MINUTE },
};

function identityOf(req: FastifyRequest): string | undefined {
  const body = req.body as Record<string, unknown> | undefined;
  const id = body?.email ?? body?.identity;
  return typeof id === 'string' && id.trim() !== '' ? id.trim().toLowerCase().slice(0, 320) : undefined;
}

type Limiter = ReturnType<FastifyInstance['createRateLimit']>;

async function enforce(limiter: Limiter, req: FastifyRequest): Promise<void> {
  const result = await limiter(req);
  if (!result.isAllowed && result.isExceeded) throw tooManyRequests(result.ttlInSeconds);
}

/**
 * Rate limits (in memory, per process), off with CAIRN_RATE_LIMIT=off. The client address is
 * `req.ip`, which reads X-Forwarded-For only when CAIRN_TRUST_PROXY names the proxy it came from.
 * Register before the request context, so a flood is refused before any token is checked.
 */
export async function registerRateLimit(app: FastifyInstance, enabled: boolean): Promise<void> {
  if (!enabled) return;
  await app.register(rateLimit, { global: false });
  const global = app.createRateLimit({ ...RATE_LIMITS.global, keyGenerator: (req) => req.ip });
  const perIp = app.createRateLimit({ ...RATE_LIMITS.sensitivePerIp, keyGenerator: (req) => req.ip });
  const perIdentity = app.createRateLimit({
    ...RATE_LIMITS.perIdentity,
   
    keyGenerator: (req) => `${req.routeOptions.url}\n${identityOf(req)}`,
  });

  app.addHook('onRequest', async (req) => enforce(global, req));
  // preHandler: the body, which names the identity, is parsed by then, and no password is hashed yet.
  app.addHook('preHandler', async (req) => {
    if (req.routeOptions.config?.identityLimit !== true) return;
    await enforce(perIp, req);
    if (identityOf(req) !== undefined) await enforce(perIdentity, req);
  });
}
