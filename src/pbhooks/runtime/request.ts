/**
 * The request as handlers see it: `e.request` (Go's http.Request: header, url, pathValue, cookies,
 * formFile), `e.requestInfo()`, the signed-in record (`e.auth`), and a route's context (`e.json`,
 * `e.string`, `e.bindBody`, v0.22's echo `c.*`), whose answer is collected in `out` for the host.
 */
import { fileOfMarker } from './file.ts';
import type { Realm } from './realm.ts';
import type { RecordClass } from './record.ts';

/** The request headers (lower-case names) as Go's http.Header: `get`, `values`, `has`. */
export function headerGetter(h: any) {
  return { get: (k: string) => { const v = h[String(k).toLowerCase()]; return Array.isArray(v) ? v[0] : (v ?? ''); }, values: (k: string) => [].concat(h[String(k).toLowerCase()] ?? []), has: (k: string) => h[String(k).toLowerCase()] !== undefined };
}
/** The headers as requestInfo() gives them: `content_type`, values of repeated headers joined. */
export function infoHeaders(h: any) {
  const out: any = {};
  for (const [k, v] of Object.entries(h ?? {})) out[k.toLowerCase().replace(/-/g, '_')] = Array.isArray(v) ? v.join(',') : v;
  return out;
}
/** The request's cookies, as Go's http.Cookie values (`name`, `value`). */
export function cookiesOf(headers: any): { name: string; value: string }[] {
  const raw = headers?.cookie;
  const text = Array.isArray(raw) ? raw.join('; ') : String(raw ?? '');
  const out: { name: string; value: string }[] = [];
  for (const part of text.split(';')) {
    const i = part.indexOf('=');
    if (i <= 0) continue;
    const value = part.slice(i + 1).trim();
    out.push({ name: part.slice(0, i).trim(), value: value.startsWith('"') && value.endsWith('"') && value.length > 1 ? value.slice(1, -1) : value });
  }
  return out;
}

export function requestApi(rt: Realm, Record: RecordClass, $app: any, logger: any) {
  const inner = rt.inner;
  function authRecord(auth: any) {
    if (!auth) return null;
    return Record.__from(auth, { id: auth.collectionId ?? auth.collectionName, name: auth.collectionName, type: 'auth' });
  }
  function requestOf(req: any) {
    const q = new URLSearchParams(req.query ?? '');
    const query: any = {};
    for (const [k, v] of q) query[k] = v;
    const info = () => {
      const auth = authRecord(req.auth);
      const o = inner({ body: req.body ?? {}, data: req.body ?? {}, query, headers: infoHeaders(req.headers), method: req.method, context: req.context ?? 'default' });
      o.auth = auth;
      o.authRecord = auth && !auth.isSuperuser() ? auth : null;
      o.admin = auth && auth.isSuperuser() ? auth : null;
      o.hasSuperuserAuth = () => !!auth?.isSuperuser();
      return o;
    };
    const request = {
      method: req.method,
      header: headerGetter(req.headers ?? {}),
      url: { path: req.path, rawQuery: req.query ?? '', query: () => ({ get: (k: string) => q.get(k) ?? '', has: (k: string) => q.has(k) }), string: () => req.path + (req.query ? `?${req.query}` : '') },
      pathValue: (k: string) => req.params?.[k] ?? '',
      remoteAddr: req.ip ?? '',
      host: (req.headers ?? {}).host ?? '',
      // Go's Request.Cookie (throws when there is none, as goja turns Go's error into one) and Cookies.
      cookie: (name: string) => {
        const found = cookiesOf(req.headers).find((c) => c.name === String(name));
        if (!found) throw new Error('http: named cookie not present');
        return inner(found);
      },
      cookies: () => inner(cookiesOf(req.headers)),
      // Go's Request.FormFile: [the file to read(buf) from, its header], which $filesystem.fileFromMultipart takes.
      formFile: (key: string) => {
        const f = req.files?.[String(key)]?.[0];
        if (!f) throw new Error('http: no such file');
        const bytes = Buffer.from(f.bytes, 'base64');
        let at = 0;
        const reader = {
          read: (buf: Uint8Array) => {
            const n = Math.min(buf.length, bytes.length - at);
            buf.set(bytes.subarray(at, at + n));
            at += n;
            return n;
          },
          close: () => undefined,
        };
        return [reader, Object.assign(fileOfMarker(f), { filename: f.name })];
      },
    };
    return { info, request, query: q, query_: query };
  }

  function routeContext(req: any, out: any) {
    const r = requestOf(req);
    const auth = authRecord(req.auth);
    const respond = (status: number, type: string | undefined, body: any) => {
      // As PocketBase's router: a second answer is ignored ("response already committed"), the first stands.
      if (out.answer) {
        logger.warn('a pb_hooks route answered twice; the first answer stands');
        return;
      }
      out.answer = { status: Number(status), type, body };
    };
    // Go's http.Header: `add` keeps the values already there (several Set-Cookie lines).
    const resHeaders = {
      set: (k: string, v: any) => (out.headers[String(k).toLowerCase()] = String(v)),
      add: (k: string, v: any) => {
        const key = String(k).toLowerCase();
        const had = out.headers[key];
        out.headers[key] = had === undefined ? String(v) : [...(Array.isArray(had) ? had : [had]), String(v)];
      },
      get: (k: string) => {
        const v = out.headers[String(k).toLowerCase()];
        return Array.isArray(v) ? v[0] : (v ?? '');
      },
      del: (k: string) => delete out.headers[String(k).toLowerCase()],
    };
    // v0.22's echo calls them (`c.request()`, `c.response()`); ≥ 0.23 reads them as fields.
    const request = Object.assign(() => request, r.request);
    const response: any = Object.assign(() => response, { header: () => resHeaders });
    const c: any = {
      app: $app,
      auth,
      request,
      response,
      requestInfo: r.info,
      json: (status: number, data: any) => respond(status, 'application/json; charset=utf-8', JSON.stringify(data, (_k, x) => (x instanceof Record ? x.publicExport() : x)) ?? 'null'),
      string: (status: number, text: any) => respond(status, 'text/plain; charset=utf-8', String(text)),
      html: (status: number, text: any) => respond(status, 'text/html; charset=utf-8', String(text)),
      blob: (status: number, type: string, bytes: any) => respond(status, type, typeof bytes === 'string' ? bytes : Buffer.from(bytes).toString()),
      noContent: (status = 204) => respond(status, undefined, undefined),
      redirect: (status: number, url: string) => {
        respond(status, undefined, undefined);
        out.answer.location = String(url);
      },
      bindBody: (target: any) => {
        const body = req.body ?? {};
        if (target && typeof target === 'object') Object.assign(target, body);
        return target;
      },
      bind: (target: any) => c.bindBody(target),
      findUploadedFiles: (k: string) => {
        const list = req.files?.[k];
        if (!list || list.length === 0) throw new Error('http: no such file');
        return list.map(fileOfMarker);
      },
      setCookie: (cookie: any) => resHeaders.add('Set-Cookie', setCookieLine(cookie)),
      pathParam: (k: string) => req.params?.[k] ?? '',
      pathParams: () => req.params ?? {},
      queryParam: (k: string) => r.query.get(k) ?? '',
      queryParams: () => r.query_,
      formValue: (k: string) => (req.body ?? {})[k] ?? '',
      realIP: () => req.ip ?? '',
      remoteIP: () => req.ip ?? '',
      hasSuperuserAuth: () => !!auth?.isSuperuser(),
      isAuth: () => !!auth,
      get: (k: string) => (k === 'authRecord' ? (auth && !auth.isSuperuser() ? auth : null) : k === 'admin' ? (auth && auth.isSuperuser() ? auth : null) : c.__store[k]),
      set: (k: string, v: any) => (c.__store[k] = v),
      __store: {},
      path: () => req.path,
      method: () => req.method,
      scheme: () => 'http',
      flushErrors: () => undefined,
      // The route's `{path...}` (v0.22's `*`) below the folder: the main thread finds and sends the file.
      __static: (dir: string, fallback: boolean) => {
        const first = !out.answer;
        respond(200, undefined, undefined);
        if (first) out.answer.static = { dir, fallback, path: String(req.params?.path ?? req.params?.['*'] ?? '') };
      },
    };
    return c;
  }
  
  return { authRecord, requestOf, routeContext };
}

const SAME_SITE: Record<string, string> = { '2': 'Lax', '3': 'Strict', '4': 'None', lax: 'Lax', strict: 'Strict', none: 'None' };

/** A `Set-Cookie` line from Go's http.Cookie fields, as Go's Cookie.String() writes it. */
export function setCookieLine(c: any): string {
  const name = String(c?.name ?? '');
  if (!/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(name)) throw new Error(`http: invalid cookie name ${JSON.stringify(name)}`);
  const value = String(c?.value ?? '');
  const parts = [`${name}=${/[\s",;\\]/.test(value) ? `"${value.replace(/["\\]/g, '')}"` : value}`];
  if (c.path) parts.push(`Path=${c.path}`);
  if (c.domain) parts.push(`Domain=${c.domain}`);
  const expires = c.expires ? new Date(typeof c.expires === 'object' && typeof c.expires.string === 'function' ? c.expires.string() : c.expires) : undefined;
  if (expires && !Number.isNaN(expires.getTime()) && expires.getUTCFullYear() >= 1601) parts.push(`Expires=${expires.toUTCString()}`);
  if (typeof c.maxAge === 'number' && c.maxAge > 0) parts.push(`Max-Age=${Math.floor(c.maxAge)}`);
  else if (typeof c.maxAge === 'number' && c.maxAge < 0) parts.push('Max-Age=0');
  if (c.httpOnly) parts.push('HttpOnly');
  if (c.secure) parts.push('Secure');
  const sameSite = SAME_SITE[String(c.sameSite ?? '').toLowerCase()];
  if (sameSite) parts.push(`SameSite=${sameSite}`);
  if (c.partitioned) parts.push('Partitioned');
  return parts.join('; ');
}
