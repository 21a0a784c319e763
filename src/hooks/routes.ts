import FindMyWay from 'find-my-way';
import type { RouteEvent, RouteMiddleware } from './types.ts';

/** OPTIONS is CORS's (preflights are answered before any route); HEAD is served by GET routes. */
export const ROUTE_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
export type RouteMethod = (typeof ROUTE_METHODS)[number];

const SEGMENT_VALUE = /^\{([A-Za-z_][A-Za-z0-9_]*)(\.\.\.)?\}$/;
const PLAIN_SEGMENT = /^[A-Za-z0-9._~!$&'()+,;=@-]*$/;

/** A route application code added (`routerAdd`). */
export interface HookRoute {
  method: RouteMethod;
  /** As registered: `/api/hello/{name}`. */
  path: string;
  /** In the router's syntax: `/api/hello/:name`, `*` for a `{rest...}` segment. */
  pattern: string;
  /** The name of the `{rest...}` segment, if any. */
  rest?: string;
  handler: (e: RouteEvent) => unknown;
  middlewares: RouteMiddleware[];
  source: string;
}

/** Checks a `routerAdd` path and turns it into the router's syntax; throws a TypeError saying what is wrong. */
export function compileRoutePath(path: unknown): { pattern: string; rest?: string } {
  if (typeof path !== 'string' || !path.startsWith('/')) throw new TypeError(`routerAdd: the path must start with "/" (got ${JSON.stringify(path)})`);
  const segments = path.split('/').slice(1);
  const names = new Set<string>();
  let rest: string | undefined;
  const out = segments.map((segment, i) => {
    const m = SEGMENT_VALUE.exec(segment);
    if (!m) {
      if (!PLAIN_SEGMENT.test(segment) || segment.includes(':') || segment.includes('*')) throw new TypeError(`routerAdd: "${segment}" in ${path} is not a plain segment or a {name} value`);
      return segment;
    }
    const name = m[1];
    if (names.has(name)) throw new TypeError(`routerAdd: {${name}} appears twice in ${path}`);
    names.add(name);
    if (m[2]) {
      if (i !== segments.length - 1) throw new TypeError(`routerAdd: {${name}...} must be the last segment of ${path}`);
      rest = name;
      return '*';
    }
    return `:${name}`;
  });
  return { pattern: `/${out.join('/')}`, rest };
}

export function routeMethod(method: unknown): RouteMethod {
  const upper = typeof method === 'string' ? method.toUpperCase() : '';
  if (!(ROUTE_METHODS as readonly string[]).includes(upper)) throw new TypeError(`routerAdd: unknown method ${JSON.stringify(method)} (use one of ${ROUTE_METHODS.join(', ')})`);
  return upper as RouteMethod;
}

/** A route a path matched, with its `{name}` values. */
export interface RouteMatch {
  route: HookRoute;
  params: Record<string, string>;
}

/** The routes of one load, looked up by method and path. */
export class HookRouter {
  private readonly router = FindMyWay({ ignoreTrailingSlash: false, caseSensitive: true });

  constructor(readonly routes: readonly HookRoute[]) {
    for (const route of routes) this.router.on(route.method, route.pattern, () => undefined, route);
  }

  find(method: string, path: string): RouteMatch | undefined {
    const found = this.router.find(method as RouteMethod, path);
    if (!found) return undefined;
    const route = found.store as HookRoute;
    const params: Record<string, string> = {};
    for (const [key, value] of Object.entries(found.params)) {
      if (value === undefined) continue;
      params[key === '*' && route.rest ? route.rest : key] = value;
    }
    return { route, params };
  }

  /** Whether any route answers `path` for some method (a 405 rather than a 404 then). */
  hasPath(path: string): boolean {
    return this.routes.some((r) => this.router.find(r.method, path)?.store === r);
  }
}

/** A path of the given pattern, with every value made up: what a request to the route could be. */
function samplePath(pattern: string): string {
  return pattern.replace(/:[A-Za-z0-9_]+/g, 'x0hookprobe').replace(/\*$/, 'x0hookprobe');
}

/** A router holding Cairn's own routes, each storing itself, to ask which one answers a path. */
function routerOf(own: ReadonlyArray<{ method: string; url: string }>) {
  const cairn = FindMyWay({ caseSensitive: true });
  for (const r of own) {
    if (!(ROUTE_METHODS as readonly string[]).includes(r.method)) continue;
    try {
      cairn.on(r.method as RouteMethod, r.url, () => undefined, r);
    } catch {
      // The same route twice (HEAD copies): already there.
    }
  }
  return cairn;
}

/**
 * The routes of `own` (Cairn's: `{method, url}` in Fastify's syntax) that a hook route would shadow
 * or be shadowed by: the two answer the same request. Each names both, for the start to refuse.
 */
export function shadowedRoutes(hooks: readonly HookRoute[], own: ReadonlyArray<{ method: string; url: string }>): string[] {
  const cairn = routerOf(own);
  const problems: string[] = [];
  for (const hook of hooks) {
    const theirs = cairn.find(hook.method, samplePath(hook.pattern))?.store as { url: string } | undefined;
    const sample = new HookRouter([hook]);
    const mine = own.find((r) => r.method === hook.method && sample.find(hook.method, samplePath(r.url.replace(/\*$/, ':rest'))) !== undefined);
    const clash = theirs ?? mine;
    if (clash) problems.push(`${hook.method} ${hook.path} (${hook.source}) shadows Cairn's ${hook.method} ${clash.url}`);
  }
  return problems;
}

/**
 * The pb_hooks routes Cairn's own routes answer first: a concrete path (no `{name}` values, no
 * wildcard) some route of Cairn's matches for the same method (`GET /api/health`). PocketBase's
 * router prefers the more specific pattern, and Fastify tries Cairn's routes before the hooks'
 * catch-all, so a route with values or a wildcard is served for every request Cairn does not answer.
 */
export function hiddenPbRoutes(hooks: readonly HookRoute[], own: ReadonlyArray<{ method: string; url: string }>): string[] {
  const cairn = routerOf(own);
  const hidden: string[] = [];
  for (const hook of hooks) {
    if (hook.pattern.includes(':') || hook.pattern.endsWith('*')) continue;
    const theirs = cairn.find(hook.method, hook.pattern)?.store as { url: string } | undefined;
    if (theirs) hidden.push(`${hook.method} ${hook.path} (${hook.source}) is answered by Cairn's ${hook.method} ${theirs.url}`);
  }
  return hidden;
}
