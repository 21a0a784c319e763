import type { RawRequest } from './http.ts';
import type { RouteSpec } from './routes.ts';

/** One hostile request and the statuses it may get (any non-5xx when absent). */
export interface Case {
  label: string;
  request: RawRequest;
  expect?: number[];
}

export interface Callers {
  admin: string;
  user: string;
  readerKey: string;
  badTokens: Record<string, string>;
}

const JSON_TYPE = { 'content-type': 'application/json' };
const DEEP_MARK = '\u0001deep\u0001';
const DEEP = JSON.stringify(DEEP_MARK);

/** A value that serializes to JSON nested `depth` levels deep (JSON.stringify itself would overflow). */
export function deep(): string {
  return DEEP_MARK;
}

/** JSON text of `value`, with `deep()` markers replaced by 20,000 nested objects. */
export function jsonText(value: unknown): string {
  const depth = 20000;
  return JSON.stringify(value).replaceAll(DEEP, '{"a":'.repeat(depth) + '1' + '}'.repeat(depth));
}

const MALFORMED_JSON = ['{"a": ', "{'a': 1}", '{"a": 1}}', '\u0000', '{"a": 1, "a": }', 'nul', '\ufeff{"a":1'];
const NON_OBJECTS = ['[]', '[{}]', '"text"', '123', 'true'];
const PROTO = ['{"__proto__": {"polluted": true}}', '{"constructor": {"prototype": {"polluted": true}}}'];
const WRONG_VALUES: unknown[] = [
  123,
  -1,
  1.5e308,
  true,
  {},
  [],
  null,
  ['x', {}],
  { $gt: '' },
  'x'.repeat(100_000),
  '\u0000',
  '('.repeat(20_000),
  '../../../etc/passwd',
  "' OR 1=1 --",
  deep(),
];
export const HOSTILE_SEGMENTS = [
  '..%2F..%2Fsystem',
  '%2e%2e',
  '..',
  'a%00b',
  '%00',
  'x'.repeat(3000),
  'a%2Fb',
  "'%20OR%201=1--",
  '%22%3B%20DROP%20TABLE%20canary%3B--',
  '%ZZ',
  '%C0%AE%C0%AE',
  '__proto__',
  'constructor',
  '%E2%80%AE',
  '*',
  '%20',
];
export const HOSTILE_DATABASES = ['../x', 'A', 'a'.repeat(200), 'nope', '__proto__', 'constructor', 'system', 'main.db', '%2e%2e', 'main\\..', '_cairn'];
const GENERIC_QUERY = ['abc', '-1', '1e99', '99999999999999999999', '1.5', '', '%00', 'x'.repeat(3000), '__proto__', '%ZZ'];
const QUERY_VALUES: Record<string, string[]> = {
  filter: [
    '1=1) OR (1=1',
    'id = "" || 1=1 --',
    "'; DROP TABLE canary; --",
    'title ~ "%" UNION SELECT * FROM _admins',
    '@collection.canary.title ?= "x"',
    '@request.auth.id = ""',
    '('.repeat(3000),
    'title = "\\',
    `${'owner.'.repeat(10)}id = "x"`,
    'sweep_via_parent.sweep_via_parent.sweep_via_parent.title ~ "x"',
    'canary_via_nope.title = 1',
    '__proto__ = 1 || constructor = 1',
    'title:lower = "x" && meta.a.b.c.d = 1 && meta.__proto__ = 1',
    'meta.$..x = 1',
    'passwordHash != "" || tokenKey != ""',
    'owner.passwordHash != ""',
    'n > 1e999999',
    'when > "not a date"',
    `title = "${'x'.repeat(2000)}"`,
    'title ?= ["a"]',
  ],
  sort: ['-title,@random,__proto__', 'title;DROP TABLE canary', '((', `${'owner.'.repeat(10)}id`, 'owner.passwordHash', '-'.repeat(100), 'meta.a', '@rowid', 'sweep_via_parent.title'],
  expand: [
    'parent.parent.parent.parent.parent.parent',
    'parent.parent.parent.parent.parent.parent.parent.parent',
    'owner,owner,owner',
    'sweep_via_parent.sweep_via_parent.sweep_via_parent',
    '__proto__',
    'constructor.prototype',
    'a'.repeat(3000),
    'parent..parent',
    'title',
    'nope_via_x',
  ],
  fields: ['*,expand.*', 'title:excerpt(abc)', 'title:excerpt(99999999999999)', '*:excerpt(1,true)', '__proto__', 'a.b.c.d.e.f.g', ',,,', 'expand.__proto__.x', 'title:excerpt(-1)', ':excerpt('],
  search: ['"unterminated', 'NEAR(a b', 'title:x', '* OR *', 'x'.repeat(2000), 'a AND (b OR'],
  redirectUrl: ['javascript:alert(1)', 'http://[::1', '//evil.example'],
  version: ['../../system', '20240101_000000_000', '../migrations/x'],
  name: ['../../evil', 'a/b', '.hidden', 'x'.repeat(300)],
  token: ['a.b.c', 'x'.repeat(3000)],
  db: ['../x', 'nope', 'A'],
  status: ['nope', 'success'],
};

function fill(route: string, params: Record<string, string>): string {
  return route.replace(/:([A-Za-z]+)/g, (_, name: string) => params[name] ?? 'x');
}

function auth(token: string | undefined): Record<string, string> {
  return token === undefined ? {} : { authorization: token.startsWith('Bearer ') ? token : `Bearer ${token}` };
}

/** Every hostile request for one route. */
export function casesFor(spec: RouteSpec, callers: Callers): Case[] {
  const [method, pattern] = spec.route.split(' ');
  const params = spec.params ?? {};
  const path = fill(pattern, params);
  const hasBody = method !== 'GET' && method !== 'DELETE';
  const caller = spec.as === 'admin' || (spec.as === undefined && spec.access !== 'public') ? callers.admin : undefined;
  const out: Case[] = [];
  const add = (label: string, request: Partial<RawRequest> & { token?: string }, expect?: number[]) => {
    const { token, ...rest } = request;
    out.push({ label, request: { method, path, ...rest, headers: { ...auth(token), ...rest.headers }, stream: spec.stream }, expect });
  };

  // Callers: no token, broken and misplaced tokens, and identities without the right to the route.
  if (spec.access !== 'public') add('no token', {}, [spec.guest ?? 401]);
  if (!spec.ignoresAuthorization) {
    for (const [name, token] of Object.entries(callers.badTokens)) add(`token: ${name}`, { token }, [401]);
  }
  const nonAdmin = spec.access === 'admin' || spec.access === 'superuser' ? [403] : spec.access === 'admin-session' ? [401] : undefined;
  if (nonAdmin) {
    add('a user token', { token: callers.user }, nonAdmin);
    add('a non-admin API key', { token: callers.readerKey }, nonAdmin);
  }
  if (method === 'GET') out.push({ label: 'HEAD without a token', request: { method: 'HEAD', path } });

  // Databases: a route on a database refuses hostile names before it does anything.
  if (!spec.noDb) {
    for (const db of HOSTILE_DATABASES) add(`x-dbname ${db.slice(0, 20)}`, { token: callers.admin, headers: { 'x-dbname': db } }, [400, 404]);
  }

  // Path parameters, one at a time.
  for (const name of Object.keys(params)) {
    for (const segment of HOSTILE_SEGMENTS) {
      out.push({
        label: `:${name} = ${segment.slice(0, 20)}`,
        request: { method, path: fill(pattern, { ...params, [name]: segment }), headers: auth(caller ?? callers.admin) },
        expect: [400, 404],
      });
    }
  }

  // Bodies: Fastify refuses these before any handler runs, so they go to every writing route.
  if (method !== 'GET') {
    for (const raw of MALFORMED_JSON) add(`malformed JSON ${JSON.stringify(raw)}`, { token: callers.admin, headers: JSON_TYPE, body: raw }, [400]);
    add('2 MiB body', { token: callers.admin, headers: JSON_TYPE, body: jsonText({ a: 'x'.repeat(2 * 1024 * 1024) }) }, [413]);
    add('text/plain body', { token: callers.admin, headers: { 'content-type': 'text/plain' }, body: 'a=1' }, [415]);
    for (const raw of PROTO) add(`prototype pollution ${raw}`, { token: callers.admin, headers: JSON_TYPE, body: raw }, [400]);
  }
  // Bodies from the route's own caller and, on record routes, from a signed-in user too (whose writes
  // go through the rules and the admin-only fields).
  const callersOf: Array<[string, string | undefined]> = [['', caller]];
  if (spec.records) callersOf.push(['user ', callers.user]);
  for (const [who, token] of callersOf) {
    if (hasBody && spec.body) {
      // 400, or the route's own refusal when it has one before reading the body (`init` once an admin exists).
      for (const raw of NON_OBJECTS) {
        const allowed = spec.arrayBody && raw.startsWith('[');
        add(`${who}JSON ${raw} body`, { token, headers: JSON_TYPE, body: raw }, allowed ? undefined : [400, 403]);
      }
      add(`${who}JSON null body`, { token, headers: JSON_TYPE, body: 'null' });
      for (const key of spec.body) {
        for (const value of WRONG_VALUES) {
          const shown = typeof value === 'string' ? value.slice(0, 12) : JSON.stringify(value)?.slice(0, 12);
          add(`${who}${key} = ${shown}`, { token, headers: JSON_TYPE, body: jsonText({ [key]: value }) });
          if (spec.base) add(`${who}${key} = ${shown} in a valid body`, { token, headers: JSON_TYPE, body: jsonText({ ...spec.base, [key]: value }) });
        }
      }
    }
    for (const [i, body] of (spec.bodies ?? []).entries()) add(`${who}hostile body ${i}: ${jsonText(body).slice(0, 60)}`, { token, headers: JSON_TYPE, body: jsonText(body) });
    for (const raw of spec.raw ?? []) add(`${who}${raw.label}`, { token, headers: { 'content-type': raw.contentType }, body: raw.body });
  }

  // Query parameters, from the same callers.
  const body = method === 'GET' ? {} : { headers: JSON_TYPE, body: jsonText(spec.base ?? {}) };
  for (const [who, token] of callersOf) {
    if (method === 'GET') add(`${who}junk query keys`, { token, path: `${path}?a[b]=1&__proto__=x&constructor[prototype]=1&page=1&page=2` });
    for (const key of spec.query ?? []) {
      for (const value of [...GENERIC_QUERY, ...(QUERY_VALUES[key] ?? [])]) {
        const encoded = value.includes('%') && GENERIC_QUERY.includes(value) ? value : encodeURIComponent(value);
        add(`${who}?${key}=${value.slice(0, 30)}`, { token, path: `${path}?${key}=${encoded}`, ...body });
      }
      add(`${who}?${key} twice`, { token, path: `${path}?${key}=a&${key}=b`, ...body });
    }
  }
  return out;
}
