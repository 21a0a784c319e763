import type { Database } from './storage/index.ts';

/**
 * Who is calling and which database the request uses. Built once per request by the HTTP layer
 * (src/http/plugins/context.ts) and handed to domain code, which never sees the HTTP framework.
 */

export interface AdminAuth {
  type: 'admin';
  id: string;
  email: string;
  /** Signed in with a static token (impersonation), which a refresh does not renew. */
  staticToken?: boolean;
  /**
   * Signed in as PocketBase ≥ 0.23's clients sign in (a `_superusers` token): the client speaks that
   * generation, so the collections it creates are made as PocketBase ≥ 0.23 makes them.
   */
  superuser?: boolean;
}

export interface RecordAuth {
  type: 'record';
  id: string;
  collectionId: string;
  collectionName: string;
  /** The authenticated record as stored (secrets included; never serialized as is). */
  record: Record<string, unknown>;
  /** Signed in with a static token (impersonation), which a refresh does not renew. */
  staticToken?: boolean;
}

export interface ApiKeyAuth {
  type: 'apikey';
  id: string;
  name: string;
  roles: string[];
}

export type Auth = { type: 'guest' } | AdminAuth | RecordAuth | ApiKeyAuth;

export const GUEST: Auth = Object.freeze({ type: 'guest' }) as Auth;

/**
 * Where a rule is being decided, as PocketBase's `@request.context` names it: `default` for a request's
 * own action, `expand` for the records an expand reads, `realtime` for a realtime message,
 * `protectedFile` for a protected file's download, `batch` for a request of a batch, `password`,
 * `otp` and `oauth2` for the sign-in of that name (its auth rule, and the record an OAuth2 sign-in
 * creates).
 */
export type RuleContext = 'default' | 'expand' | 'realtime' | 'protectedFile' | 'batch' | 'password' | 'otp' | 'oauth2';

/** The parts of the request that access rules may read as `@request.*`. */
export interface RequestInfo {
  method: string;
  headers: Record<string, string | string[] | undefined>;
  query: Record<string, unknown>;
  body: unknown;
  ip: string;
  /** `@request.context`; `default` when not set. */
  context?: RuleContext;
}

export interface RequestContext {
  dbName: string;
  /** The database named by `x-dbname` (or `main`). */
  db: Database;
  auth: Auth;
  request: RequestInfo;
}

/**
 * A request's info with some parts replaced, the others read from it as they are asked for. Not a
 * spread: the HTTP layer's info reads query, body and address through getters (src/http/plugins/
 * context.ts), which a spread leaves behind.
 */
class ChangedRequestInfo implements RequestInfo {
  constructor(
    private readonly base: RequestInfo,
    private readonly changes: Partial<RequestInfo>,
  ) {}

  get method(): string {
    return this.changes.method ?? this.base.method;
  }

  get headers(): RequestInfo['headers'] {
    return this.changes.headers ?? this.base.headers;
  }

  get query(): Record<string, unknown> {
    return this.changes.query ?? this.base.query;
  }

  get body(): unknown {
    return 'body' in this.changes ? this.changes.body : this.base.body;
  }

  get ip(): string {
    return this.changes.ip ?? this.base.ip;
  }

  get context(): RuleContext | undefined {
    return this.changes.context ?? this.base.context;
  }
}

/** `ctx` with some parts of its request replaced (a resolved body, no query). */
export function withRequest(ctx: RequestContext, changes: Partial<RequestInfo>): RequestContext {
  return { ...ctx, request: new ChangedRequestInfo(ctx.request, changes) };
}

/** `ctx` with rules decided in `context` (`@request.context`). */
export function inRuleContext(ctx: RequestContext, context: RuleContext): RequestContext {
  return ctx.request.context === context ? ctx : withRequest(ctx, { context });
}

/** Administrators and `admin`-role API keys manage everything and bypass access rules. */
export function isPrivileged(auth: Auth): boolean {
  return auth.type === 'admin' || (auth.type === 'apikey' && auth.roles.includes('admin'));
}

/** The caller of work no request started: full privileges, and no client to show records to. */
const SYSTEM: Auth = Object.freeze({ type: 'admin', id: 'system', email: '' }) as Auth;

/** A context for work that no request started (CLI, cron, workflows, hooks' own reads and writes): full privileges. */
export function systemContext(dbName: string, db: Database): RequestContext {
  return {
    dbName,
    db,
    auth: SYSTEM,
    request: { method: 'SYSTEM', headers: {}, query: {}, body: {}, ip: '' },
  };
}

/** Whether `ctx` is a `systemContext`: its records reach no client (no enrich hooks run for them). */
export function isSystem(ctx: RequestContext): boolean {
  return ctx.auth === SYSTEM;
}
