import type { Collection } from '../collections/model.ts';
import { type Bound, type Handler, matches } from '../lib/chain.ts';
import { parseSchedule, type Schedule, ScheduleError } from '../jobs/schedule.ts';
import { compileRoutePath, type HookRoute, routeMethod } from './routes.ts';
import type { RouteEvent, RouteMiddleware } from './types.ts';

const CRON_NAME = /^[A-Za-z0-9_.: -]{1,100}$/;

/** The record events handlers bind to (API contract §16), by PocketBase ≥ 0.23's names. */
export const RECORD_EVENTS = [
  'onRecordCreate',
  'onRecordUpdate',
  'onRecordDelete',
  'onRecordAfterCreateSuccess',
  'onRecordAfterUpdateSuccess',
  'onRecordAfterDeleteSuccess',
  'onRecordEnrich',
  'onRecordAuthRequest',
  // An email flow's request for an account (PocketBase's onRecordRequest…Request events).
  'onRecordAuthFlowRequest',
  // A record's file about to be downloaded.
  'onFileDownloadRequest',
  // API requests reading records (pb_hooks' onRecordsListRequest / onRecordViewRequest).
  'onRecordsListRequest',
  'onRecordViewRequest',
  // Mail about to leave: every mail, and the auth flows' mails by collection.
  'onMailerSend',
  'onMailerRecordPasswordResetSend',
  'onMailerRecordVerificationSend',
  'onMailerRecordEmailChangeSend',
  'onMailerRecordOTPSend',
  'onMailerRecordAuthAlertSend',
  // Realtime: a client connecting, a subscription request, a message about to leave.
  'onRealtimeConnectRequest',
  'onRealtimeSubscribeRequest',
  'onRealtimeMessageSend',
] as const;

export type RecordEventName = (typeof RECORD_EVENTS)[number];

export interface HookCron {
  name: string;
  schedule: Schedule;
  /** As given. */
  expression: string;
  handler: () => unknown;
  source: string;
}

/**
 * What one load of the hook files registered: record event handlers, routes and cron jobs. A reload
 * (development mode) builds a new set and swaps it in whole, so a request sees one generation.
 */
/**
 * PocketBase's pb_hooks as one load holds them. The pb_hooks room (src/pbhooks) provides it and hangs
 * below nothing here: this shape is all hooks/ knows of it, so the dependency points one way.
 */
export interface LoadedPbHooks {
  pool: { readonly files: string[]; close(): void };
  /** Events the files register that Cairn never fires. */
  unsupported: string[];
  /** Runs `onBootstrap`/`onServe` handlers, once, when the app serves. */
  bootstrap(): Promise<void>;
  /** Runs `onTerminate` handlers, once, as the server stops. */
  terminate(): Promise<void>;
}

export class HookSet {
  private readonly handlers = new Map<RecordEventName, Bound<any>[]>();
  readonly routes: HookRoute[] = [];
  readonly crons = new Map<string, HookCron>();
  /** The files loaded, in load order (absolute paths; `<inline #n>` for library-mode functions). */
  readonly files: string[] = [];
  /** The pb_hooks of this load (their workers end with the set). */
  pb?: LoadedPbHooks;
  // Per collection version (collections are immutable and replaced on change), the handlers of each
  // event that apply to it: the write path asks on every write.
  private readonly byCollection = new WeakMap<Collection, Map<RecordEventName, readonly Bound<any>[]>>();

  bind(event: RecordEventName, handler: Handler<any>, collections: readonly string[], source: string): void {
    if (typeof handler !== 'function') throw new TypeError(`${event}: the handler must be a function`);
    for (const c of collections) if (typeof c !== 'string' || c === '') throw new TypeError(`${event}: collection names must be non-empty strings`);
    const list = this.handlers.get(event) ?? [];
    list.push({ handler, tags: collections.length > 0 ? new Set(collections.map((c) => c.toLowerCase())) : undefined, names: collections.length > 0 ? [...collections] : undefined, source });
    this.handlers.set(event, list);
  }

  /** The handlers of `event` for `collection`, in registration order (empty when there are none). */
  for(event: RecordEventName, collection: Collection): readonly Bound<any>[] {
    let perEvent = this.byCollection.get(collection);
    if (!perEvent) {
      perEvent = new Map();
      this.byCollection.set(collection, perEvent);
    }
    let list = perEvent.get(event);
    if (!list) {
      const tags = [collection.id, collection.name];
      list = (this.handlers.get(event) ?? []).filter((b) => matches(b, tags));
      perEvent.set(event, list);
    }
    return list;
  }

  addRoute(method: string, path: string, handler: (e: RouteEvent) => unknown, middlewares: RouteMiddleware[], source: string): void {
    const m = routeMethod(method);
    const { pattern, rest } = compileRoutePath(path);
    if (typeof handler !== 'function') throw new TypeError(`routerAdd ${m} ${path}: the handler must be a function`);
    if (middlewares.some((mw) => typeof mw !== 'function')) throw new TypeError(`routerAdd ${m} ${path}: middlewares must be functions`);
    const twin = this.routes.find((r) => r.method === m && r.pattern.replace(/:[^/]+/g, ':') === pattern.replace(/:[^/]+/g, ':'));
    if (twin) throw new TypeError(`routerAdd: ${m} ${path} is already added (as ${twin.path}, by ${twin.source})`);
    this.routes.push({ method: m, path, pattern, rest, handler, middlewares, source });
  }

  addCron(name: string, expression: string, handler: () => unknown, source: string): void {
    if (typeof name !== 'string' || !CRON_NAME.test(name)) throw new TypeError(`cronAdd: the name must be 1-100 letters, digits, spaces or _ . : - (got ${JSON.stringify(name)})`);
    if (typeof handler !== 'function') throw new TypeError(`cronAdd ${name}: the handler must be a function`);
    let schedule: Schedule;
    try {
      schedule = parseSchedule(String(expression), 'UTC');
    } catch (err) {
      if (err instanceof ScheduleError) throw new TypeError(`cronAdd ${name}: ${err.message}`);
      throw err;
    }
    // A later cronAdd of the same name replaces the job, as in PocketBase.
    this.crons.set(name, { name, schedule, expression: String(expression), handler, source });
  }

  /** Every handler of `event`, whatever it is limited to (events about no collection: mail, realtime). */
  all(event: RecordEventName): readonly Bound<any>[] {
    return this.handlers.get(event) ?? [];
  }

  /** The handlers of `event` for a collection known by id and name only (mail of the auth flows). */
  tagged(event: RecordEventName, tags: readonly string[]): readonly Bound<any>[] {
    return (this.handlers.get(event) ?? []).filter((b) => matches(b, tags));
  }

  /** Whether any handler is bound to `event`, for any collection. */
  has(event: RecordEventName): boolean {
    return (this.handlers.get(event)?.length ?? 0) > 0;
  }

  /** Every binding, for the hooks screen: event, collections (empty for all) and file. */
  bindings(): Array<{ event: RecordEventName; collections: string[]; source: string }> {
    const out: Array<{ event: RecordEventName; collections: string[]; source: string }> = [];
    for (const event of RECORD_EVENTS) {
      for (const b of this.handlers.get(event) ?? []) out.push({ event, collections: b.names ? [...b.names] : [], source: b.source });
    }
    return out;
  }
}
