import type { Collection } from '../../collections/model.ts';
import type { CollectionSet } from '../../collections/service.ts';
import type { RequestContext } from '../../context.ts';
import { badRequest, type FieldError } from '../../errors.ts';
import type { Database, Queryable, Row, Sql, Transaction } from '../../storage/index.ts';
import type { AuthPrepared } from '../auth-fields.ts';
import type { AroundWrite, RecordDeps, RecordEvent } from '../deps.ts';
import type { OutputOptions } from '../read.ts';
import { type RecordShape, shapeOf } from '../shape.ts';
import type { Change } from './change.ts';

/**
 * One record write, split at the transaction so that a caller can run several in one (a batch):
 * `prepare…` does beforehand what needs no transaction (input and rule checks that need no row,
 * password hashing: slow work that must not hold the writer), `apply` writes inside a transaction
 * the caller owns, and `answer` makes the record the caller gets back once that transaction
 * committed. A single write is `commitWrite`: its own transaction, then its answer.
 *
 * Every record write of Cairn passes through an `apply` (the records API, each request of a batch,
 * the auth flows, workflows, and hooks' own writes), which is where application hooks wrap it: their
 * chain runs inside the transaction and its last `next()` is the write itself.
 */
export interface RecordWrite {
  readonly action: RecordEvent['action'];
  /**
   * Inside the caller's transaction: the checks that need stored rows (relations, the record's
   * current state, the create rule against the new row), the change, its files and the change hooks,
   * whose follow-ups (`afterCommit`) run in the order the writes were applied. Runs once. On failure
   * the caller must roll the transaction back (PostgreSQL refuses further statements in it anyway).
   * `alone`: the write is its transaction's only one (`commitWrite`), so where nothing is written after
   * its statement, that statement may commit the transaction (`Transaction.commitWith`).
   */
  apply(tx: Transaction, alone?: boolean): Promise<void>;
  /** After commit: the record as the caller sees it (`expand`, `fields`); undefined for a delete. */
  answer(): Promise<unknown>;
  /** The steps the write's plan passed so far, in order (creates and updates). */
  readonly steps?: readonly StepName[];
}

/** Runs one prepared write in a transaction of its own and answers. */
export async function commitWrite(db: Database, write: RecordWrite): Promise<unknown> {
  try {
    await db.transaction((tx) => write.apply(tx, true));
  } catch (err) {
    if (err instanceof ExplainedAfter) throw await err.explain();
    throw err;
  }
  return write.answer();
}

/**
 * A write that failed in a statement which also ended its transaction (`Transaction.commitWith`),
 * whose error needs one more read to say why: made once the transaction has let go of its connection.
 * Read while it held it, that second connection could wait for ever: concurrent writes holding every
 * connection of the pool, each waiting for one more.
 */
export class ExplainedAfter extends Error {
  constructor(readonly explain: () => Promise<unknown>) {
    super('a write failed; its error is made after the transaction');
  }
}

/** What every phase of one write needs, loaded once when it is prepared. */
export interface WriteScope {
  deps: RecordDeps;
  ctx: RequestContext;
  collection: Collection;
  collections: CollectionSet;
  shape: RecordShape;
  privileged: boolean;
}

export function refuseViews(collection: Collection): void {
  if (collection.type === 'view') throw badRequest(`"${collection.name}" is a view: its records are read-only.`);
}

export async function writeScope(deps: RecordDeps, ctx: RequestContext, collection: Collection): Promise<WriteScope> {
  refuseViews(collection);
  return { deps, ctx, collection, collections: await deps.collections.all(ctx.db), shape: shapeOf(collection), privileged: deps.access.privileged(ctx) };
}

/** A write's input, which must be an object. */
export function objectInput(input: unknown): Record<string, unknown> {
  if (typeof input !== 'object' || input === null || Array.isArray(input)) throw badRequest('The request body must be a JSON object.');
  return input as Record<string, unknown>;
}

/**
 * The steps of a create or update, each a function of its own file (`write/<step>.ts`) that takes the
 * plan and returns it, in this order; none imports another, the runners (`write/create.ts`,
 * `write/update.ts`) compose them. Before the transaction: parse, validate, rules, stage; inside it:
 * load (updates: the stored row), hooks, statement; after commit: answer. An update checks its rule
 * before it validates: its values are made from the stored row, read inside the transaction.
 */
export type StepName = 'parse' | 'validate' | 'rules' | 'stage' | 'load' | 'hooks' | 'statement' | 'answer';

/** The state one record write carries from step to step. Each step fills in what the next ones read. */
export interface WritePlan {
  readonly action: 'create' | 'update';
  readonly scope: WriteScope;
  /** `expand` and `fields` of the answer. */
  readonly options: OutputOptions;
  /** The request body (parse: an object). */
  input: Record<string, unknown>;
  /** The record's id: given (updates, creates that name one) or new (parse). */
  id: string;
  /** Whether the body sends write modifiers (`f+`, `+f`, `f-`) for the collection's fields (parse). */
  modifiers: boolean;
  /** Canonical values of the fields written, and the problems found with the input (validate, load, hooks). */
  values: Map<string, unknown>;
  errors: Record<string, FieldError>;
  /** An auth record's system columns (email, flags, password hash, token key) and their problems. */
  auth?: AuthPrepared;
  /** The application hooks around this write, if any (parse). */
  around?: AroundWrite;
  /**
   * The rule's condition (rules): for a create, checked against the new row before commit; for an
   * update, the stored row must meet it (null: every record may be written).
   */
  rule: Sql | null;
  /** A create by a caller whom the collection's manage rule may let set `verified` (validate). */
  mayManage: boolean;
  /** An update by a caller who manages the account as an administrator would (stage). */
  manager: boolean;
  /** An update's account state its auth columns were prepared against before the transaction (stage). */
  authState?: AuthState;
  /** Where an update reads that state before the transaction (the database, or the batch's transaction). */
  reader?: Pick<Queryable, 'get'>;
  /** A create's column types where every value reads back as bound: the insert then skips RETURNING (stage). */
  declared?: Map<string, string>;
  /** An update's stored row (load). */
  before?: Row;
  /** An update Cairn derived from stored values itself (a cleared reference): no relation check for unchanged values. */
  derived?: boolean;
  /** The write's transaction, from `apply` on. */
  tx?: Transaction;
  /** Whether the write is its transaction's only one (`RecordWrite.apply`). */
  alone?: boolean;
  /** The row written and the change the change hooks got (statement). */
  row?: Row;
  change?: Change;
  /** The steps passed, in order. */
  readonly steps: StepName[];
}

/** The auth columns an update's checks depend on. */
export interface AuthState {
  email: string;
  verified: boolean;
  passwordHash: string;
}

export function newPlan(action: WritePlan['action'], scope: WriteScope, input: Record<string, unknown>, options: OutputOptions, id = ''): WritePlan {
  return { action, scope, options, input, id, modifiers: false, values: new Map(), errors: {}, rule: null, mayManage: false, manager: false, steps: [] };
}

/** Notes that `plan` entered `step`; every step calls it first. */
export function enter(plan: WritePlan, step: StepName): WritePlan {
  plan.steps.push(step);
  return plan;
}

/** The plan's transaction (the steps that run inside one). */
export function txOf(plan: WritePlan): Transaction {
  if (!plan.tx) throw new Error(`record write: "${plan.steps.at(-1)}" runs inside the write's transaction`);
  return plan.tx;
}
