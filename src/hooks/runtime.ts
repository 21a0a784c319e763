import type { Collection } from '../collections/model.ts';
import { type RequestContext } from '../context.ts';
import { ApiError, badRequest, notFound } from '../errors.ts';
import { type AroundRead, changeHook, never } from '../records/deps.ts';
import type { AroundWrite, RecordChangeHook, RecordEvent as RecordChange, RecordEvents } from '../records/deps.ts';
import type { RecordJson } from '../records/serialize.ts';
import type { SignInHook } from '../auth/record-auth.ts';
import type { FlowRequestHook } from '../auth/flow-hook.ts';
import type { FileDownloadHook } from '../files/download.ts';
import type { Mail, MailHook } from '../auth/mail/mailer.ts';
import type { NamingLogger } from '../lib/logger.ts';
import { type Bound, runChain } from '../lib/chain.ts';
import { type HookServices, type ServiceSlot } from './facade.ts';
import { asHookError, HookFault } from './fault.ts';
import { HookLoadError, hookWorkDir, loadHooks } from './loader.ts';
import { HookSet } from './registry.ts';
import type { PbHooksLoader } from './pb-loader.ts';
import type { HookSetup } from './types.ts';
import { authView, AuthFlowEvent, collectionView, type Event, FileDownloadEvent, hookMessage, type HookMailMessage, MAIL_EVENTS, MailEvent, mailOfMessage, ReadRequestEvent, RealtimeEvent, RecordHeld, SignInEvent, SUCCESS_EVENTS, SuccessEvent, WRITE_EVENTS, WriteEvent } from './events.ts';

export { authView, hookAuth } from './events.ts';

export interface HookRuntimeOptions {
  /** The hooks directory (absolute); undefined: no files. */
  dir?: string;
  /** PocketBase's pb_hooks directory (absolute); undefined: none. */
  pbDir?: string;
  /** Loads pb_hooks (src/pbhooks' `loadPbHooks`): handed in, as pb_hooks builds on hooks and not the reverse. */
  loadPb?: PbHooksLoader;
  /** Setups given in code (library mode), loaded after the files. */
  inline?: readonly HookSetup[];
  /** How long a write's hooks may run before the write fails with 503 (CAIRN_HOOK_TIMEOUT_MS). */
  timeoutMs: number;
  /** Where hooks log while they load, before the app (and its log) exists. */
  log?: NamingLogger;
}

/** What the hooks screen shows (`GET /api/hooks`). */
export interface HookStatus {
  dir: string | null;
  loadedAt: string | null;
  files: string[];
  handlers: Array<{ event: string; collections: string[]; source: string }>;
  routes: Array<{ method: string; path: string; source: string }>;
  cron: Array<{ name: string; schedule: string; source: string }>;
  lastError: { message: string; file: string | null; line: number | null; at: string } | null;
  /** PocketBase's pb_hooks directory, and the events its files register that Cairn never fires. */
  pbDir?: string | null;
  pbNotFired?: string[];
}


const done = async (): Promise<void> => undefined;

/** Runs `handlers` on `event`: whether the last of them went on (called `next()`). */
async function goesOn<E extends Event>(event: E, handlers: readonly Bound<E>[]): Promise<boolean> {
  let reached = false;
  await runChain(event, handlers, async () => void (reached = true), asHookError);
  return reached;
}

/** Writes that began within one slice of time share one deadline. */
const WATCH_SLICE_MS = 50;

/** The rejection of a write whose hooks ran past the timeout. */
class HookTimeout extends Error {}

/**
 * The timeout of hooked writes. Every write has the same time limit, so writes that began within the
 * same 50 ms share one deadline: one timer and one rejecting promise per slice, which each write races
 * (`Promise.race`), rather than a timer and a promise of its own per write (what the hooked-create
 * bench holds to 5 %). A write may so get up to 50 ms more than the limit.
 */
class Watchdog {
  private slice?: { ends: number; deadline: Promise<never> };

  constructor(private readonly ms: number) {}

  watch<T>(work: Promise<T>): Promise<T> {
    const now = Date.now();
    let slice = this.slice;
    if (!slice || now >= slice.ends) {
      const ends = now + WATCH_SLICE_MS;
      let fire!: (err: Error) => void;
      const deadline = new Promise<never>((_, reject) => (fire = reject));
      // Nobody may be racing it any more when it fires: that is not an unhandled rejection.
      deadline.catch(() => undefined);
      setTimeout(() => fire(new HookTimeout()), ends + this.ms - now).unref();
      this.slice = slice = { ends, deadline };
    }
    return Promise.race([work, slice.deadline]);
  }
}

/**
 * Application code inside Cairn (API contract §16): the hooks loaded from the hooks directory and
 * from code, and what connects them to the domains. It is the records domain's `RecordEvents` (write
 * chains, enrich), a change hook (after-success handlers, after commit), the sign-in hook, and holds
 * the routes and cron jobs the HTTP layer and the scheduler serve. It lives as long as the process:
 * a restore rebuilds the app around it (`attach`), development mode swaps the loaded set (`reload`).
 */
export class HookRuntime implements RecordEvents {
  /** The services of the app serving now; hooks reach records, mail and logs through it. */
  readonly slot: ServiceSlot = {};
  private set = new HookSet();
  private loadedAt: string | null = null;
  private lastError: HookStatus['lastError'] = null;
  private readonly work = hookWorkDir();
  /** Called after a reload swapped the set in (the scheduler restarts the cron jobs). */
  onSwap?: (set: HookSet) => void;
  /** Problems that refuse a set (routes shadowing Cairn's), asked before a reload swaps it in. */
  check?: (set: HookSet) => string[];

  /** Fails writes whose hooks run past the timeout (503; their transaction then rolls back). */
  private readonly watchdog: Watchdog;

  constructor(readonly options: HookRuntimeOptions) {
    this.slot.log = options.log;
    this.watchdog = new Watchdog(options.timeoutMs);
  }

  private get log(): NamingLogger | undefined {
    return this.slot.current?.log ?? this.slot.log;
  }

  get current(): HookSet {
    return this.set;
  }

  /** The first load: a failure stops the start (`HookLoadError`, with the file and line). */
  async load(): Promise<void> {
    try {
      this.set = await loadHooks(this.options.dir, this.options.inline ?? [], this.slot, this.work.dir, { dir: this.options.pbDir, timeoutMs: this.options.timeoutMs, load: this.options.loadPb });
      this.loadedAt = new Date().toISOString();
    } catch (err) {
      this.work.dispose();
      throw err;
    }
  }

  /**
   * Loads the hooks again (development mode, after a file changed) and swaps them in; a load that
   * fails keeps the previous hooks, and its error is what `status` shows and the result says.
   */
  async reload(): Promise<HookLoadError | undefined> {
    try {
      const set = await loadHooks(this.options.dir, this.options.inline ?? [], this.slot, this.work.dir, { dir: this.options.pbDir, timeoutMs: this.options.timeoutMs, load: this.options.loadPb });
      const problems = this.check?.(set) ?? [];
      if (problems.length > 0) throw new HookLoadError(problems.join('; '));
      const previous = this.set;
      this.set = set;
      if (previous !== set) previous?.pb?.pool.close();
      if (this.slot.current) void set.pb?.bootstrap();
      this.loadedAt = new Date().toISOString();
      this.lastError = null;
      this.onSwap?.(set);
      return undefined;
    } catch (err) {
      const failure = err instanceof HookLoadError ? err : new HookLoadError(err instanceof Error ? err.message : String(err));
      this.lastError = { message: failure.reason, file: failure.file ?? null, line: failure.line ?? null, at: new Date().toISOString() };
      return failure;
    }
  }

  attach(services: HookServices): void {
    this.slot.current = services;
    services.mailer.hook = this.mailHook;
    void this.set?.pb?.bootstrap();
  }

  /** Runs the pb_hooks `onTerminate` handlers, while the services are still attached. */
  async terminate(): Promise<void> {
    await this.set?.pb?.terminate();
  }

  detach(services: HookServices): void {
    if (this.slot.current === services) this.slot.current = undefined;
  }

  close(): void {
    this.set?.pb?.pool.close();
    this.work.dispose();
  }

  around(action: RecordChange['action'], collection: Collection): AroundWrite | undefined {
    const handlers = this.set.for(WRITE_EVENTS[action], collection);
    if (handlers.length === 0) return undefined;
    // One function per handler list (per collection version and loaded set), made on first use.
    let around = this.arounds.get(handlers);
    if (!around) {
      const what = `${action} of a "${collection.name}" record`;
      around = (input, write) => {
        let reached = false;
        const event = new WriteEvent(this.slot, input);
        const chain = runChain(event, handlers, () => ((reached = true), write()), asHookError);
        return this.watchdog.watch(chain).then(
          () => {
            if (!reached) throw badRequest('The request was cancelled by a hook.');
          },
          (err: unknown) => {
            if (!(err instanceof HookTimeout)) throw err;
            // The handlers go on running; what they do through the transaction now fails, as it has ended.
            this.log?.error({ hooks: [...new Set(handlers.map((h) => h.source))], timeoutMs: this.options.timeoutMs }, `hooks of the ${what} ran past the timeout; the write was rolled back`);
            throw new ApiError(503, 'The request took too long to process (a hook ran past its time limit); nothing was saved.');
          },
        );
      };
      this.arounds.set(handlers, around);
    }
    return around;
  }

  private readonly arounds = new WeakMap<readonly Bound<unknown>[], AroundWrite>();

  readRequest(kind: 'list' | 'view', collection: Collection): AroundRead | undefined {
    const handlers = this.set.for(kind === 'list' ? 'onRecordsListRequest' : 'onRecordViewRequest', collection);
    if (handlers.length === 0) return undefined;
    return async (ctx, c, value) => {
      const event = new ReadRequestEvent(this.slot, ctx, c, kind, value);
      await runChain(event, handlers, done, asHookError);
      // A handler that answered wins; one that neither answered nor went on leaves the answer as it is.
      return event.answer ?? event.value;
    };
  }

  enriches(collection: Collection): boolean {
    return this.set.has('onRecordEnrich') && this.set.for('onRecordEnrich', collection).length > 0;
  }

  async enrich(ctx: RequestContext, collection: Collection, records: RecordJson[]): Promise<void> {
    const set = this.set;
    if (!set.has('onRecordEnrich') || records.length === 0) return;
    // Most answers: no handler for their collection, nothing expanded.
    const expanded = records.some((r) => r.expand !== undefined);
    if (set.for('onRecordEnrich', collection).length === 0 && !expanded) return;
    // The collections are looked up only to find expanded records' handlers.
    const services = this.slot.current;
    const lookup = services && expanded ? await services.collections.all(ctx.db) : undefined;
    const visit = async (c: Collection | undefined, record: RecordJson): Promise<void> => {
      if (record.expand && lookup) {
        for (const value of Object.values(record.expand)) {
          for (const related of Array.isArray(value) ? value : [value]) {
            if (typeof related === 'object' && related !== null) await visit(lookup.find(String((related as RecordJson).collectionId ?? '')), related as RecordJson);
          }
        }
      }
      const handlers = c ? set.for('onRecordEnrich', c) : [];
      if (handlers.length === 0) return;
      const event = new RecordHeld(this.slot, ctx, collectionView(c!), record);
      await runChain(event, handlers, done, asHookError);
      // A handler may have put another object in `e.record`: the one leaving is the caller's.
      if (event.record !== record) {
        for (const key of Object.keys(record)) delete record[key];
        Object.assign(record, event.record);
      }
    };
    for (const record of records) await visit(collection, record);
  }

  /** The records change hook: after-success handlers, after commit, once per committed write. */
  readonly changeHook: RecordChangeHook = changeHook(never, async (tx, change) => {
    const handlers = this.set.for(SUCCESS_EVENTS[change.action], change.collection);
    if (handlers.length === 0) return;
    tx.afterCommit(async () => {
      const event = new SuccessEvent(this.slot, change.ctx, change.collection, change.record, change.action === 'update' ? change.oldRecord : undefined);
      try {
        await runChain(event, handlers, done, asHookError);
      } catch (err) {
        // The write is committed: a failing handler is logged and changes no answer.
        const fault = asHookError(err, handlers[0].source);
        this.log?.error(
          fault instanceof HookFault ? { err: fault.cause, hook: fault.source } : { err: fault },
          `${SUCCESS_EVENTS[change.action]} handler failed (the ${change.action} is committed)`,
        );
      }
    });
  });

  /** The mailer's hook: the auth flows' mail events, then `onMailerSend`, before any mail leaves. */
  readonly mailHook: MailHook = async (mail, about) => {
    const set = this.set;
    const flow = about ? set.tagged(MAIL_EVENTS[about.event], [about.collection.id, about.collection.name]) : [];
    const every = set.all('onMailerSend');
    if (flow.length === 0 && every.length === 0) return mail;
    let out: Mail | undefined;
    const sendStep = async (message: HookMailMessage): Promise<void> => {
      if (every.length === 0) {
        out = mailOfMessage(message);
        return;
      }
      const event = new MailEvent(this.slot, message);
      await runChain(event, every, async () => void (out = mailOfMessage(event.message)), asHookError);
    };
    if (flow.length === 0) {
      await sendStep(hookMessage(mail));
      return out;
    }
    const record = await about!.record().catch(() => ({}));
    const event = new MailEvent(this.slot, hookMessage(mail), { id: about!.collection.id, name: about!.collection.name, type: 'auth' }, record, { ...about!.meta });
    await runChain(event, flow, () => sendStep(event.message), asHookError);
    return out;
  };

  /** Realtime (`RealtimeHooks`): a connecting client; a handler's throw refuses it. */
  async realtimeConnect(clientId: string, request: { headers: Record<string, unknown>; ip: string }): Promise<void> {
    const handlers = this.set.all('onRealtimeConnectRequest');
    if (handlers.length === 0) return;
    const event = new RealtimeEvent(this.slot, { id: clientId }, { method: 'GET', headers: request.headers as any, query: {}, body: {}, ip: request.ip }, null);
    await runChain(event, handlers, done, asHookError);
  }

  /** A subscription request: the topics the handlers leave (a handler that does not go on keeps the old ones). */
  async realtimeSubscribe(clientId: string, caller: { dbName: string; auth: RequestContext['auth'] }, topics: string[]): Promise<string[]> {
    const handlers = this.set.all('onRealtimeSubscribeRequest');
    if (handlers.length === 0) return topics;
    const event = new RealtimeEvent(this.slot, { id: clientId }, { method: 'POST', headers: {}, query: {}, body: { clientId, subscriptions: topics }, ip: '' }, authView(caller.auth), caller.dbName);
    event.subscriptions = [...topics];
    if (!(await goesOn(event, handlers))) throw badRequest('The subscription request was cancelled by a hook.');
    return (event.subscriptions ?? []).map(String);
  }

  realtimeMessages(): boolean {
    return this.set.has('onRealtimeMessageSend');
  }

  /** A record message about to reach one client: the message the handlers leave, or none when one did not go on. */
  async realtimeMessage(clientId: string, caller: RequestContext['auth'] | undefined, name: string, data: string): Promise<{ name: string; data: string } | undefined> {
    const handlers = this.set.all('onRealtimeMessageSend');
    if (handlers.length === 0) return { name, data };
    const event = new RealtimeEvent(this.slot, { id: clientId }, undefined, caller ? authView(caller) : null);
    event.message = { name, data };
    if (!(await goesOn(event, handlers)) || !event.message) return undefined;
    const m = event.message as { name: unknown; data: unknown };
    return { name: String(m.name), data: typeof m.data === 'string' ? m.data : JSON.stringify(m.data) };
  }

  /** The sign-in hook (`onRecordAuthRequest`): every successful record sign-in, before its token leaves. */
  readonly signIn: SignInHook = async (ctx, collection, record, token, method) => {
    const handlers = this.set.for('onRecordAuthRequest', collection);
    if (handlers.length === 0) return;
    const event = new SignInEvent(this.slot, ctx, collection, record, token, method);
    await runChain(event, handlers, done, asHookError);
  };

  /** The email flows' request hook (`onRecordAuthFlowRequest`): false when a handler did not go on. */
  readonly flowRequest: FlowRequestHook = async (ctx, collection, action, record, newEmail) => {
    const handlers = this.set.for('onRecordAuthFlowRequest', collection);
    if (handlers.length === 0) return true;
    return goesOn(new AuthFlowEvent(this.slot, ctx, collection, await record(), action, newEmail), handlers);
  };

  /** The download hook (`onFileDownloadRequest`): the name to serve the file under, undefined when a handler did not go on. */
  readonly fileDownload: FileDownloadHook = async (ctx, collection, record, field, servedName) => {
    const handlers = this.set.for('onFileDownloadRequest', collection);
    if (handlers.length === 0) return servedName;
    const event = new FileDownloadEvent(this.slot, ctx, collection, record, field, servedName);
    // A name for Content-Disposition's quoted string: printable ASCII, no quote or backslash.
    return (await goesOn(event, handlers)) ? String(event.servedName || servedName).replace(/[^\x20-\x7e]|["\\]/g, '_') : undefined;
  };

  /** Runs a cron job of the hooks now, on this node (`POST /api/hooks/cron/:name`). */
  async runCron(name: string): Promise<void> {
    const job = this.set.crons.get(name);
    if (!job) throw notFound(`No cron job "${name}" among the hooks.`);
    try {
      await job.handler();
    } catch (err) {
      throw asHookError(err, job.source);
    }
  }

  status(): HookStatus {
    const set = this.set;
    return {
      dir: this.options.dir ?? null,
      loadedAt: this.loadedAt,
      files: [...set.files],
      handlers: set.bindings(),
      routes: set.routes.map((r) => ({ method: r.method, path: r.path, source: r.source })),
      cron: [...set.crons.values()].map((c) => ({ name: c.name, schedule: c.expression, source: c.source })),
      lastError: this.lastError,
      pbDir: this.options.pbDir ?? null,
      pbNotFired: set.pb?.unsupported ?? [],
    };
  }
}

export { HookLoadError };
