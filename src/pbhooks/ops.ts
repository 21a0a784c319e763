/**
 * The host side of a handler's `$app` calls: each operation the runtime asks for (runtime/realm.ts,
 * HostBridge) done with the event's `app`, asynchronously for a worker (`opsFor`) or synchronously for
 * the main-thread try (`syncOpsFor`), and the conversions of files, HTTP requests and errors.
 */
import path from 'node:path';
import { ApiError } from '../errors.ts';
import type { ServiceSlot } from '../hooks/facade.ts';
import { HookRecords } from '../hooks/records-api.ts';
import type { HookApp } from '../hooks/types.ts';
import type { MetaSettings } from '../settings/meta.ts';
import { systemContext } from '../context.ts';
import type { StagedFile } from '../files/staged.ts';
import type { Transaction } from '../storage/index.ts';
import { mailOfMessage } from '../hooks/events.ts';
import type { SyncOps } from './main-runtime.ts';
import type { Ops, PbLog } from './pool.ts';
export interface EventLike {
  app: HookApp;
  db: string;
  auth: unknown;
  collection: { id: string; name: string; type: string };
  record: Record<string, unknown>;
  original?: Record<string, unknown>;
  request?: { method: string; headers: Record<string, unknown>; query: Record<string, unknown>; body: unknown; ip: string; context?: string };
  next(): Promise<void>;
}

/** A transaction a handler's `$app.runInTransaction` opened, until it ends. */
interface HandlerTransaction {
  records: HookRecords;
  end(commit: boolean): Promise<void>;
}

const ROLLED_BACK = Symbol('rolled back');

/** The `$app` calls that read or write records of the handler's database. */
const RECORD_OPS = new Set(['findById', 'findFirst', 'find', 'count', 'create', 'update', 'delete', 'recordsBySql', 'expand', 'sql']);

/** Transactions whose pb_hooks handlers hold the database's handler lock already (PostgreSQL). */
const serialized = new WeakSet<Transaction>();

/**
 * Opens a transaction of `records`' database (joining a record event's own) and keeps it open, its
 * records API given to the `$app` calls that follow, until `end`: committed, or rolled back.
 * `serialize` runs first in it (PostgreSQL's lock: see `opsFor`).
 */
async function openTransaction(records: HookRecords, serialize: (tx: Transaction) => Promise<void>): Promise<HandlerTransaction> {
  let decide!: (commit: boolean) => void;
  const decided = new Promise<boolean>((resolve) => (decide = resolve));
  let opened!: (inner: HookRecords) => void;
  const ready = new Promise<HookRecords>((resolve) => (opened = resolve));
  const done = records
    .transaction(async (inner) => {
      const joined = (inner as HookRecords).joined;
      if (joined) await serialize(joined);
      opened(inner as HookRecords);
      if (!(await decided)) throw ROLLED_BACK;
    })
    .catch((err) => {
      if (err !== ROLLED_BACK) throw err;
    });
  const inner = await Promise.race([
    ready,
    done.then(() => {
      throw new Error('the transaction ended before it began');
    }),
  ]);
  return {
    records: inner,
    end: (commit) => {
      decide(commit);
      return done;
    },
  };
}

/**
 * Ops a handler's `$app` reaches: `app` is the event's (in a record event, bound to the write's
 * transaction). `end` rolls back a transaction the handler left open (a worker replaced past the
 * time limit): the pool calls it once the handler has settled.
 */
export function opsFor(slot: ServiceSlot, app: HookApp, db: string, extra: Record<string, (...args: any[]) => Promise<unknown>> = {}): Ops {
  let open: HandlerTransaction | undefined;
  const records = () => open?.records ?? (app.records(db) as HookRecords);
  // PocketBase's handlers write one at a time (SQLite has one writer), so read-modify-write in them
  // is safe. On PostgreSQL a transaction whose handlers read or write records takes one lock of the
  // database, on every node, so they run one at a time there too.
  const serialize = async (tx: Transaction) => {
    if (serialized.has(tx)) return;
    serialized.add(tx);
    await slot.current?.registry.backend.lockInTransaction?.(tx, `cairn.pbhooks.transaction.${db}`);
  };
  /** Writes made apart from the records API would wait for the writer an open transaction holds (SQLite). */
  const outsideTransaction = (what: string) => {
    if (open) throw new Error(`${what} cannot run inside $app.runInTransaction in Cairn: call it before or after the transaction`);
  };
  const ops: Ops = async (op, args) => {
    const own = extra[op];
    if (own) return own(...args);
    if (RECORD_OPS.has(op) && !open) {
      // A record event's write.
      const joined = (app.records(db) as HookRecords).joined;
      if (joined) await serialize(joined);
    }
    switch (op) {
      case 'txBegin':
        if (open) throw new Error('a transaction is already open');
        open = await openTransaction(app.records(db) as HookRecords, serialize);
        return null;
      case 'txEnd': {
        const ending = open;
        open = undefined;
        await ending?.end(args[0] === true);
        return null;
      }
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
        outsideTransaction('Sending an auth mail');
        const services = slot.current;
        if (!services?.emailFlows) throw new Error('Cairn is not serving: mail is sent only while the server runs');
        const database = await services.registry.get(db);
        const collection = await services.collections.get(database, String(args[1]));
        const ctx = systemContext(db, database);
        if (args[0] === 'otp' || args[0] === 'auth-alert') {
          // The record's address now, as PocketBase mails the record it is given.
          const account = (await services.records.view(ctx, collection, String(args[2]))) as { id: string; email?: string };
          if (!account.email) throw new Error('The record has no email address to mail.');
          const to = { id: account.id, email: account.email };
          if (args[0] === 'otp') return services.otp?.mailCode(ctx, collection, to, String(args[3] ?? ''), String(args[4] ?? ''));
          return services.authAlerts?.mail(ctx, collection, to.id, to.email, String(args[3] ?? ''));
        }
        return services.emailFlows.sendFor(ctx, collection, args[0], String(args[2]), args[3]);
      }
      case 'fileFromURL':
        return fileFromURL(String(args[0]));
      case 'saveCollection':
      case 'deleteCollection': {
        // Schema changes are the database's own (outside any write's transaction), as through the API.
        outsideTransaction('A collection change');
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
      case 'realtime': {
        // `$app.subscriptionsBroker()`: this node's clients.
        const realtime = slot.current?.realtime;
        if (!realtime) throw new Error('Cairn is not serving: realtime clients exist only while the server runs');
        if (args[0] === 'clients') return realtime.brokerClients();
        if (args[0] === 'send') return realtime.sendTo(String(args[1]), String(args[2]), String(args[3]));
        if (args[0] === 'discard') return realtime.discard(String(args[1]));
        throw new Error(`realtime: unknown operation ${String(args[0])}`);
      }
      case 'store':
        return storeOp(slot, String(args[0]), args.slice(1));
      case 'dataDir':
        return process.cwd();
      default:
        throw new Error(`${op} is not available in Cairn's pb_hooks`);
    }
  };
  ops.end = async () => {
    const left = open;
    open = undefined;
    await left?.end(false).catch(() => undefined);
  };
  return ops;
}

/** `$app.store()` of each hook runtime (its slot): one map all its workers share, as PocketBase's app store. */
const stores = new WeakMap<ServiceSlot, Map<string, unknown>>();

function storeOp(slot: ServiceSlot, method: string, args: any[]): unknown {
  let store = stores.get(slot);
  if (!store) stores.set(slot, (store = new Map()));
  const [key, value] = args;
  switch (method) {
    case 'get':
      return store.get(key) ?? null;
    case 'set':
      store.set(key, value);
      return null;
    case 'has':
      return store.has(key);
    case 'remove':
      store.delete(key);
      return null;
    case 'removeAll':
      store.clear();
      return null;
    case 'reset':
      store.clear();
      for (const [k, v] of Object.entries((key ?? {}) as object)) store.set(k, v);
      return null;
    case 'getAll':
      return Object.fromEntries(store);
    case 'values':
      return [...store.values()];
    case 'length':
      return store.size;
    case 'setIfLessThanLimit':
      if (!store.has(key) && store.size >= Number(args[2])) return false;
      store.set(key, value);
      return true;
    default:
      throw new Error(`$app.store().${method} is not available in Cairn`);
  }
}

/** The `$app` calls a handler tried on the main thread has answered there (main-runtime.ts); the others give the try up. */
export function syncOpsFor(app: HookApp, db: string): SyncOps {
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
export interface FileMarker {
  __file: 'bytes';
  name: string;
  bytes: string;
}

export const isFileMarker = (v: unknown): v is FileMarker => typeof v === 'object' && v !== null && (v as FileMarker).__file === 'bytes';

/**
 * Runs a write whose values may hold files a handler made: each is staged as an upload is (so the
 * write validates and stores it as it does a request's), and its staged copy removed after.
 */
export async function withFiles<T>(slot: ServiceSlot, data: Record<string, unknown> | undefined, write: (data: Record<string, unknown> | undefined) => Promise<T>): Promise<T> {
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
export async function fileFromURL(url: string): Promise<FileMarker & { size: number }> {
  const res = await fetch(url, { signal: AbortSignal.timeout(120_000) });
  if (!res.ok) throw new Error(`failed to download url ${url} (${res.status})`);
  const bytes = Buffer.from(await res.arrayBuffer());
  const name = decodeURIComponent(new URL(url).pathname.split('/').filter(Boolean).pop() ?? '') || 'file';
  return { __file: 'bytes', name, bytes: bytes.toString('base64'), size: bytes.length };
}

export function clean(options: any): any {
  const out: any = {};
  for (const [k, v] of Object.entries(options ?? {})) if (v !== undefined && v !== null && v !== '') out[k] = v;
  return out;
}

/** `$http.send`: PocketBase's answer shape (`statusCode`, `headers`, `raw`, `json`, `cookies`). */
export async function httpSend(config: { url: string; method: string; body: unknown; headers: Record<string, string>; timeout: number }): Promise<unknown> {
  const method = String(config.method || 'GET').toUpperCase();
  let sent = config.headers;
  let body: string | FormData | undefined = ['GET', 'HEAD'].includes(method) || !config.body ? undefined : String(config.body);
  const form = (config.body as { __formData?: [string, unknown][] } | undefined)?.__formData;
  if (Array.isArray(form) && body !== undefined) {
    // A FormData body goes as multipart/form-data, its boundary in the content type fetch sets.
    body = new FormData();
    for (const [key, value] of form) {
      if (isFileMarker(value)) body.append(key, new Blob([Buffer.from(value.bytes, 'base64')]), value.name);
      else body.append(key, String(value));
    }
    sent = Object.fromEntries(Object.entries(sent ?? {}).filter(([k]) => k.toLowerCase() !== 'content-type'));
  }
  const res = await fetch(config.url, {
    method,
    headers: sent,
    body,
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
export function asPbError(err: unknown, file: string, log: PbLog): unknown {
  if (err instanceof ApiError) return err;
  log('error', 'pb_hooks handler failed', { hook: file, err: err instanceof Error ? err.message : String(err) });
  return new ApiError(400, 'Something went wrong while processing your request.');
}

/** The request behind an event, as the worker builds `e.request`/`e.requestInfo()` from it (none for work no request started). */
export function requestPayload(e: { request?: EventLike['request']; auth?: unknown }): unknown {
  const r = e.request;
  if (!r || r.method === 'SYSTEM') return undefined;
  return { method: r.method, path: '', query: new URLSearchParams(r.query as any).toString(), headers: r.headers, body: r.body, ip: r.ip, context: r.context, params: {}, auth: e.auth };
}

/** What a handler did to a record leaving for a client: keys set, hidden, shown again, custom keys allowed. */
export interface LeavingDelta {
  changes?: Record<string, unknown>;
  hidden?: string[];
  unhidden?: string[];
  custom?: boolean;
}

/** Applies a handler's `set`/`hide`/`unhide` to the record leaving (custom keys only with `withCustomData(true)`, as PocketBase). */
export function applyLeaving(record: Record<string, unknown>, d: LeavingDelta | undefined): void {
  if (!d) return;
  for (const [k, v] of Object.entries(d.changes ?? {})) if (k in record || d.custom || d.unhidden?.includes(k)) record[k] = v;
  for (const k of d.hidden ?? []) delete record[k];
}

