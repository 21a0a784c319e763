import type { Collection } from '../collections/model.ts';
import { type Auth, isSystem, type RequestContext } from '../context.ts';
import { ApiError, badRequest, notFound } from '../errors.ts';
import { type AroundRead, RawAnswer } from '../records/deps.ts';
import type { AroundWrite, RecordChangeHook, RecordEvent as RecordChange, RecordEvents, WriteEventInput } from '../records/deps.ts';
import type { RecordJson } from '../records/serialize.ts';
import type { SignInHook } from '../auth/record-auth.ts';
import type { FlowAction, FlowRequestHook } from '../auth/flow-hook.ts';
import type { FileDownloadHook } from '../files/download.ts';
import type { Mail, MailAbout, MailHook } from '../auth/mail/mailer.ts';
import type { NamingLogger } from '../lib/logger.ts';
import { type Bound, runChain } from '../lib/chain.ts';
import { hookApp, type HookServices, type ServiceSlot } from './facade.ts';
import { asHookError, HookFault } from './fault.ts';
import { HookLoadError, hookWorkDir, loadHooks } from './loader.ts';
import { HookSet, type RecordEventName } from './registry.ts';
import type { HookApp, HookAuth, HookCollection, HookSetup } from './types.ts';

export interface HookRuntimeOptions {
  /** The hooks directory (absolute); undefined: no files. */
  dir?: string;
  /** PocketBase's pb_hooks directory (absolute); undefined: none. */
  pbDir?: string;
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

const WRITE_EVENTS: Record<RecordChange['action'], RecordEventName> = { create: 'onRecordCreate', update: 'onRecordUpdate', delete: 'onRecordDelete' };
const SUCCESS_EVENTS: Record<RecordChange['action'], RecordEventName> = {
  create: 'onRecordAfterCreateSuccess',
  update: 'onRecordAfterUpdateSuccess',
  delete: 'onRecordAfterDeleteSuccess',
};

const collectionViews = new WeakMap<Collection, HookCollection>();

function collectionView(c: Collection): HookCollection {
  let view = collectionViews.get(c);
  if (!view) collectionViews.set(c, (view = Object.freeze({ id: c.id, name: c.name, type: c.type })));
  return view;
}

/** The caller of a request as hooks see it: null for guests and for work no request started. */
export function hookAuth(ctx: RequestContext): HookAuth | null {
  if (isSystem(ctx)) return null;
  return authView(ctx.auth);
}

export function authView(auth: Auth): HookAuth | null {
  switch (auth.type) {
    case 'guest':
      return null;
    case 'admin':
      return { id: auth.id, email: auth.email, collectionId: 'pbc_3142635823', collectionName: '_superusers' };
    case 'apikey':
      return { id: auth.id, name: auth.name, roles: [...auth.roles], collectionName: '_api_keys' };
    case 'record':
      return { ...(auth.record as RecordJson), collectionId: auth.collectionId, collectionName: auth.collectionName } as HookAuth;
  }
}

/**
 * The event objects handlers get. `app` and `auth` are made on first use: most handlers read
 * neither, and a write's cost is what the hooked-create bench holds to 5 %.
 */
class Event {
  next!: () => Promise<void>;
  /** Set by the chain to the file of the handler running: `e.app.logger` is named after it. */
  current?: string;
  private apps?: Map<string, HookApp>;
  private authMade?: HookAuth | null;

  constructor(
    private readonly slot: ServiceSlot,
    private readonly ctx: RequestContext,
    readonly collection: HookCollection,
    private readonly tx?: WriteEventInput['tx'],
  ) {}

  get db(): string {
    return this.ctx.dbName;
  }

  get app(): HookApp {
    const source = this.current ?? 'event';
    this.apps ??= new Map();
    let app = this.apps.get(source);
    if (!app) this.apps.set(source, (app = hookApp(this.slot, source, undefined, this.tx ? { db: this.ctx.dbName, tx: this.tx } : undefined)));
    return app;
  }

  get auth(): HookAuth | null {
    if (this.authMade === undefined) this.authMade = hookAuth(this.ctx);
    return this.authMade;
  }

  /** The request the write came from (`method` is `SYSTEM` for work no request started). */
  get request(): RequestContext['request'] {
    return this.ctx.request;
  }
}

/** An event about one record, held as given (enrich, after-success, sign-in). */
class RecordHeld extends Event {
  constructor(
    slot: ServiceSlot,
    ctx: RequestContext,
    collection: HookCollection,
    public record: Record<string, unknown>,
  ) {
    super(slot, ctx, collection);
  }
}

/** A write's event: `record` and `original` are made when a handler first reads them. */
class WriteEvent extends Event {
  constructor(
    slot: ServiceSlot,
    private readonly input: WriteEventInput,
  ) {
    super(slot, input.ctx, collectionView(input.collection), input.tx);
  }

  get record(): Record<string, unknown> {
    return this.input.record.get();
  }

  set record(value: Record<string, unknown>) {
    this.input.record.set(value);
  }

  get original(): RecordJson | undefined {
    return this.input.original?.();
  }
}

/**
 * An after-success event. Its record is a copy of the committed one (which is also the write's
 * answer, not the handlers' to change), made when a handler first reads it.
 */
class SuccessEvent extends Event {
  #committed: RecordJson;
  #record?: Record<string, unknown>;

  constructor(
    slot: ServiceSlot,
    ctx: RequestContext,
    collection: Collection,
    committed: RecordJson,
    readonly original: RecordJson | undefined,
  ) {
    super(slot, ctx, collectionView(collection));
    this.#committed = committed;
  }

  get record(): Record<string, unknown> {
    return (this.#record ??= { ...this.#committed });
  }

  set record(value: Record<string, unknown>) {
    this.#record = value;
  }
}

class SignInEvent extends RecordHeld {
  constructor(
    slot: ServiceSlot,
    ctx: RequestContext,
    collection: Collection,
    record: RecordJson,
    readonly token: string,
    readonly method: string,
  ) {
    super(slot, ctx, collectionView(collection), record);
  }
}

/** An email flow's request for an account (`onRecordAuthFlowRequest`); `method` names the action for pb_hooks' events. */
class AuthFlowEvent extends RecordHeld {
  constructor(
    slot: ServiceSlot,
    ctx: RequestContext,
    collection: Collection,
    record: RecordJson,
    readonly action: FlowAction,
    readonly newEmail: string | undefined,
  ) {
    super(slot, ctx, collectionView(collection), record);
  }

  get method(): string {
    return this.action;
  }
}

/** A record's file about to be downloaded (`onFileDownloadRequest`). */
class FileDownloadEvent extends RecordHeld {
  readonly fileField: { name: string };
  readonly method = 'download';
  constructor(
    slot: ServiceSlot,
    ctx: RequestContext,
    collection: Collection,
    record: RecordJson,
    field: string,
    public servedName: string,
  ) {
    super(slot, ctx, collectionView(collection), record);
    this.fileField = { name: field };
  }
}

/**
 * An API request reading records (`onRecordsListRequest`, `onRecordViewRequest`): `result` is the
 * list answer (its `items` also as `records`) or `record` the viewed one, both the handlers' to
 * change before `next()`; `answer` is set by a handler that answers itself.
 */
export class ReadRequestEvent extends Event {
  answer?: RawAnswer;
  constructor(
    slot: ServiceSlot,
    ctx: RequestContext,
    collection: Collection,
    readonly kind: 'list' | 'view',
    public value: any,
  ) {
    super(slot, ctx, collectionView(collection));
  }

  get result(): any {
    return this.kind === 'list' ? this.value : undefined;
  }

  get records(): any[] {
    return this.kind === 'list' ? this.value.items : [this.value];
  }

  set records(items: any[]) {
    if (this.kind === 'list') this.value.items = items;
    else this.value = items[0];
  }

  get record(): any {
    return this.kind === 'view' ? this.value : this.value.items[0];
  }

  set record(r: any) {
    if (this.kind === 'view') this.value = r;
  }

  json(status: number, data: unknown): void {
    this.answer = new RawAnswer(status, 'application/json; charset=utf-8', JSON.stringify(data) ?? 'null');
  }

  string(status: number, text: string): void {
    this.answer = new RawAnswer(status, 'text/plain; charset=utf-8', String(text));
  }

  html(status: number, text: string): void {
    this.answer = new RawAnswer(status, 'text/html; charset=utf-8', String(text));
  }

  noContent(status = 204): void {
    this.answer = new RawAnswer(status, undefined, undefined);
  }
}

/** A mail address as PocketBase's `mail.Address`. */
export interface MailAddress {
  name: string;
  address: string;
}

/** A mail as hooks see it (PocketBase's `mailer.Message`). */
export interface HookMailMessage {
  from: MailAddress;
  to: MailAddress[];
  cc: MailAddress[];
  bcc: MailAddress[];
  subject: string;
  html: string;
  text: string;
  headers: Record<string, string>;
}

function parseAddresses(list: string | undefined): MailAddress[] {
  if (!list) return [];
  return list
    .split(',')
    .map((a) => a.trim())
    .filter((a) => a !== '')
    .map((a) => {
      const m = /^(.*)<([^>]+)>$/.exec(a);
      return m ? { name: m[1].trim().replace(/^"|"$/g, ''), address: m[2].trim() } : { name: '', address: a };
    });
}

function joinAddresses(list: unknown): string {
  const items = Array.isArray(list) ? list : list ? [list] : [];
  return items
    .map((a: any) => (typeof a === 'string' ? a : a?.name ? `${a.name} <${a.address}>` : String(a?.address ?? '')))
    .filter((a) => a !== '')
    .join(', ');
}

export function hookMessage(mail: Mail): HookMailMessage {
  return {
    from: { name: mail.from.name, address: mail.from.address },
    to: parseAddresses(mail.to),
    cc: parseAddresses(mail.cc),
    bcc: parseAddresses(mail.bcc),
    subject: mail.subject,
    html: mail.html,
    text: mail.text,
    headers: { ...(mail.headers ?? {}) },
  };
}

export function mailOfMessage(m: any): Mail {
  const from = m?.from && typeof m.from === 'object' ? { name: String(m.from.name ?? ''), address: String(m.from.address ?? '') } : parseAddresses(String(m?.from ?? ''))[0] ?? { name: '', address: '' };
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(m?.headers ?? {})) headers[k] = String(v);
  return {
    from,
    to: joinAddresses(m?.to),
    cc: joinAddresses(m?.cc) || undefined,
    bcc: joinAddresses(m?.bcc) || undefined,
    subject: String(m?.subject ?? ''),
    html: String(m?.html ?? ''),
    text: String(m?.text ?? ''),
    headers,
  };
}

/** The hooks' event names of the auth flows' mails. */
const MAIL_EVENTS: Record<MailAbout['event'], RecordEventName> = {
  'password-reset': 'onMailerRecordPasswordResetSend',
  verification: 'onMailerRecordVerificationSend',
  'email-change': 'onMailerRecordEmailChangeSend',
  otp: 'onMailerRecordOTPSend',
  'auth-alert': 'onMailerRecordAuthAlertSend',
};

/**
 * A mail about to leave (`onMailerSend`; `onMailerRecord*Send` with the account's `record`,
 * `collection` and `meta`): `message` is the handlers' to change; a handler that does not call
 * `next()` stops the mail.
 */
export class MailEvent {
  next!: () => Promise<void>;
  current?: string;
  readonly db = 'main';
  private apps?: Map<string, HookApp>;
  constructor(
    private readonly slot: ServiceSlot,
    public message: HookMailMessage,
    readonly collection?: { id: string; name: string; type: string },
    public record?: Record<string, unknown>,
    readonly meta?: Record<string, unknown>,
  ) {}

  get app(): HookApp {
    const source = this.current ?? 'event';
    this.apps ??= new Map();
    let app = this.apps.get(source);
    if (!app) this.apps.set(source, (app = hookApp(this.slot, source)));
    return app;
  }

  get auth(): null {
    return null;
  }
}

/**
 * A realtime event: a client connecting (`onRealtimeConnectRequest`), its subscription request
 * (`onRealtimeSubscribeRequest`, `subscriptions` the handlers' to change) or a message about to
 * reach it (`onRealtimeMessageSend`, `message` `{ name, data }` the handlers' to change).
 */
export class RealtimeEvent {
  next!: () => Promise<void>;
  current?: string;
  readonly db: string;
  private apps?: Map<string, HookApp>;
  subscriptions?: string[];
  message?: { name: string; data: string };
  constructor(
    private readonly slot: ServiceSlot,
    readonly client: { id: string },
    readonly request: RequestContext['request'] | undefined,
    readonly auth: HookAuth | null,
    db = 'main',
  ) {
    this.db = db;
  }

  get app(): HookApp {
    const source = this.current ?? 'event';
    this.apps ??= new Map();
    let app = this.apps.get(source);
    if (!app) this.apps.set(source, (app = hookApp(this.slot, source)));
    return app;
  }
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
      this.set = await loadHooks(this.options.dir, this.options.inline ?? [], this.slot, this.work.dir, { dir: this.options.pbDir, timeoutMs: this.options.timeoutMs });
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
      const set = await loadHooks(this.options.dir, this.options.inline ?? [], this.slot, this.work.dir, { dir: this.options.pbDir, timeoutMs: this.options.timeoutMs });
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
  readonly changeHook: RecordChangeHook = async (tx, change) => {
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
  };

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
