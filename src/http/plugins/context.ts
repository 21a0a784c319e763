import type { FastifyInstance, FastifyRequest } from 'fastify';
import { type Auth, GUEST, type RequestContext, type RequestInfo } from '../../context.ts';
import type { Database, DatabaseRegistry } from '../../storage/index.ts';
import { DEFAULT_DATABASE } from '../../storage/index.ts';

declare module 'fastify' {
  interface FastifyRequest {
    ctx: RequestContext;
  }
  interface FastifyContextConfig {
    /** false for routes that do not work on a database (health, admins, settings, migrations). */
    database?: boolean;
    /**
     * false for routes that check their own credentials (workflow events with a secret, downloads with
     * a file token): the Authorization header is then not read as a Cairn token.
     */
    authenticate?: boolean;
  }
}

/** Works out who is calling; the auth domain provides it. */
export type Authenticate = (req: FastifyRequest, dbName: string, db: Database | undefined) => Promise<Auth>;

export interface ContextOptions {
  registry: DatabaseRegistry;
  authenticate?: Authenticate;
}

/**
 * The request as rules may read it. Body and query are read when a rule asks for them: the context is
 * built before the body is parsed. A class, so the getters live on the prototype and building one per
 * request is a plain allocation.
 */
class LazyRequestInfo implements RequestInfo {
  readonly method: string;
  readonly headers: FastifyRequest['headers'];
  // A private field, so copying or serializing the info never reaches into Fastify's request.
  readonly #req: FastifyRequest;

  constructor(req: FastifyRequest) {
    this.method = req.method;
    this.headers = req.headers;
    this.#req = req;
  }

  get query(): Record<string, unknown> {
    return (this.#req.query ?? {}) as Record<string, unknown>;
  }

  get body(): unknown {
    return this.#req.body;
  }

  get ip(): string {
    return this.#req.ip;
  }
}

/**
 * The full context of a request whose route skipped it (`database: false, authenticate: false`) and
 * finds out later that it needs one: application routes, which the catch-all route dispatches.
 */
export async function fullContext(options: ContextOptions, req: FastifyRequest): Promise<RequestContext> {
  const header = req.headers['x-dbname'];
  const dbName = typeof header === 'string' && header !== '' ? header : DEFAULT_DATABASE;
  const db = options.registry.opened(dbName) ?? (await options.registry.served(dbName));
  const auth = options.authenticate && req.headers.authorization !== undefined ? await options.authenticate(req, dbName, db) : GUEST;
  return { dbName, db, auth, request: new LazyRequestInfo(req) };
}

/**
 * Builds the request context in one place, before any route runs: the database named by x-dbname
 * (400 malformed, 404 unknown, never created) and the caller's identity. A request without an
 * Authorization header is a guest; `authenticate` is asked only about requests that carry one.
 * When the database is already open and there is no header, the context is built without a promise:
 * the common anonymous request pays no asynchronous round trip here.
 */
export function registerContext(app: FastifyInstance, options: ContextOptions): void {
  app.decorateRequest('ctx', null as unknown as RequestContext);

  const build = async (req: FastifyRequest, dbName: string, opened: Database | undefined, needsDatabase: boolean, checksCaller: boolean): Promise<void> => {
    const db = needsDatabase ? (opened ?? (await options.registry.served(dbName))) : undefined;
    const auth = checksCaller ? await options.authenticate!(req, dbName, db) : GUEST;
    req.ctx = { dbName, db: db as Database, auth, request: new LazyRequestInfo(req) };
  };

  app.addHook('onRequest', (req, _reply, done) => {
    const header = req.headers['x-dbname'];
    const dbName = typeof header === 'string' && header !== '' ? header : DEFAULT_DATABASE;
    // Fastify builds a new object on every read of routeOptions: read it once.
    const route = req.routeOptions;
    const needsDatabase = route.url !== undefined && route.config?.database !== false;
    const checksCaller = options.authenticate !== undefined && route.config?.authenticate !== false && req.headers.authorization !== undefined;
    const db = needsDatabase ? options.registry.opened(dbName) : undefined;
    if (!checksCaller && (db !== undefined || !needsDatabase)) {
      req.ctx = { dbName, db: db as Database, auth: GUEST, request: new LazyRequestInfo(req) };
      done();
      return;
    }
    build(req, dbName, db, needsDatabase, checksCaller).then(() => done(), done);
  });
}
