/**
 * The Cairn handlers a `pb_hooks` registration becomes: each sends its event to the registration's
 * handler in the pool (or tries it on the main thread first, main-runtime.ts) and takes back what
 * the handler changed, its answer and whether it went on (`e.next()`).
 */
import type { ServiceSlot } from '../hooks/facade.ts';
import type { RouteEvent } from '../hooks/types.ts';
import { RawAnswer } from '../records/deps.ts';
import type { PbKind } from './catalogue.ts';
import { pbRoutePath } from './catalogue.ts';
import type { MainRuntime } from './main-runtime.ts';
import type { PbLog, PbPool } from './pool.ts';
import { applyLeaving, asPbError, type EventLike, opsFor, requestPayload, syncOpsFor } from './ops.ts';

/** What every handler of one `pb_hooks` folder shares. */
export interface PbHandlerContext {
  pool: PbPool;
  slot: ServiceSlot;
  /** The main-thread runtime for straight-line write handlers; undefined when none can run there. */
  main: MainRuntime | undefined;
  log: PbLog;
}

/** A registration's place: its index in the pool's registrations, and its file (named in errors). */
export interface PbHandlerOf {
  index: number;
  source: string;
}

/**
 * The handler of a registration on a write (create, update, delete, before or after it). Before a
 * write, the changes the handler made to `e.record` are applied; a v0.22 handler, or one on an
 * after-success event, goes on by itself when it did not call `e.next()`.
 */
export function writeHandler(ctx: PbHandlerContext, { index, source }: PbHandlerOf, event: { on: string; api?: boolean; gen: 22 | 23 }) {
  const after = event.on.startsWith('onRecordAfter');
  return async (e: EventLike): Promise<void> => {
    const isApi = !!e.request && e.request.method !== 'SYSTEM';
    if (event.api && !isApi) return e.next();
    let reachedNext = false;
    const payload = {
      collection: e.collection,
      record: e.record,
      original: e.original,
      isNew: event.on === 'onRecordCreate',
      auth: e.auth,
      request: requestPayload(e),
    };
    const apply = (changes: Record<string, unknown>) => {
      if (after || !changes) return;
      const r = e.record;
      for (const [k, v] of Object.entries(changes)) r[k] = v;
    };
    // The calls back from a worker: its e.next() runs the rest of the chain here.
    const next = async (changes: Record<string, unknown>) => {
      apply(changes);
      reachedNext = true;
      await e.next();
      return e.record;
    };
    type Result = { nextCalled: boolean; changes: Record<string, unknown>; deferredNext?: boolean };
    // A straight-line handler is tried on this thread first (main-runtime.ts): no thread crossing.
    let result: Result | undefined = ctx.main?.tryRun(index, payload, syncOpsFor(e.app, e.db));
    try {
      result ??= (await ctx.pool.run(index, payload, opsFor(ctx.slot, e.app, e.db, { next }))) as Result;
    } catch (err) {
      throw asPbError(err, source, ctx.log);
    }
    if (result.deferredNext) {
      // The handler called e.next() and nothing after it needed the write (worker.ts, deferredNext).
      apply(result.changes);
      await e.next();
      return;
    }
    if ((event.gen === 22 || after) && !reachedNext) {
      // v0.22's handlers and the after-success events go on by themselves.
      apply(result.changes);
      await e.next();
    }
  };
}

/**
 * The handler of a registration on an event other than a write: a record leaving (`enrich`), an API
 * request about a record (`held`: a sign-in, an email flow's request, a download), an API read, a
 * realtime message or subscription, a mail. `method` limits an event of one sign-in method
 * (onRecordAuthWithPasswordRequest…) to it.
 */
export function otherEventHandler(ctx: PbHandlerContext, { index, source }: PbHandlerOf, kind: PbKind, gen: 22 | 23, method?: string) {
  return async (e: any): Promise<void> => {
    if (method !== undefined && e.method !== method) return e.next();
    let reached = false;
    const run = async (payload: Record<string, unknown>, next: (out: any) => void): Promise<any> => {
      const ops = opsFor(ctx.slot, e.app, e.db ?? 'main', {
        next: async (out: any) => {
          next(out);
          reached = true;
          await e.next();
          return null;
        },
      });
      try {
        return await ctx.pool.run(index, { kind, ...payload }, ops);
      } catch (err) {
        throw asPbError(err, source, ctx.log);
      }
    };
    if (kind === 'enrich' || kind === 'held') {
      const payload = { collection: e.collection, record: e.record, auth: e.auth, request: requestPayload(e), token: e.token, method: e.method, newEmail: e.newEmail, fileField: e.fileField, servedName: e.servedName };
      // A download's handler may rename the file it sends.
      const rename = (name: unknown) => {
        if (typeof e.servedName === 'string' && typeof name === 'string' && name !== '') e.servedName = name;
      };
      const result = await run(payload, (d) => {
        if (kind === 'enrich') applyLeaving(e.record, d);
        rename(d?.servedName);
      });
      if (!reached) {
        if (kind === 'enrich') applyLeaving(e.record, result.delta);
        rename(result.servedName);
        if (gen === 22) await e.next();
      }
      return;
    }
    if (kind === 'read') {
      const view = e.kind === 'view';
      const { items, ...meta } = view ? { items: [e.record] } : e.result;
      const payload = { view, collection: e.collection, records: items, result: view ? undefined : meta, auth: e.auth, request: requestPayload(e) };
      const take = (records: any[] | undefined, meta: any) => {
        if (Array.isArray(records)) e.records = records;
        if (!view && meta && typeof meta === 'object') for (const k of ['page', 'perPage', 'totalItems', 'totalPages']) if (typeof meta[k] === 'number') e.result[k] = meta[k];
      };
      const result = await run(payload, (out) => take(out?.records, out?.result));
      const a = result.answer;
      if (a && !reached) {
        e.answer = new RawAnswer(a.status, a.type, a.body, result.headers ?? {}, a.location);
        return;
      }
      if (!reached) {
        // v0.22's read events change the answer and go on; so does a handler that neither answers nor calls e.next().
        take(result.records, result.result);
        await e.next();
      }
      return;
    }
    if (kind === 'realtime') {
      const payload = { client: e.client, subscriptions: e.subscriptions, message: e.message, auth: e.auth, request: requestPayload(e) };
      const take = (out: any) => {
        if (Array.isArray(out?.subscriptions) && e.subscriptions) e.subscriptions = out.subscriptions.map(String);
        if (out?.message && e.message) e.message = out.message;
      };
      const result = await run(payload, take);
      if (!reached) {
        take(result);
        // v0.22's handlers go on by themselves; so does a connecting client's (its stream is Cairn's to open).
        if (gen === 22 || (e.message === undefined && e.subscriptions === undefined)) await e.next();
      }
      return;
    }
    // A mail.
    const payload = { message: e.message, record: e.record, meta: e.meta, collection: e.collection };
    const result = await run(payload, (message) => (e.message = message));
    if (!reached) {
      e.message = result.message;
      if (gen === 22) await e.next();
    }
  };
}

type RouteAnswer = { status: number; type?: string; body?: string; location?: string; static?: { dir: string; path: string; fallback: boolean } };
type ServedRouteEvent = RouteEvent & {
  ip?: string;
  header?(k: string, v: string): void;
  raw?(s: number, type: string | undefined, body: string | undefined, location?: string): void;
  staticFile?(dir: string, path: string, fallback: boolean): void;
  uploaded?: Record<string, { name: string; type: string; bytes: Buffer }[]>;
};

/** The handler of a `routerAdd` (or v0.22 `routerAdd` with `:name` segments) at PocketBase's `path`. */
export function routeHandler(ctx: PbHandlerContext, { index, source }: PbHandlerOf, path: string) {
  // Both spellings of a segment's name are read: PocketBase's `{name}` and v0.22's `:name`.
  const names = [...pbRoutePath(path).matchAll(/\{([A-Za-z_][A-Za-z0-9_]*)(?:\.\.\.)?\}/g), ...path.matchAll(/\{([A-Za-z_][A-Za-z0-9_]*)(?:\.\.\.)?\}/g)].map((m) => m[1]);
  return async (e: ServedRouteEvent) => {
    const params: Record<string, string> = {};
    for (const name of names) params[name] = e.pathValue(name);
    const body = e.method === 'GET' || e.method === 'HEAD' ? {} : await e.bindBody().catch(() => ({}));
    const files = e.uploaded && Object.fromEntries(Object.entries(e.uploaded).map(([k, list]) => [k, list.map((f) => ({ __file: 'bytes', name: f.name, type: f.type, size: f.bytes.length, bytes: f.bytes.toString('base64') }))]));
    const payload = { method: e.method, path: e.path, query: e.query.toString(), headers: e.headers, body, ip: e.ip ?? '', params, auth: e.auth, api: true, files };
    let out: { answer?: RouteAnswer | null; headers: Record<string, string | string[]> };
    try {
      out = await ctx.pool.run(index, payload, opsFor(ctx.slot, e.app, e.db));
    } catch (err) {
      throw asPbError(err, source, ctx.log);
    }
    for (const [k, v] of Object.entries(out.headers ?? {})) e.header?.(k, v);
    const a = out.answer;
    if (!a) return e.noContent(204);
    if (a.location) return e.redirect(a.status, a.location);
    // `$apis.static`: the file is found and sent here, on the main thread.
    if (a.static) return e.staticFile!(a.static.dir, a.static.path, a.static.fallback);
    e.raw!(a.status, a.type, a.body);
  };
}
