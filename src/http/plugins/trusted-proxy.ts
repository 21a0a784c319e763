import { isIP } from 'node:net';
import type { FastifyInstance, FastifyRequest } from 'fastify';

/** PocketBase's `trustedProxy` settings section. */
export interface TrustedProxy {
  /** Headers holding the client's address, tried in order (`X-Forwarded-For`, `X-Real-IP`, …). */
  headers: string[];
  /** Take the first address of a list instead of the last (the one the nearest proxy added). */
  useLeftmostIP: boolean;
}

/** The client's address as PocketBase's RealIP reads it: the first listed header holding a valid one. */
export function clientAddress(req: FastifyRequest, proxy: TrustedProxy): string {
  for (const name of proxy.headers) {
    const raw = req.headers[name.toLowerCase()];
    const value = Array.isArray(raw) ? raw.join(',') : raw;
    if (!value) continue;
    const list = value.split(',').map((s) => s.trim()).filter((s) => s !== '');
    const ip = proxy.useLeftmostIP ? list[0] : list[list.length - 1];
    if (ip !== undefined && isIP(ip) !== 0) return ip;
  }
  return req.socket?.remoteAddress ?? '';
}

/**
 * Once the `trustedProxy` settings are saved they decide `req.ip` (rate limits, the request log,
 * rules' view of the request, hooks), on every node from the next request; until then
 * CAIRN_TRUST_PROXY does, through Fastify's own trustProxy. Registered first among the request hooks.
 */
export function registerTrustedProxy(app: FastifyInstance, saved: () => TrustedProxy | undefined): void {
  app.addHook('onRequest', (req, _reply, done) => {
    const proxy = saved();
    if (proxy) {
      const ip = clientAddress(req, proxy);
      // An own property shadows Fastify's getter for this request only.
      if (ip !== req.ip) Object.defineProperty(req, 'ip', { value: ip, configurable: true, enumerable: true });
    }
    done();
  });
}
