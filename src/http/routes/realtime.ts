import type { OAuth2Service } from '../../auth/oauth2/login.ts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ServerResponse } from 'node:http';
import { bearerOf } from '../../auth/authenticate.ts';
import { badRequest } from '../../errors.ts';
import { isPlainObject } from '../../lib/objects.ts';
import type { EventStream } from '../../realtime/client.ts';
import type { RealtimeService } from '../../realtime/service.ts';

const STREAM_HEADERS = {
  'content-type': 'text/event-stream',
  'cache-control': 'no-store',
  // Proxies such as nginx would otherwise hold messages back to fill their buffers.
  'x-accel-buffering': 'no',
};

/** A hijacked response as a client's event stream. */
class ResponseStream implements EventStream {
  private headers?: Record<string, unknown>;

  constructor(
    private readonly res: ServerResponse,
    headers: Record<string, unknown>,
  ) {
    this.headers = headers;
    // A stream that ends closes its connection: a client reconnects anyway, and shutdown then has no
    // idle keep-alive connection left to wait for.
    res.shouldKeepAlive = false;
    // Writes after the peer went away fail on the stream; its 'close' already told the service.
    res.on('error', () => {});
  }

  write(chunk: Buffer | string): void {
    if (this.res.destroyed || this.res.writableEnded) return;
    if (this.headers) {
      this.res.writeHead(200, this.headers as Record<string, string>);
      this.headers = undefined;
    }
    this.res.write(chunk);
  }

  get buffered(): number {
    return this.res.writableLength;
  }

  end(): void {
    if (!this.res.writableEnded) this.res.end();
  }

  destroy(): void {
    this.res.destroy();
  }
}

/** PocketBase's realtime endpoints (API contract §10). Thin: the stream and the body go to the realtime domain. */
export function realtimeRoutes(realtime: RealtimeService, oauth2?: Pick<OAuth2Service, 'rememberAppleName'>) {
  return async (app: FastifyInstance): Promise<void> => {
    // The SDK's EventSource sends neither a token nor x-dbname: both come with the subscriptions.
    app.get('/api/realtime', { config: { database: false, authenticate: false } }, async (req, reply: FastifyReply) => {
      realtime.admit();
      const headers = { ...reply.getHeaders(), ...STREAM_HEADERS };
      if (req.method === 'HEAD') return reply.headers(STREAM_HEADERS).send();
      const id = await realtime.preconnect({ headers: req.headers, ip: req.ip });
      reply.hijack();
      const client = await realtime.connect(new ResponseStream(reply.raw, headers), id, req.ip);
      if (reply.raw.destroyed) realtime.disconnected(client);
      else reply.raw.on('close', () => realtime.disconnected(client));
    });

    app.post('/api/realtime', async (req, reply) => {
      const header = req.headers.authorization;
      await realtime.subscribe({ dbName: req.ctx.dbName, auth: req.ctx.auth, bearer: bearerOf(Array.isArray(header) ? header[0] : header), ip: req.ip }, req.body);
      return reply.status(204).send();
    });

    // PocketBase's OAuth2 redirect for the SDK's popup flow: the provider sends the browser here with
    // `code` and `state` (the waiting realtime client's id), in the query or (Apple's form_post) a
    // form; the code goes to that client and the popup on to the dashboard's page saying how it went.
    const redirect = async (req: FastifyRequest, reply: FastifyReply, fields: Record<string, unknown>) => {
      const text = (v: unknown) => (typeof v === 'string' ? v : Array.isArray(v) && typeof v[0] === 'string' ? v[0] : '');
      const data = { state: text(fields.state), code: text(fields.code), error: text(fields.error) };
      // Apple sends the user's name once, in this form only: kept for the sign-in with this code.
      if (data.code !== '' && data.error === '' && text(fields.user) !== '') oauth2?.rememberAppleName(data.code, text(fields.user));
      const handed = data.state !== '' && (await realtime.oauth2Redirect(data, req.ip));
      const ok = handed && data.error === '' && data.code !== '';
      // As PocketBase: 307 keeps a GET a GET; a POST's browser follows with a GET (303).
      return reply.redirect(ok ? OAUTH2_SUCCESS : OAUTH2_FAILURE, req.method === 'GET' ? 307 : 303);
    };
    const open = { config: { database: false, authenticate: false } } as const;
    app.get('/api/oauth2-redirect', open, (req, reply) => redirect(req, reply, (req.query ?? {}) as Record<string, unknown>));
    app.post('/api/oauth2-redirect', open, (req, reply) => {
      // A provider posts a form; anything else is no redirect of one.
      if (req.body !== undefined && !isPlainObject(req.body)) throw badRequest('The request body must be a form or a JSON object.');
      return redirect(req, reply, (req.body ?? {}) as Record<string, unknown>);
    });
  };
}

const OAUTH2_SUCCESS = '/_/#/auth/oauth2-redirect-success';
const OAUTH2_FAILURE = '/_/#/auth/oauth2-redirect-failure';
