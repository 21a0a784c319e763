/**
 * PocketBase's `pb_hooks/*.pb.js`, run as they are (API contract §22).
 *
 * The files run in worker threads (pool.ts, runtime/), each evaluating them all in a `node:vm` context
 * with PocketBase's globals. What they register becomes handlers of the TypeScript hooks' set
 * (record events, routes, cron jobs), so they share its chain, transactions, time limit and cron
 * claim. A handler runs in one idle worker; its synchronous `$app` calls come here as messages,
 * are done with the event's `app` (bound to the write's transaction inside a record event), and
 * answered on the worker's port while it waits on a shared integer. A handler past the time limit
 * has its worker terminated and replaced: the request answers 503, the server never waits on it.
 */
import path from 'node:path';
import { folderFiles, isPbHookFile } from '../lib/folder-files.ts';
import { hookApp, type ServiceSlot } from '../hooks/facade.ts';
import type { HookSet, RecordEventName } from '../hooks/registry.ts';
import type { RouteEvent } from '../hooks/types.ts';
import { RawAnswer } from '../records/deps.ts';
import { HookLoadError } from '../hooks/load-error.ts';
import { MainRuntime } from './main-runtime.ts';
import { PbPool, type PbRegistration } from './pool.ts';
import { applyLeaving, asPbError, type EventLike, opsFor, requestPayload, syncOpsFor } from './ops.ts';

export type { PbRegistration } from './pool.ts';


/** The `*.pb.js` files directly in `dir`, in name order (PocketBase's order); none without the folder. */
export function pbHookFiles(dir: string | undefined): string[] {
  if (!dir) return [];
  const unreadable = (err: Error) => new HookLoadError(`cannot read the pb_hooks directory: ${err.message}`, dir);
  return folderFiles(dir, isPbHookFile, unreadable).map((name) => path.join(dir, name));
}

/**
 * Which Cairn event a PocketBase registration runs on, whether for API requests only, its API
 * generation, and how its event is made (`kind`: a write's, a record leaving, an API read, a mail, a
 * record an API request is about — a sign-in, an email flow's request, a download —, realtime).
 */
type PbKind = 'write' | 'enrich' | 'read' | 'mail' | 'held' | 'realtime';
const EVENTS: Record<string, { on: RecordEventName; api?: boolean; gen?: 22 | 23; kind?: PbKind; tags?: string[]; method?: string }> = {
  onRecordCreate: { on: 'onRecordCreate' },
  onRecordCreateExecute: { on: 'onRecordCreate' },
  onRecordValidate: { on: 'onRecordCreate' },
  onModelCreate: { on: 'onRecordCreate' },
  onModelBeforeCreate: { on: 'onRecordCreate', gen: 22 },
  onRecordCreateRequest: { on: 'onRecordCreate', api: true },
  onRecordBeforeCreateRequest: { on: 'onRecordCreate', api: true, gen: 22 },
  onRecordUpdate: { on: 'onRecordUpdate' },
  onRecordUpdateExecute: { on: 'onRecordUpdate' },
  onModelUpdate: { on: 'onRecordUpdate' },
  onModelBeforeUpdate: { on: 'onRecordUpdate', gen: 22 },
  onRecordUpdateRequest: { on: 'onRecordUpdate', api: true },
  onRecordBeforeUpdateRequest: { on: 'onRecordUpdate', api: true, gen: 22 },
  onRecordDelete: { on: 'onRecordDelete' },
  onRecordDeleteExecute: { on: 'onRecordDelete' },
  onModelDelete: { on: 'onRecordDelete' },
  onModelBeforeDelete: { on: 'onRecordDelete', gen: 22 },
  onRecordDeleteRequest: { on: 'onRecordDelete', api: true },
  onRecordBeforeDeleteRequest: { on: 'onRecordDelete', api: true, gen: 22 },
  onRecordAfterCreateSuccess: { on: 'onRecordAfterCreateSuccess' },
  onModelAfterCreateSuccess: { on: 'onRecordAfterCreateSuccess' },
  onModelAfterCreate: { on: 'onRecordAfterCreateSuccess', gen: 22 },
  onRecordAfterCreateRequest: { on: 'onRecordAfterCreateSuccess', api: true, gen: 22 },
  onRecordAfterUpdateSuccess: { on: 'onRecordAfterUpdateSuccess' },
  onModelAfterUpdateSuccess: { on: 'onRecordAfterUpdateSuccess' },
  onModelAfterUpdate: { on: 'onRecordAfterUpdateSuccess', gen: 22 },
  onRecordAfterUpdateRequest: { on: 'onRecordAfterUpdateSuccess', api: true, gen: 22 },
  onRecordAfterDeleteSuccess: { on: 'onRecordAfterDeleteSuccess' },
  onModelAfterDeleteSuccess: { on: 'onRecordAfterDeleteSuccess' },
  onModelAfterDelete: { on: 'onRecordAfterDeleteSuccess', gen: 22 },
  onRecordAfterDeleteRequest: { on: 'onRecordAfterDeleteSuccess', api: true, gen: 22 },
  onRecordEnrich: { on: 'onRecordEnrich', kind: 'enrich' },
  // The same names in both generations (v0.22's go on by themselves, without e.next()).
  onRecordsListRequest: { on: 'onRecordsListRequest', kind: 'read' },
  onRecordViewRequest: { on: 'onRecordViewRequest', kind: 'read' },
  onRecordAuthRequest: { on: 'onRecordAuthRequest', kind: 'held' },
  // The auth routes' own events fire as their sign-in succeeds (PocketBase fires them before it checks).
  onRecordAuthWithPasswordRequest: { on: 'onRecordAuthRequest', kind: 'held', method: 'password' },
  onRecordAuthWithOAuth2Request: { on: 'onRecordAuthRequest', kind: 'held', method: 'oauth2' },
  onRecordAuthWithOTPRequest: { on: 'onRecordAuthRequest', kind: 'held', method: 'otp' },
  onRecordAuthRefreshRequest: { on: 'onRecordAuthRequest', kind: 'held', method: 'refresh' },
  onRecordBeforeAuthWithPasswordRequest: { on: 'onRecordAuthRequest', kind: 'held', method: 'password', gen: 22 },
  onRecordBeforeAuthWithOAuth2Request: { on: 'onRecordAuthRequest', kind: 'held', method: 'oauth2', gen: 22 },
  onRecordBeforeAuthRefreshRequest: { on: 'onRecordAuthRequest', kind: 'held', method: 'refresh', gen: 22 },
  onAdminBeforeAuthWithPasswordRequest: { on: 'onRecordAuthRequest', kind: 'held', method: 'password', gen: 22, tags: ['_superusers'] },
  onAdminBeforeAuthRefreshRequest: { on: 'onRecordAuthRequest', kind: 'held', method: 'refresh', gen: 22, tags: ['_superusers'] },
  onFileDownloadRequest: { on: 'onFileDownloadRequest', kind: 'held' },
  // The email flows' requests, before their mail (the account found as e.record; not going on sends nothing).
  onRecordRequestVerificationRequest: { on: 'onRecordAuthFlowRequest', kind: 'held', method: 'request-verification' },
  onRecordRequestPasswordResetRequest: { on: 'onRecordAuthFlowRequest', kind: 'held', method: 'request-password-reset' },
  onRecordRequestEmailChangeRequest: { on: 'onRecordAuthFlowRequest', kind: 'held', method: 'request-email-change' },
  onRecordRequestOTPRequest: { on: 'onRecordAuthFlowRequest', kind: 'held', method: 'request-otp' },
  onRecordBeforeRequestVerificationRequest: { on: 'onRecordAuthFlowRequest', kind: 'held', method: 'request-verification', gen: 22 },
  onRecordBeforeRequestPasswordResetRequest: { on: 'onRecordAuthFlowRequest', kind: 'held', method: 'request-password-reset', gen: 22 },
  onRecordBeforeRequestEmailChangeRequest: { on: 'onRecordAuthFlowRequest', kind: 'held', method: 'request-email-change', gen: 22 },
  // v0.22's superusers were admins, signing in apart.
  onAdminAuthRequest: { on: 'onRecordAuthRequest', kind: 'held', gen: 22, tags: ['_superusers'] },
  onMailerSend: { on: 'onMailerSend', kind: 'mail' },
  onMailerRecordPasswordResetSend: { on: 'onMailerRecordPasswordResetSend', kind: 'mail' },
  onMailerRecordVerificationSend: { on: 'onMailerRecordVerificationSend', kind: 'mail' },
  onMailerRecordEmailChangeSend: { on: 'onMailerRecordEmailChangeSend', kind: 'mail' },
  onMailerRecordOTPSend: { on: 'onMailerRecordOTPSend', kind: 'mail' },
  onMailerRecordAuthAlertSend: { on: 'onMailerRecordAuthAlertSend', kind: 'mail' },
  onMailerBeforeRecordResetPasswordSend: { on: 'onMailerRecordPasswordResetSend', kind: 'mail', gen: 22 },
  onMailerBeforeRecordVerificationSend: { on: 'onMailerRecordVerificationSend', kind: 'mail', gen: 22 },
  onMailerBeforeRecordChangeEmailSend: { on: 'onMailerRecordEmailChangeSend', kind: 'mail', gen: 22 },
  onRealtimeConnectRequest: { on: 'onRealtimeConnectRequest', kind: 'realtime' },
  onRealtimeSubscribeRequest: { on: 'onRealtimeSubscribeRequest', kind: 'realtime' },
  onRealtimeBeforeSubscribeRequest: { on: 'onRealtimeSubscribeRequest', kind: 'realtime', gen: 22 },
  onRealtimeMessageSend: { on: 'onRealtimeMessageSend', kind: 'realtime' },
  onRealtimeBeforeMessageSend: { on: 'onRealtimeMessageSend', kind: 'realtime', gen: 22 },
};

/** PocketBase's cron macros. */
const CRON_MACROS: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

/** What Cairn does not fire (registered, listed, never called). */
export interface PbLoaded {
  pool: PbPool;
  registrations: PbRegistration[];
  unsupported: string[];
  /** Runs `onBootstrap`/`onAfterBootstrap`/`onServe` handlers, once, when the app serves. */
  bootstrap(): Promise<void>;
  /** Runs `onTerminate` handlers, once, as the server stops (before its services close). */
  terminate(): Promise<void>;
}

/** Registrations run once when the app serves. */
const BOOTSTRAP = new Set(['onBootstrap', 'onAfterBootstrap', 'onBeforeBootstrap', 'onServe', 'onBeforeServe']);

/** `:name` (v0.22, echo) and `*` segments as Cairn's `{name}` and `{path...}`. */
export function pbRoutePath(p: string): string {
  return (p.startsWith('/') ? p : `/${p}`)
    .split('/')
    .map((s, i, all) => (s.startsWith(':') ? `{${s.slice(1)}}` : s === '*' && i === all.length - 1 ? '{path...}' : s))
    .join('/')
    .replace(/\{\$\}$/, '');
}

/**
 * Loads `dir`'s `*.pb.js` files into `set`: record events, routes and cron jobs become the set's
 * handlers, each running its registration in the pool. Throws a `HookLoadError` naming the file
 * (and line) of a file that does not load. Undefined when there are no files.
 */
export async function loadPbHooks(dir: string | undefined, set: HookSet, slot: ServiceSlot, timeoutMs: number, extraFiles: string[] = []): Promise<PbLoaded | undefined> {
  const files = [...new Set([...pbHookFiles(dir), ...extraFiles])];
  if (files.length === 0) return undefined;
  const log = (level: string, msg: string, data: Record<string, unknown>) => {
    const l = slot.current?.log ?? slot.log;
    (l as any)?.[level in { debug: 1, info: 1, warn: 1, error: 1 } ? level : 'info']?.(data ?? {}, msg);
  };
  const pool = new PbPool(files, dir!, timeoutMs, log);
  const registrations = await pool.start();
  const main = MainRuntime.load(files, dir!, registrations, log);
  const unsupported: string[] = [];
  const bootstraps: number[] = [];
  const terminates: number[] = [];
  /** The handler of a registration on an event other than a write: a record leaving, an API read, a mail, a sign-in. */
  const otherEvent =
    (kind: PbKind, gen: 22 | 23, index: number, source: string, method?: string) =>
    async (e: any): Promise<void> => {
      // An event of one sign-in method (onRecordAuthWithPasswordRequest…) lets the others by.
      if (method !== undefined && e.method !== method) return e.next();
      let reached = false;
      const run = async (payload: Record<string, unknown>, next: (out: any) => void): Promise<any> => {
        const ops = opsFor(slot, e.app, e.db ?? 'main', {
          next: async (out: any) => {
            next(out);
            reached = true;
            await e.next();
            return null;
          },
        });
        try {
          return await pool.run(index, { kind, ...payload }, ops);
        } catch (err) {
          throw asPbError(err, source, log);
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
          if (gen === 22 || e.message === undefined && e.subscriptions === undefined) await e.next();
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
  try {
    registrations.forEach((reg, index) => {
      const source = reg.file;
      if (reg.kind === 'event') {
        const mapped = EVENTS[reg.event!];
        if (BOOTSTRAP.has(reg.event!)) {
          bootstraps.push(index);
          return;
        }
        if (reg.event === 'onTerminate') {
          terminates.push(index);
          return;
        }
        if (!mapped) {
          unsupported.push(`${reg.event} (${path.basename(source)})`);
          return;
        }
        const gen = mapped.gen ?? reg.gen;
        const kind = mapped.kind ?? 'write';
        if (kind !== 'write') {
          set.bind(mapped.on, otherEvent(kind, gen, index, source, mapped.method), mapped.tags ?? reg.collections ?? [], source);
          return;
        }
        const after = mapped.on.startsWith('onRecordAfter');
        set.bind(
          mapped.on,
          async (e: EventLike) => {
            const isApi = !!e.request && e.request.method !== 'SYSTEM';
            if (mapped.api && !isApi) return e.next();
            let reachedNext = false;
            const payload = {
              collection: e.collection,
              record: e.record,
              original: e.original,
              isNew: mapped.on === 'onRecordCreate',
              auth: e.auth,
              request: requestPayload(e),
            };
            const apply = (changes: Record<string, unknown>) => {
              if (after || !changes) return;
              const r = e.record;
              for (const [k, v] of Object.entries(changes)) r[k] = v;
            };
            const ops = opsFor(slot, e.app, e.db, {
              next: async (changes: Record<string, unknown>) => {
                apply(changes);
                reachedNext = true;
                await e.next();
                return after ? e.record : e.record;
              },
            });
            type Result = { nextCalled: boolean; changes: Record<string, unknown>; deferredNext?: boolean };
            // A straight-line handler is tried on this thread first (main-runtime.ts): no thread crossing.
            let result: Result | undefined = main?.tryRun(index, payload, syncOpsFor(e.app, e.db));
            try {
              result ??= (await pool.run(index, payload, ops)) as Result;
            } catch (err) {
              throw asPbError(err, source, log);
            }
            if (result.deferredNext) {
              // The handler called e.next() and nothing after it needed the write (worker.ts, deferredNext).
              apply(result.changes);
              await e.next();
              return;
            }
            if (gen === 22 || after) {
              // v0.22's handlers and the after-success events go on by themselves.
              if (!reachedNext) {
                apply(result.changes);
                await e.next();
              }
            }
          },
          reg.collections ?? [],
          source,
        );
      } else if (reg.kind === 'route') {
        set.addRoute(
          reg.method === 'ANY' ? 'GET' : reg.method!,
          pbRoutePath(reg.path!),
          async (e: RouteEvent) => {
            const params: Record<string, string> = {};
            for (const m of pbRoutePath(reg.path!).matchAll(/\{([A-Za-z_][A-Za-z0-9_]*)(?:\.\.\.)?\}/g)) params[m[1]] = e.pathValue(m[1]);
            for (const m of reg.path!.matchAll(/\{([A-Za-z_][A-Za-z0-9_]*)(?:\.\.\.)?\}/g)) params[m[1]] = e.pathValue(m[1]);
            const body = e.method === 'GET' || e.method === 'HEAD' ? {} : await e.bindBody().catch(() => ({}));
            const r = e as RouteEvent & { ip?: string; html?(s: number, t: string): void; header?(k: string, v: string): void; raw?(s: number, type: string | undefined, body: string | undefined, location?: string): void };
            const uploaded = (e as RouteEvent & { uploaded?: Record<string, { name: string; type: string; bytes: Buffer }[]> }).uploaded;
            const files = uploaded && Object.fromEntries(Object.entries(uploaded).map(([k, list]) => [k, list.map((f) => ({ __file: 'bytes', name: f.name, type: f.type, size: f.bytes.length, bytes: f.bytes.toString('base64') }))]));
            const payload = { method: e.method, path: e.path, query: e.query.toString(), headers: e.headers, body, ip: r.ip ?? '', params, auth: e.auth, api: true, files };
            let out: { answer?: { status: number; type?: string; body?: string; location?: string; static?: { dir: string; path: string; fallback: boolean } } | null; headers: Record<string, string> };
            try {
              out = await pool.run(index, payload, opsFor(slot, e.app, e.db));
            } catch (err) {
              throw asPbError(err, source, log);
            }
            for (const [k, v] of Object.entries(out.headers ?? {})) r.header?.(k, v);
            const a = out.answer;
            if (!a) return e.noContent(204);
            if (a.location) return e.redirect(a.status, a.location);
            // `$apis.static`: the file is found and sent here, on the main thread.
            if (a.static) return (e as RouteEvent & { staticFile(dir: string, path: string, fallback: boolean): void }).staticFile(a.static.dir, a.static.path, a.static.fallback);
            r.raw!(a.status, a.type, a.body);
          },
          [],
          source,
        );
      } else if (reg.kind === 'cron') {
        const app = hookApp(slot, source);
        set.addCron(reg.name!, CRON_MACROS[reg.schedule!.trim()] ?? reg.schedule!, () => pool.run(index, {}, opsFor(slot, app, 'main')), source);
      } else if (reg.kind === 'cronRemove') {
        set.crons.delete(reg.name!);
      }
    });
  } catch (err) {
    pool.close();
    throw err instanceof HookLoadError ? err : new HookLoadError(err instanceof Error ? err.message : String(err), files[0]);
  }
  /** Runs each of `indexes` once, in order, with `payload` (errors logged: the server goes on, or on stopping). */
  const runOnce = (indexes: number[], payload: Record<string, unknown>, what: string) => {
    let ran = false;
    return async () => {
      if (ran || indexes.length === 0) return;
      ran = true;
      for (const index of indexes) {
        const source = registrations[index].file;
        const app = hookApp(slot, source);
        try {
          await pool.run(index, payload, opsFor(slot, app, 'main', { next: async () => undefined }));
        } catch (err) {
          log('error', `a pb_hooks ${what} handler failed`, { hook: source, err: err instanceof Error ? err.message : String(err) });
        }
      }
    };
  };
  return {
    pool,
    registrations,
    unsupported,
    bootstrap: runOnce(bootstraps, {}, 'bootstrap'),
    // PocketBase's e.isRestart: Cairn restarts by starting anew.
    terminate: runOnce(terminates, { isRestart: false }, 'terminate'),
  };
}

