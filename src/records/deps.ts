import type { Collection } from '../collections/model.ts';
import type { CollectionService } from '../collections/service.ts';
import type { RequestContext } from '../context.ts';
import type { Sql, Transaction, TransactionLock } from '../storage/index.ts';
import type { RecordAccess } from './access.ts';
import type { RecordJson } from './serialize.ts';
import type { StagedFile } from '../files/staged.ts';

export interface RecordEvent {
  action: 'create' | 'update' | 'delete';
  /** Database name. */
  database: string;
  /** Who made the change (cascades: who asked for the delete that caused it). */
  ctx: RequestContext;
  collection: Collection;
  /** The record as an administrator sees it (the new state; the deleted state for deletes). */
  record: RecordJson;
  /** The state before an update or delete. */
  oldRecord?: RecordJson;
  /** `JSON.stringify(record)`, made on first call and kept: a hook that needs the text shares it with
   * the answer. */
  recordJson(): string;
}

/**
 * Runs inside the record's transaction: whatever it writes commits or rolls back with the change.
 * `writes` tells whether it writes in the transaction for a change of `action` in `collection` (a hook
 * without it is taken to write): a write whose own statement can be its transaction's last
 * (`Transaction.commitWith`, a round trip fewer on PostgreSQL) ends it that way only when none does.
 */
export interface RecordChangeHook {
  (tx: Transaction, event: RecordEvent): Promise<void>;
  writes?(collection: Collection, action: RecordEvent['action']): boolean;
}

/** A change hook that says when it writes in the transaction (`never` for one whose work waits for the commit). */
export function changeHook(writes: NonNullable<RecordChangeHook['writes']>, run: (tx: Transaction, event: RecordEvent) => Promise<void>): RecordChangeHook {
  return Object.assign(run, { writes });
}

export const never = (): boolean => false;

/** A full-text search condition for `search=` on lists (provided by the migrations domain). */
export type SearchProvider = (ctx: RequestContext, collection: Collection, terms: string) => Promise<{ where: Sql; order?: Sql } | undefined>;

/** Puts the files a write brings in place; provided by the files domain. */
export interface RecordFiles {
  /** Stages bytes application code gives a record as an upload (see FileStore.stageBytes). */
  stageBytes?(originalName: string, bytes: Buffer): Promise<StagedFile>;
  /** Removes staged copies no write stored. */
  discardStaged?(staged: StagedFile[]): Promise<void>;
  /**
   * Before the write's transaction: puts the uploads found in `input` (a create's or an update's body)
   * in storage under the record, so the transaction does not wait on it. The write's outcome settles
   * them as it does those `store` puts.
   */
  upload?(database: string, collection: Collection, recordId: string, input: Record<string, unknown>): Promise<void>;
  /**
   * Inside the write's transaction, after the row is written: checks the file names in `values`
   * against the record's current ones (`before`, absent on create) and stores new uploads.
   */
  store(tx: Transaction, database: string, collection: Collection, recordId: string, values: Map<string, unknown>, before?: Record<string, unknown>): Promise<void>;
}

/** A write as application hooks see it, inside its transaction (API contract §16). */
export interface WriteEventInput {
  /** Who asked for the write. */
  ctx: RequestContext;
  tx: Transaction;
  collection: Collection;
  /**
   * The values to write, made on first use (a handler that never reads `e.record` costs the write
   * nothing): hooks may change them, or replace the object, before the write runs; after it, the
   * stored record.
   */
  record: { get(): Record<string, unknown>; set(record: Record<string, unknown>): void };
  /** The record before an update, made on first use. */
  original?: () => RecordJson;
}

/** Runs `write` as the last link of the handlers bound to one write of one collection. */
export type AroundWrite = (input: WriteEventInput, write: () => Promise<void>) => Promise<void>;

/**
 * Application code around record writes and on records leaving for clients (the hooks domain,
 * `src/hooks`). The records domain asks it once per write and once per answer; nothing here knows
 * what a hook is.
 */
export interface RecordEvents {
  /** The handlers around `action` on `collection`, or undefined when there are none (the write runs bare). */
  around(action: RecordEvent['action'], collection: Collection): AroundWrite | undefined;
  /** Whether records of `collection` pass through enrich handlers before they leave. */
  enriches(collection: Collection): boolean;
  /** Runs the enrich handlers on records about to leave for `ctx`'s caller (and their `expand`). */
  enrich(ctx: RequestContext, collection: Collection, records: RecordJson[]): Promise<void>;
  /**
   * The handlers around an API request that reads records of `collection` (a list or a view), or
   * undefined when there are none: they get what is about to be answered, may change it or answer
   * themselves (a `RawAnswer`).
   */
  readRequest?(kind: 'list' | 'view', collection: Collection): AroundRead | undefined;
}

/** An answer a handler made itself (status, content type, body text, headers). */
export class RawAnswer {
  constructor(
    readonly status: number,
    readonly type: string | undefined,
    readonly body: string | undefined,
    readonly headers: Record<string, string> = {},
    readonly location?: string,
  ) {}
}

/** Runs the read-request handlers around the answer `value` (a list result or one record): the answer to send. */
export type AroundRead = (ctx: RequestContext, collection: Collection, value: unknown) => Promise<unknown>;

/**
 * Password hashing and checking, handed in by the auth domain (argon2id off the event loop), so the
 * records domain never reaches up to it.
 */
export interface Passwords {
  hash(password: string): Promise<string>;
  verify(passwordHash: string, password: string): Promise<boolean>;
  /** Longest password accepted: hashing cost grows with input. */
  readonly maxLength: number;
}

export interface RecordDeps {
  collections: CollectionService;
  access: RecordAccess;
  /** Called for every record created, updated or deleted, inside its transaction. */
  changeHooks: RecordChangeHook[];
  minPasswordLength: number;
  passwords: Passwords;
  /** Bounds of one answer's `expand` (CAIRN_EXPAND_MAX_RECORDS, CAIRN_MAX_ANSWER_MB); defaults when absent. */
  expandLimits?: { records: number; bytes: number };
  search?: SearchProvider;
  files?: RecordFiles;
  events?: RecordEvents;
  /** Serializes upserts of one new id across processes. */
  lock?: TransactionLock;
}
