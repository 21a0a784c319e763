import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DashboardAssets } from '../../dashboard/assets.ts';
import { notFound } from '../../errors.ts';

// Static files: no database, and an Authorization header (a stale token) is none of their business.
const STATIC = { config: { database: false, authenticate: false } } as const;

// The app talks to its own origin only; uploaded files it previews come from the same origin, local
// previews of files being uploaded are blob: URLs. Framing is refused (clickjacking of admin actions).
const CSP =
  "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; media-src 'self' blob:; " +
  "connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/**
 * What may answer `GET /` before the redirect to the console: a pb_hooks app's own `GET /` (or a
 * catch-all covering it), then the app's public folder; the first whose `answers('/')` serves it.
 */
export interface RootRoute {
  answers(path: string): boolean | Promise<boolean>;
  handle(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply>;
}

/** The administration dashboard (API contract §14) at `/_/`, built into `dashboard/dist` by `npm install`. */
export function dashboardRoutes(assets: DashboardAssets, roots: readonly RootRoute[] = []) {
  const serve = async (req: FastifyRequest, reply: FastifyReply) => {
    const urlPath = req.url.split('?')[0].slice('/_/'.length);
    const found = await assets.find(urlPath);
    if (found.kind === 'not-built') {
      throw notFound('The dashboard is not built: run `npm install` (or `npm run build:dashboard`) in the Cairn folder, then reload.');
    }
    if (found.kind === 'not-found') throw notFound();
    const { asset } = found;
    reply
      .header('content-type', asset.type)
      .header('cache-control', asset.cacheControl)
      .header('etag', asset.etag)
      .header('vary', 'accept-encoding')
      .header('x-content-type-options', 'nosniff');
    if (asset.type.startsWith('text/html')) {
      reply.header('content-security-policy', CSP).header('x-frame-options', 'DENY').header('referrer-policy', 'no-referrer');
    }
    const ifNoneMatch = req.headers['if-none-match'];
    if (ifNoneMatch !== undefined && ifNoneMatch.split(',').some((t) => t.trim() === asset.etag)) return reply.status(304).send();
    const acceptsGzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    if (asset.gzip && acceptsGzip) return reply.header('content-encoding', 'gzip').send(asset.gzip);
    return reply.send(asset.body);
  };

  return async (app: FastifyInstance): Promise<void> => {
    app.get('/', STATIC, async (req, reply) => {
      for (const root of roots) if (await root.answers('/')) return root.handle(req, reply);
      return reply.redirect('/_/', 302);
    });
    app.get('/_', STATIC, async (_req, reply) => reply.redirect('/_/', 302));
    // PocketBase v0.39's admin UI loads its UI extensions' main.js files from here, concatenated; Cairn's
    // dashboard has no extensions, so it is PocketBase's answer without any: an empty script.
    app.get('/_/extensions.js', STATIC, async (_req, reply) => reply.header('content-type', 'text/javascript').header('cache-control', 'no-cache').send(''));
    app.get('/_/*', STATIC, serve);
  };
}
