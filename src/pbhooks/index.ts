/**
 * PocketBase's `pb_hooks/*.pb.js`, run as they are (API contract §22).
 *
 * The files run in worker threads (`worker.ts`), each evaluating them all in a `node:vm` context
 * with PocketBase's globals. What they register becomes handlers of the TypeScript hooks' set
 * (record events, routes, cron jobs), so they share its chain, transactions, time limit and cron
 * claim. A handler runs in one idle worker; its synchronous `$app` calls come here as messages,
 * are done with the event's `app` (bound to the write's transaction inside a record event), and
 * answered on the worker's port while it waits on a shared integer. A handler past the time limit
 * has its worker terminated and replaced: the request answers 503, the server never waits on it.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { readdirSync, statSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { MessageChannel, type MessagePort, Worker } from 'node:worker_threads';
import { ApiError } from '../errors.ts';
import { hookApp, type ServiceSlot } from '../hooks/facade.ts';
import { HookRecords } from '../hooks/records-api.ts';
import type { HookSet, RecordEventName } from '../hooks/registry.ts';
import type { HookApp, RouteEvent } from '../hooks/types.ts';
import type { MetaSettings } from '../settings/meta.ts';
import { RawAnswer } from '../records/deps.ts';
import { systemContext } from '../context.ts';
import type { StagedFile } from '../files/staged.ts';
import { mailOfMessage } from '../hooks/runtime.ts';
import { HookLoadError } from '../hooks/load-error.ts';
import { ANSWER_BYTES, runtimeSource } from './source.ts';
import { MainRuntime, type SyncOps } from './main-runtime.ts';


/** The `*.pb.js` files directly in `dir`, in name order (PocketBase's order); none without the folder. */
export function pbHookFiles(dir: string | undefined): string[] {
  if (!dir) return [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new HookLoadError(`cannot read the pb_hooks directory: ${(err as Error).message}`, dir);
  }
  return names
    .filter((n) => n.endsWith('.pb.js') && !n.startsWith('.'))
    .map((n) => path.join(dir, n))
    .filter((f) => statSync(f).isFile())
    .sort();
}

/** What a file registered, as the worker reports it. */
export interface PbRegistration {
  kind: 'event' | 'route' | 'cron' | 'cronRemove';
  event?: string;
  collections?: string[];
  method?: string;
  path?: string;
  name?: string;
  schedule?: string;
  file: string;
  gen: 22 | 23;
}

type Ops = (op: string, args: any[]) => Promise<unknown>;

interface Job {
  resolve(result: any): void;
  reject(err: unknown): void;
  ops: Ops;
}


const encoder = new TextEncoder();

class PbWorker {
  readonly worker: Worker;
  /** [0]: 1 once an answer is ready, [1]: its length in `answerBytes`, or -1 when it is on the port. */
  private readonly shared = new SharedArrayBuffer(8 + ANSWER_BYTES);
  private readonly flag = new Int32Array(this.shared, 0, 2);
  private readonly answerBytes = new Uint8Array(this.shared, 8);
  private readonly port: MessagePort;
  job?: Job;
  dead = false;
  readonly ready: Promise<PbRegistration[]>;

  constructor(
    files: string[],
    dir: string,
    private readonly log: (level: string, msg: string, data: Record<string, unknown>) => void,
    private readonly onExit: (w: PbWorker) => void,
  ) {
    const { port1, port2 } = new MessageChannel();
    this.port = port1;
    this.worker = new Worker(runtimeSource(), {
      eval: true,
      workerData: { files, hooksDir: dir, shared: this.shared, port: port2 },
      transferList: [port2],
      stdout: false,
      stderr: false,
    });
    this.worker.unref();
    this.ready = new Promise((resolve, reject) => {
      this.worker.on('message', (msg: any) => {
        switch (msg.type) {
          case 'loaded':
            resolve(msg.regs);
            return;
          case 'call':
            this.answer(msg.op, msg.args);
            return;
          case 'log':
            this.log(msg.level, msg.args[0], msg.args[1]);
            return;
          case 'done':
          case 'fail': {
            const job = this.job;
            this.job = undefined;
            if (!job) return;
            if (msg.type === 'done') job.resolve(msg.result);
            else job.reject(revive(msg.error));
          }
        }
      });
      this.worker.on('error', (err) => {
        reject(located(err, files));
        this.end(err);
      });
      this.worker.on('exit', () => this.end(new Error('the pb_hooks worker stopped')));
    });
  }

  private answer(op: string, args: any[]): void {
    const job = this.job;
    // The answer as JSON text in shared memory: the worker parses it once, in the hooks' realm, and
    // no message wakes its event loop (which is blocked on the flag anyway).
    const done = (reply: { value?: unknown; error?: unknown }) => {
      if (this.dead) return;
      let text: string;
      try {
        text = JSON.stringify(reply);
      } catch (err) {
        text = JSON.stringify({ error: errorData(err) });
      }
      const { read, written } = encoder.encodeInto(text, this.answerBytes);
      if (read === text.length) Atomics.store(this.flag, 1, written);
      else {
        this.port.postMessage(text);
        Atomics.store(this.flag, 1, -1);
      }
      Atomics.store(this.flag, 0, 1);
      Atomics.notify(this.flag, 0);
    };
    if (!job) return done({ error: { message: 'no handler is running' } });
    job.ops(op, args).then(
      (value) => done({ value }),
      (err) => done({ error: errorData(err) }),
    );
  }

  private end(err: unknown): void {
    if (this.dead) return;
    this.dead = true;
    const job = this.job;
    this.job = undefined;
    job?.reject(err);
    this.onExit(this);
  }

  terminate(): void {
    this.end(new Error('terminated'));
    void this.worker.terminate();
  }
}

function errorData(err: unknown): Record<string, unknown> {
  if (err instanceof ApiError) return { status: err.status, message: err.message, data: err.data };
  return { message: err instanceof Error ? err.message : String(err) };
}

function revive(e: { status?: number; message: string; data?: any; stack?: string }): Error {
  if (e.status) return new ApiError(e.status, e.message, e.data ?? {});
  const err = new Error(e.message);
  if (e.stack) err.stack = e.stack;
  return err;
}

/** A load error located in one of the files (the first stack frame naming it, or a syntax error's). */
function located(err: unknown, files: string[]): HookLoadError {
  const reason = err instanceof Error ? `${err.name === 'Error' ? '' : `${err.name}: `}${err.message}` : String(err);
  const stack = err instanceof Error ? (err.stack ?? '') : '';
  for (const file of files) {
    const m = new RegExp(`${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:(\\d+)(?::(\\d+))?`).exec(stack);
    if (m) return new HookLoadError(reason, file, Number(m[1]), m[2] ? Number(m[2]) : undefined);
  }
  return new HookLoadError(reason, files.length === 1 ? files[0] : undefined);
}

/** The 503 of a handler that ran past the time limit. */
export function pbTimeout(): ApiError {
  return new ApiError(503, 'The request took too long to process (a hook ran past its time limit); nothing was saved.');
}

/**
 * Workers for one load of the files. Each runs one handler at a time; a handler whose `$app` call
 * runs other handlers (a save firing record hooks) gets another worker, so busy workers never wait
 * on each other. Idle workers beyond `keep` end.
 *
 * At most `keep` handlers run at once from outside (a request, a write, a cron tick); more wait in
 * line for a worker instead of each spawning a fresh one that evaluates every file again and ends
 * (50 concurrent requests to a one-line route fell to ~30 req/s and +100 MB that way). A handler
 * run from inside another's `$app` call never waits in that line: its caller holds a worker.
 */
/** Set while a worker's `$app` call is done on this thread: handlers it runs are nested. */
const insideOps = new AsyncLocalStorage<true>();

export class PbPool {
  private readonly idle: PbWorker[] = [];
  private readonly all = new Set<PbWorker>();
  private closed = false;

  constructor(
    readonly files: string[],
    readonly dir: string,
    private readonly timeoutMs: number,
    private readonly log: (level: string, msg: string, data: Record<string, unknown>) => void,
    private readonly keep = Math.max(2, availableParallelism()),
  ) {}

  /** Handlers run from outside at this moment, and those waiting for one of them to end. */
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  private async slot(): Promise<() => void> {
    if (this.running >= this.keep) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running++;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    };
  }

  private spawn(): PbWorker {
    const w = new PbWorker(this.files, this.dir, this.log, (gone) => {
      this.all.delete(gone);
      const i = this.idle.indexOf(gone);
      if (i >= 0) this.idle.splice(i, 1);
    });
    this.all.add(w);
    return w;
  }

  /** Loads the files in a first worker: what they register, or the load error. */
  async start(): Promise<PbRegistration[]> {
    const w = this.spawn();
    try {
      const regs = await w.ready;
      this.idle.push(w);
      return regs;
    } catch (err) {
      w.terminate();
      throw err;
    }
  }

  /** Runs registration `index` with `payload`; its `$app` calls are done by `ops`. */
  async run(index: number, payload: unknown, ops: Ops): Promise<any> {
    if (this.closed) throw new ApiError(503, 'The server is stopping.');
    if (insideOps.getStore()) return this.runNow(index, payload, ops);
    const release = await this.slot();
    try {
      return await this.runNow(index, payload, ops);
    } finally {
      release();
    }
  }

  private async runNow(index: number, payload: unknown, ops: Ops): Promise<any> {
    if (this.closed) throw new ApiError(503, 'The server is stopping.');
    const w = this.idle.pop() ?? this.spawn();
    await w.ready;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        w.job = undefined;
        w.terminate();
        this.log('error', 'a pb_hooks handler ran past the time limit; its worker was replaced', { timeoutMs: this.timeoutMs, index });
        reject(pbTimeout());
      }, this.timeoutMs);
      w.job = {
        ops: (op, args) => insideOps.run(true, () => ops(op, args)),
        resolve: (result) => {
          clearTimeout(timer);
          if (!this.closed && this.idle.length < this.keep && !w.dead) this.idle.push(w);
          else w.terminate();
          resolve(result);
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(err);
        },
      };
      w.worker.postMessage({ type: 'run', index, payload });
    });
  }

  get size(): number {
    return this.all.size;
  }

  close(): void {
    this.closed = true;
    for (const w of [...this.all]) w.terminate();
  }
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

interface EventLike {
  app: HookApp;
  db: string;
  auth: unknown;
  collection: { id: string; name: string; type: string };
  record: Record<string, unknown>;
  original?: Record<string, unknown>;
  request?: { method: string; headers: Record<string, unknown>; query: Record<string, unknown>; body: unknown; ip: string };
  next(): Promise<void>;
}

/** Ops a handler's `$app` reaches: `app` is the event's (in a record event, bound to the write's transaction). */
function opsFor(slot: ServiceSlot, app: HookApp, db: string, extra: Record<string, (...args: any[]) => Promise<unknown>> = {}): Ops {
  const records = () => app.records(db) as HookRecords;
  return async (op, args) => {
    const own = extra[op];
    if (own) return own(...args);
    switch (op) {
      case 'findById':
        return records().findById(args[0], args[1]);
      case 'findFirst':
        return records().findFirst(args[0], args[1], args[2] ?? undefined);
      case 'find':
        return records().find(args[0], clean(args[1]));
      case 'count':
        return records().count(args[0]);
      case 'create':
        return withFiles(slot, args[1], (data) => records().create(args[0], data ?? {}));
      case 'update':
        return withFiles(slot, args[2], (data) => records().update(args[0], args[1], data ?? {}));
      case 'mails': {
        const services = slot.current;
        if (!services?.emailFlows) throw new Error('Cairn is not serving: mail is sent only while the server runs');
        const database = await services.registry.get(db);
        const collection = await services.collections.get(database, String(args[1]));
        return services.emailFlows.sendFor(systemContext(db, database), collection, args[0], String(args[2]), args[3]);
      }
      case 'fileFromURL':
        return fileFromURL(String(args[0]));
      case 'saveCollection':
      case 'deleteCollection': {
        // Schema changes are the database's own (outside any write's transaction), as through the API.
        const services = slot.current;
        if (!services) throw new Error('Cairn is not serving: collections are changed only while the server runs');
        const database = await services.registry.get(db);
        if (op === 'deleteCollection') return services.collections.remove(database, String(args[0]));
        const body = (args[0] ?? {}) as { id?: string; name?: string };
        // One the app found is changed (by its id); a new one is created, and a name taken refuses it.
        const existing = args[1] === true && body.id ? await services.collections.find(database, body.id) : undefined;
        return existing ? services.collections.update(database, existing.name, body) : services.collections.create(database, body);
      }
      case 'delete':
        return records().delete(args[0], args[1]);
      case 'collection':
        return records().collection(args[0]);
      case 'collectionsByType':
        return records().collectionsOfType(String(args[0]));
      case 'recordsBySql':
        return records().byQuery(args[0], args[1], args[2] ?? {});
      case 'expand':
        return records().expanded(args[0], args[1], args[2]);
      case 'sql':
        return records().sql(args[0], args[1] ?? {}, args[2]);
      case 'settings': {
        const s = slot.current?.settings;
        const meta = s ? await s.get<MetaSettings>('meta') : undefined;
        return { meta: { appName: meta?.appName ?? '', appURL: meta?.appUrl ?? '', appUrl: meta?.appUrl ?? '', senderName: meta?.senderName ?? '', senderAddress: meta?.senderAddress ?? '' }, smtp: { enabled: true } };
      }
      case 'mail': {
        const services = slot.current;
        if (!services) throw new Error('Cairn is not serving: mail is sent only while the server runs');
        const mail = mailOfMessage(args[0]);
        if (!mail.from.address) {
          const meta = await services.settings.get<MetaSettings>('meta');
          mail.from = { name: mail.from.name || meta.senderName, address: meta.senderAddress };
        }
        if (!mail.to) throw new TypeError('MailerMessage: `to` is required');
        return services.mailer.send(mail);
      }
      case 'http':
        return httpSend(args[0]);
      case 'dataDir':
        return process.cwd();
      default:
        throw new Error(`${op} is not available in Cairn's pb_hooks`);
    }
  };
}

/** The `$app` calls a handler tried on the main thread has answered there (main-runtime.ts); the others give the try up. */
function syncOpsFor(app: HookApp, db: string): SyncOps {
  return (op, args) => {
    const records = app.records(db) as Partial<HookRecords>;
    let value: unknown;
    if (op === 'findById') value = records.findByIdNow?.(args[0], args[1]);
    else if (op === 'find') value = records.findNow?.(args[0], clean(args[1]));
    else if (op === 'findFirst') {
      // None found: the worker answers with findFirst's own error.
      value = records.findNow?.(args[0], { filter: args[1], params: args[2] ?? undefined, limit: 1 })?.[0];
    }
    return value === undefined ? undefined : { value };
  };
}

/** A file a handler made (`$filesystem.fileFrom*`, `e.findUploadedFiles`), as the worker posts it. */
interface FileMarker {
  __file: 'bytes';
  name: string;
  bytes: string;
}

const isFileMarker = (v: unknown): v is FileMarker => typeof v === 'object' && v !== null && (v as FileMarker).__file === 'bytes';

/**
 * Runs a write whose values may hold files a handler made: each is staged as an upload is (so the
 * write validates and stores it as it does a request's), and its staged copy removed after.
 */
async function withFiles<T>(slot: ServiceSlot, data: Record<string, unknown> | undefined, write: (data: Record<string, unknown> | undefined) => Promise<T>): Promise<T> {
  if (!data || !Object.values(data).some((v) => isFileMarker(v) || (Array.isArray(v) && v.some(isFileMarker)))) return write(data);
  const files = slot.current?.records.deps.files;
  if (!files?.stageBytes || !files.discardStaged) throw new Error('files cannot be stored from pb_hooks here');
  const staged: StagedFile[] = [];
  const stage = async (v: unknown) => {
    if (!isFileMarker(v)) return v;
    const file = await files.stageBytes!(v.name, Buffer.from(v.bytes, 'base64'));
    staged.push(file);
    return file;
  };
  const out: Record<string, unknown> = {};
  try {
    for (const [k, v] of Object.entries(data)) out[k] = Array.isArray(v) ? await Promise.all(v.map(stage)) : await stage(v);
    return await write(out);
  } finally {
    await files.discardStaged(staged);
  }
}

/** `$filesystem.fileFromURL`: the body of a GET, as a file named after the URL's last segment. */
async function fileFromURL(url: string): Promise<FileMarker & { size: number }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(120_000) });
  if (!res.ok) throw new Error(`failed to download url ${url} (${res.status})`);
  const bytes = Buffer.from(await res.arrayBuffer());
  const name = decodeURIComponent(new URL(url).pathname.split('/').filter(Boolean).pop() ?? '') || 'file';
  return { __file: 'bytes', name, bytes: bytes.toString('base64'), size: bytes.length };
}

function clean(options: any): any {
  const out: any = {};
  for (const [k, v] of Object.entries(options ?? {})) if (v !== undefined && v !== null && v !== '') out[k] = v;
  return out;
}

/** `$http.send`: PocketBase's answer shape (`statusCode`, `headers`, `raw`, `json`, `cookies`). */
async function httpSend(config: { url: string; method: string; body: string; headers: Record<string, string>; timeout: number }): Promise<unknown> {
  const res = await fetch(config.url, {
    method: String(config.method || 'GET').toUpperCase(),
    headers: config.headers,
    body: ['GET', 'HEAD'].includes(String(config.method || 'GET').toUpperCase()) || !config.body ? undefined : String(config.body),
    signal: AbortSignal.timeout(Math.max(1, Number(config.timeout) || 120) * 1000),
  });
  const raw = await res.text();
  let json: unknown = null;
  try {
    json = JSON.parse(raw);
  } catch {
    json = null;
  }
  const headers: Record<string, string[]> = {};
  res.headers.forEach((v, k) => {
    headers[k.replace(/(^|-)([a-z])/g, (_m, d, c) => d + c.toUpperCase())] = [v];
  });
  return { statusCode: res.status, headers, raw, json, body: raw, cookies: {} };
}

/** Plain errors of a handler as PocketBase answers them: 400, the detail in the log only. */
function asPbError(err: unknown, file: string, log: (level: string, msg: string, data: Record<string, unknown>) => void): unknown {
  if (err instanceof ApiError) return err;
  log('error', 'pb_hooks handler failed', { hook: file, err: err instanceof Error ? err.message : String(err) });
  return new ApiError(400, 'Something went wrong while processing your request.');
}

/** The request behind an event, as the worker builds `e.request`/`e.requestInfo()` from it (none for work no request started). */
function requestPayload(e: { request?: EventLike['request']; auth?: unknown }): unknown {
  const r = e.request;
  if (!r || r.method === 'SYSTEM') return undefined;
  return { method: r.method, path: '', query: new URLSearchParams(r.query as any).toString(), headers: r.headers, body: r.body, ip: r.ip, params: {}, auth: e.auth };
}

/** What a handler did to a record leaving for a client: keys set, hidden, shown again, custom keys allowed. */
interface LeavingDelta {
  changes?: Record<string, unknown>;
  hidden?: string[];
  unhidden?: string[];
  custom?: boolean;
}

/** Applies a handler's `set`/`hide`/`unhide` to the record leaving (custom keys only with `withCustomData(true)`, as PocketBase). */
function applyLeaving(record: Record<string, unknown>, d: LeavingDelta | undefined): void {
  if (!d) return;
  for (const [k, v] of Object.entries(d.changes ?? {})) if (k in record || d.custom || d.unhidden?.includes(k)) record[k] = v;
  for (const k of d.hidden ?? []) delete record[k];
}

/**
 * Loads `dir`'s `*.pb.js` files into `set`: record events, routes and cron jobs become the set's
 * handlers, each running its registration in the pool. Throws a `HookLoadError` naming the file
 * (and line) of a file that does not load. Undefined when there are no files.
 */
export async function loadPbHooks(dir: string | undefined, set: HookSet, slot: ServiceSlot, timeoutMs: number): Promise<PbLoaded | undefined> {
  const files = pbHookFiles(dir);
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
