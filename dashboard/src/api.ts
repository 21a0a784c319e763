// The dashboard's only way to the server: Cairn's public API, same origin, as an administrator.

/** The API's error body (API contract §3). */
export interface ErrorBody {
  code: number;
  message: string;
  data: Record<string, unknown>;
}

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly data: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

export interface Admin {
  id: string;
  email: string;
  avatar?: number;
  created: string;
  updated: string;
}

export interface Page<T> {
  page: number;
  perPage: number;
  totalItems: number;
  totalPages: number;
  items: T[];
}

type Listener = () => void;

/** A value components can subscribe to (see useStore). */
export class Store<T> {
  private listeners = new Set<Listener>();
  constructor(private value: T) {}
  get(): T {
    return this.value;
  }
  set(value: T): void {
    this.value = value;
    for (const l of this.listeners) l();
  }
  subscribe(listener: Listener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
}

// The PocketBase JS SDK's LocalAuthStore keeps `{token, model}` under this key; keeping the same
// shape lets an app on this origin that uses the SDK share the administrator's session.
const AUTH_KEY = 'pocketbase_auth';
const DB_KEY = 'cairn_dashboard_db';

export interface Session {
  token: string;
  admin: Admin;
}

function readSession(): Session | null {
  try {
    const raw = JSON.parse(localStorage.getItem(AUTH_KEY) ?? 'null') as { token?: unknown; model?: unknown } | null;
    if (!raw || typeof raw.token !== 'string' || raw.token === '' || typeof raw.model !== 'object' || raw.model === null) return null;
    if (tokenExpired(raw.token)) return null;
    return { token: raw.token, admin: raw.model as Admin };
  } catch {
    return null;
  }
}

/** A JWT's claims, read without checking it (the server stays the judge); undefined when it is not one. */
export function tokenClaims(token: string): { exp?: number; iat?: number; refreshable?: boolean } | undefined {
  try {
    return JSON.parse(atob(token.split('.')[1].replace(/-/g, '+').replace(/_/g, '/')));
  } catch {
    return undefined;
  }
}

/** Whether a JWT's `exp` has passed (only to avoid a doomed request). */
function tokenExpired(token: string): boolean {
  const claims = tokenClaims(token);
  return !claims || (typeof claims.exp === 'number' && claims.exp * 1000 <= Date.now());
}

export const session = new Store<Session | null>(readSession());

export function signIn(token: string, admin: Admin): void {
  localStorage.setItem(AUTH_KEY, JSON.stringify({ token, model: admin }));
  session.set({ token, admin });
}

export function signOut(): void {
  localStorage.removeItem(AUTH_KEY);
  session.set(null);
}

// Another tab signing in or out changes this one too.
addEventListener('storage', (e) => {
  if (e.key === AUTH_KEY) session.set(readSession());
});

/** The database (`x-dbname`) the console works on. */
export const database = new Store<string>(localStorage.getItem(DB_KEY) ?? 'main');
database.subscribe(() => localStorage.setItem(DB_KEY, database.get()));

export interface RequestOptions {
  body?: unknown;
  /** Multipart or raw bodies (uploads). */
  form?: FormData | Blob;
  query?: Record<string, string | number | boolean | undefined | null>;
  /** false for instance-wide endpoints; a name to address another database than the current one. */
  db?: string | false;
  /** Sign-in requests: a 401 there is a wrong password, not an expired session. */
  anonymous?: boolean;
  as?: 'json' | 'blob' | 'text';
  signal?: AbortSignal;
}

export function queryString(query: RequestOptions['query']): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined && v !== null && v !== '') params.set(k, String(v));
  const s = params.toString();
  return s ? `?${s}` : '';
}

/** One API call; errors become ApiError with the server's message and field errors. */
export async function api<T = any>(method: string, path: string, options: RequestOptions = {}): Promise<T> {
  const headers: Record<string, string> = {};
  const current = session.get();
  if (current && !options.anonymous) headers.Authorization = current.token;
  if (options.db !== false) headers['x-dbname'] = options.db ?? database.get();
  let body: BodyInit | undefined;
  if (options.form !== undefined) {
    body = options.form;
    if (options.form instanceof Blob && options.form.type) headers['Content-Type'] = options.form.type;
  } else if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers['Content-Type'] = 'application/json';
  }
  let res: Response;
  try {
    res = await fetch(path + queryString(options.query), { method, headers, body, signal: options.signal });
  } catch (err) {
    if ((err as Error).name === 'AbortError') throw err;
    throw new ApiError(0, 'The server cannot be reached. Check that Cairn is running, then try again.');
  }
  if (!res.ok) {
    let parsed: Partial<ErrorBody> = {};
    try {
      parsed = (await res.json()) as ErrorBody;
    } catch {
      // not JSON: a proxy's page, say
    }
    if (res.status === 401 && current && !options.anonymous) signOut();
    throw new ApiError(res.status, parsed.message || `The server answered ${res.status}.`, parsed.data ?? {});
  }
  if (res.status === 204) return undefined as T;
  if (options.as === 'blob') return (await res.blob()) as T;
  if (options.as === 'text') return (await res.text()) as T;
  return adaptCollections(await res.json()) as T;
}

type Json = Record<string, any>;
const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * The console's collection: the own fields of v0.22's `schema`, each with its options (v0.22's, over
 * ≥ 0.23's flat keys such as `autogeneratePattern`) and the flags and default only the other places
 * carry (`hidden`, `help` in `fields`; defaults in `options.fieldDefaults`). Answers carry both shapes
 * exactly as PocketBase writes them (docs/pocketbase.md#collections).
 */
function adaptCollection(c: Json): Json {
  const flat = new Map<string, Json>((c.fields as Json[]).map((f) => [f.name, f]));
  const defaults = isObject(c.options?.fieldDefaults) ? c.options.fieldDefaults : {};
  const fields = (c.schema as Json[]).map((f) => {
    const { id: _id, name: _n, type: _t, system: _s, hidden, presentable: _p, required: _r, help, ...own } = flat.get(f.name) ?? {};
    return { ...f, hidden: hidden === true, help: help ?? '', default: defaults[f.name] ?? null, options: { ...own, ...f.options } };
  });
  return { ...c, fields };
}

function adaptCollections(body: unknown): unknown {
  const isCollection = (v: unknown): v is Json => isObject(v) && Array.isArray(v.fields) && Array.isArray(v.schema) && typeof v.type === 'string';
  if (isCollection(body)) return adaptCollection(body);
  if (isObject(body) && Array.isArray(body.items) && body.items.some(isCollection)) return { ...body, items: body.items.map((c: unknown) => (isCollection(c) ? adaptCollection(c) : c)) };
  return body;
}

/**
 * The message of a field error in an error's data, by path: `listRule`, `fields.2.options.max`,
 * `options.triggers.0.url`, or a key that is itself dotted (`data["mfa.rule"]`, as the auth
 * settings' errors are named). Undefined when the server said nothing about that path.
 */
export function fieldError(err: unknown, path: string): string | undefined {
  if (!(err instanceof ApiError)) return undefined;
  const find = (node: unknown, keys: string[]): unknown => {
    if (keys.length === 0) return node;
    if (typeof node !== 'object' || node === null) return undefined;
    const n = node as Record<string, unknown>;
    const whole = keys.join('.');
    return whole in n ? n[whole] : find(n[keys[0]], keys.slice(1));
  };
  const node = find(err.data, path.split('.'));
  if (typeof node === 'object' && node !== null && typeof (node as { message?: unknown }).message === 'string') return (node as { message: string }).message;
  return undefined;
}

/** Every field error below a path, flattened ("fields.1.name: Must …"), for a summary. */
export function allFieldErrors(err: unknown): string[] {
  if (!(err instanceof ApiError)) return [];
  const out: string[] = [];
  const walk = (node: unknown, path: string) => {
    if (typeof node !== 'object' || node === null) return;
    const n = node as Record<string, unknown>;
    if (typeof n.message === 'string' && typeof n.code === 'string') {
      out.push(`${path}: ${n.message}`);
      return;
    }
    for (const [k, v] of Object.entries(n)) walk(v, path ? `${path}.${k}` : k);
  };
  walk(err.data, '');
  return out;
}

export function messageOf(err: unknown): string {
  if (err instanceof ApiError) return err.message;
  return err instanceof Error ? err.message : String(err);
}

/** Downloads an authenticated answer as a file (the browser cannot add headers to a plain link). */
export async function download(path: string, fileName: string, options: RequestOptions = {}): Promise<void> {
  const blob = await api<Blob>('GET', path, { ...options, as: 'blob' });
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = fileName;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
