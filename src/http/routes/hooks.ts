import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { createReadStream } from 'node:fs';
import type { RequestContext } from '../../context.ts';
import { ApiError, badRequest, notFound } from '../../errors.ts';
import { type Bound, runChain } from '../../lib/chain.ts';
import { hookApp, type ServiceSlot } from '../../hooks/facade.ts';
import { asHookError } from '../../hooks/fault.ts';
import { HookRouter, type RouteMatch } from '../../hooks/routes.ts';
import { findStaticFile } from '../../hooks/static.ts';
import type { HookSet } from '../../hooks/registry.ts';
import { authView, type HookRuntime } from '../../hooks/runtime.ts';
import type { HookApp, HookAuth, RouteEvent } from '../../hooks/types.ts';
import { requireAdmin } from '../guards.ts';
import { type ContextOptions, fullContext } from '../plugins/context.ts';

interface Answer {
  status: number;
  type?: string;
  body?: string;
  location?: string;
  /** A file below `dir` (pb_hooks' `$apis.static`), found and sent when the route has answered. */
  file?: { dir: string; path: string; fallback: boolean };
}

/** What a route's handler and middlewares get (API contract §16's routes). */
class Request implements RouteEvent {
  next!: () => Promise<void>;
  answer?: Answer;
  private appMade?: HookApp;
  private authMade?: HookAuth | null;

  constructor(
    private readonly req: FastifyRequest,
    private readonly ctx: RequestContext,
    private readonly params: Record<string, string>,
    private readonly slot: ServiceSlot,
    readonly path: string,
    private readonly search: string,
  ) {}

  #query?: URLSearchParams;

  get query(): URLSearchParams {
    return (this.#query ??= new URLSearchParams(this.search));
  }

  /** Set by the chain to the file of the handler or middleware running. */
  current?: string;

  get app(): HookApp {
    return (this.appMade ??= hookApp(this.slot, this.current ?? 'route'));
  }

  get db(): string {
    return this.ctx.dbName;
  }

  get auth(): HookAuth | null {
    if (this.authMade === undefined) this.authMade = authView(this.ctx.auth);
    return this.authMade;
  }

  get method(): string {
    return this.req.method;
  }

  get headers() {
    return this.req.headers;
  }

  pathValue(name: string): string {
    return this.params[name] ?? '';
  }

  async bindBody<T = any>(): Promise<T> {
    const type = String(this.req.headers['content-type'] ?? '').toLowerCase();
    if (type.startsWith('multipart/form-data')) {
      // Form fields; the files are kept for `uploadedFiles` (pb_hooks' e.findUploadedFiles), up to
      // the request limit of record uploads in all.
      const fields: Record<string, unknown> = {};
      const files: Record<string, { name: string; type: string; bytes: Buffer }[]> = {};
      const limit = ((this.slot.current?.records.deps.files as { requestLimit?: number } | undefined)?.requestLimit ?? 32 * 1024 * 1024);
      let total = 0;
      for await (const part of this.req.parts({ limits: { fileSize: limit + 1 } })) {
        if (part.type === 'field') fields[part.fieldname] = part.value;
        else {
          const chunks: Buffer[] = [];
          for await (const chunk of part.file) {
            total += chunk.length;
            if (total > limit) throw new ApiError(413, 'The request body is too large.');
            chunks.push(chunk as Buffer);
          }
          (files[part.fieldname] ??= []).push({ name: part.filename, type: part.mimetype, bytes: Buffer.concat(chunks) });
        }
      }
      this.uploaded = files;
      return fields as T;
    }
    return (this.req.body ?? {}) as T;
  }

  /** The files of a multipart body, by field, once `bindBody` read it. */
  uploaded?: Record<string, { name: string; type: string; bytes: Buffer }[]>;

  private respond(answer: Answer): void {
    if (this.answer) throw new Error('the route has already answered');
    if (!Number.isInteger(answer.status) || answer.status < 100 || answer.status > 599) throw new TypeError(`not an HTTP status: ${answer.status}`);
    this.answer = answer;
  }

  /** The client's address. */
  get ip(): string {
    return this.req.ip;
  }

  /** A header of the answer; several values (Set-Cookie lines) go as several lines. */
  header(name: string, value: string | string[]): void {
    (this.headersOut ??= {})[String(name).toLowerCase()] = Array.isArray(value) ? value.map(String) : String(value);
  }

  headersOut?: Record<string, string | string[]>;

  html(status: number, text: string): void {
    this.respond({ status, type: 'text/html; charset=utf-8', body: String(text) });
  }

  /** An answer as pb_hooks give it: status, content type and body text. */
  raw(status: number, type: string | undefined, body: string | undefined): void {
    this.respond({ status, type, body });
  }

  json(status: number, data: unknown): void {
    this.respond({ status, type: 'application/json; charset=utf-8', body: JSON.stringify(data) ?? 'null' });
  }

  string(status: number, text: string): void {
    this.respond({ status, type: 'text/plain; charset=utf-8', body: String(text) });
  }

  noContent(status = 204): void {
    this.respond({ status });
  }

  /** `$apis.static`: the file `path` names below `dir` (see findStaticFile). */
  staticFile(dir: string, path: string, fallback: boolean): void {
    this.respond({ status: 200, file: { dir, path, fallback } });
  }

  redirect(status: number, url: string): void {
    if (status < 300 || status > 399) throw new TypeError(`a redirect takes a 3xx status, not ${status}`);
    this.respond({ status, location: String(url) });
  }
}

async function send(reply: FastifyReply, answer: Answer | undefined, headers?: Record<string, string | string[]>): Promise<FastifyReply> {
  if (headers) for (const [k, v] of Object.entries(headers)) reply.header(k, v);
  if (!answer) return reply.status(204).send();
  if (answer.file) {
    const found = await findStaticFile(answer.file.dir, answer.file.path, answer.file.fallback);
    if (!found) throw notFound();
    reply.type(found.type).header('content-length', found.size).header('x-content-type-options', 'nosniff');
    return reply.status(200).send(createReadStream(found.file));
  }
  if (answer.location) reply.header('location', answer.location);
  if (answer.type) reply.type(answer.type);
  return reply.status(answer.status).send(answer.body);
}

const chains = new WeakMap<RouteMatch['route'], Bound<Request>[]>();

/** A route's middlewares as the chain runs them, made once per route. */
function chainOf(route: RouteMatch['route']): Bound<Request>[] {
  let chain = chains.get(route);
  if (!chain) chains.set(route, (chain = route.middlewares.map((handler) => ({ handler, source: route.source }))));
  return chain;
}

const routers = new WeakMap<HookSet, HookRouter>();

function routerOf(set: HookSet): HookRouter {
  let router = routers.get(set);
  if (!router) routers.set(set, (router = new HookRouter(set.routes)));
  return router;
}

/**
 * `GET /api/hooks` (administrators: what the hooks screen shows) and the routes application code adds
 * (`routerAdd`). Those are served by one catch-all route, which Fastify tries only after every route of
 * Cairn's, so a development reload can change them without re-registering anything. A path no hook
 * route answers is the usual 404. The request's database and caller are resolved only for a match,
 * as the context plugin does for Cairn's routes; CORS, rate limits and the request log apply as to
 * every route.
 */
export function hookRoutes(runtime: HookRuntime, context: ContextOptions, serveRoutes: boolean, unmatched?: UnmatchedHandler) {
  return async (app: FastifyInstance): Promise<void> => {
    app.get('/api/hooks', { config: { database: false } }, async (req) => {
      requireAdmin(req.ctx);
      return runtime.status();
    });
    app.post<{ Params: { name: string } }>('/api/hooks/cron/:name', { config: { database: false } }, async (req, reply) => {
      requireAdmin(req.ctx);
      await runtime.runCron(req.params.name);
      return reply.status(204).send();
    });
    if (!serveRoutes) return;

    app.addContentTypeParser('text/plain', { parseAs: 'string' }, (_req, body, done) => done(null, body));

    app.route({
      method: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'],
      url: '/*',
      config: { database: false, authenticate: false, multipart: true },
      handler: hookRouteHandler(runtime, context, unmatched),
    });
  };
}

/** Whether a hook route answers `GET path` (`GET /`: an app's own page wins over the redirect to the console). */
export function hookRouteAnswers(runtime: HookRuntime, path: string): boolean {
  return routerOf(runtime.current).find('GET', path) !== undefined;
}

/** What answers a request no hook route matches, where it wants to (the public folder); else the 404. */
export interface UnmatchedHandler {
  serves(method: string, path: string): boolean;
  handle(req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply>;
}

/** What answers a request with the hook route its method and path match (`unmatched`, or 404, for none). */
export function hookRouteHandler(runtime: HookRuntime, context: ContextOptions, unmatched?: UnmatchedHandler) {
  return async (req: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const raw = req.url;
    const q = raw.indexOf('?');
    const path = q < 0 ? raw : raw.slice(0, q);
    // HEAD is GET without the body (Fastify leaves the body out).
    const match: RouteMatch | undefined = routerOf(runtime.current).find(req.method === 'HEAD' ? 'GET' : req.method, path);
    if (!match) {
      if (unmatched?.serves(req.method, path)) return unmatched.handle(req, reply);
      throw notFound();
    }
    const ctx = await fullContext(context, req);
    let decoded = path;
    try {
      if (path.includes('%')) decoded = decodeURI(path);
    } catch {
      throw badRequest('Malformed URL.');
    }
    const e = new Request(req, ctx, match.params, runtime.slot, decoded, q < 0 ? '' : raw.slice(q + 1));
    const { route } = match;
    await runChain(
      e,
      chainOf(route),
      async () => {
        let value: unknown;
        try {
          value = await route.handler(e);
        } catch (err) {
          throw asHookError(err, route.source);
        }
        // A handler may also return what it answers with (200 JSON).
        if (value !== undefined && !e.answer) e.json(200, value);
      },
      asHookError,
    );
    return send(reply, e.answer, e.headersOut);
  };
}
