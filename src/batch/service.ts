import type { CollectionService } from '../collections/service.ts';
import { isSuperusers } from '../collections/superusers.ts';
import { isPrivileged, type RequestContext } from '../context.ts';
import type { StagedFile } from '../files/staged.ts';
import type { FileStore } from '../files/store.ts';
import { fileFieldOf, type MultipartForm, withUploads } from '../files/uploads.ts';
import type { RecordService } from '../records/service.ts';
import type { RecordWrite } from '../records/write/plan.ts';
import { badRequest, forbidden } from '../errors.ts';
import type { Transaction } from '../storage/index.ts';
import { batchFailed } from './failure.ts';
import { readBatchForm } from './form.ts';
import { type BatchRequest, parseBatch } from './request.ts';

/** One answer of a committed batch, as the request alone would have been answered. */
export interface BatchResult {
  status: number;
  body: unknown;
}

export interface BatchServiceOptions {
  collections: CollectionService;
  records: RecordService;
  files: Pick<FileStore, 'refuseInlineFiles'>;
  /** Most requests one batch may hold (CAIRN_BATCH_MAX_REQUESTS), when `limits` is not given. */
  maxRequests: number;
  /** The `batch` settings, read for each batch: a change takes effect when saved, on every node. */
  limits?: () => Promise<BatchLimits>;
}

/** PocketBase's `batch` settings section. */
export interface BatchLimits {
  enabled: boolean;
  maxRequests: number;
  /** Seconds a batch may take from its first request's preparation to its commit. */
  timeout: number;
  /** Most bytes of a batch's body (0: the server's body limit). */
  maxBodySize: number;
}

/**
 * Batch writes (API contract §11, PocketBase v0.23's `/api/batch`): record creates, updates, upserts
 * and deletes of one database, all committed in one transaction or none.
 *
 * Every request is prepared first, in order, as the caller (rules, validation, password hashing: the
 * slow work, outside the transaction), then all are applied in one transaction, in order, then
 * answered. A failure at any step rolls everything back and names the request by its index; the
 * change hooks' rows (webhook outbox) roll back with it and their after-commit follow-ups (delivery,
 * file clean-up) never run, while for a committed batch they run once per change, in request order.
 * A request that fails a check needing no stored row (a 403, a validation error) is reported even if
 * an earlier request would have failed inside the transaction.
 */
export class BatchService {
  constructor(private readonly o: BatchServiceOptions) {}

  /** The limits in force now; a disabled batch API is a 403, as on PocketBase. */
  async limits(): Promise<BatchLimits> {
    const limits = this.o.limits ? await this.o.limits() : { enabled: true, maxRequests: this.o.maxRequests, timeout: 0, maxBodySize: 0 };
    if (!limits.enabled) throw forbidden('Batch requests are not allowed.');
    return limits;
  }

  /** A batch sent as JSON: `{requests: [{method, url, headers?, body?}]}`. */
  async run(ctx: RequestContext, body: unknown): Promise<BatchResult[]> {
    const limits = await this.limits();
    return this.execute(ctx, parseBatch(body, limits.maxRequests), limits.timeout);
  }

  /** A batch sent as multipart: the document in `@jsonPayload`, files as `requests.<index>.<field>`. */
  async runForm(ctx: RequestContext, form: MultipartForm): Promise<BatchResult[]> {
    const limits = await this.limits();
    return this.execute(ctx, readBatchForm(form, limits.maxRequests), limits.timeout);
  }

  private async execute(ctx: RequestContext, requests: BatchRequest[], timeout: number): Promise<BatchResult[]> {
    const writes: RecordWrite[] = [];
    const targets: LockTargets = new Map();
    // Past the timeout the batch stops between two requests and rolls back (PocketBase cancels its
    // transaction's context); a request under way is not cut short.
    const deadline = timeout > 0 ? Date.now() + timeout * 1000 : Infinity;
    const inTime = () => {
      if (Date.now() > deadline) throw badRequest(`The batch took longer than its timeout of ${timeout} seconds.`);
    };
    // One try around each loop, not one per request: a batch's records are many and cheap, and the
    // index reached is the one that failed.
    let i = 0;
    try {
      for (; i < requests.length; i++) {
        inTime();
        writes.push(await this.prepare(ctx, requests[i], targets));
      }
    } catch (err) {
      throw batchFailed(i, err);
    }
    await ctx.db.transaction(async (tx) => {
      await lockInOrder(tx, targets);
      let j = 0;
      try {
        for (; j < writes.length; j++) {
          inTime();
          await writes[j].apply(tx);
        }
      } catch (err) {
        throw batchFailed(j, err);
      }
    });
    const results: BatchResult[] = [];
    for (const write of writes) {
      results.push(write.action === 'delete' ? { status: 204, body: null } : { status: 200, body: await write.answer() });
    }
    return results;
  }

  /** Prepares one request; the record an update or delete changes goes into `targets` (`lockInOrder`). */
  private async prepare(ctx: RequestContext, request: BatchRequest, targets: LockTargets): Promise<RecordWrite> {
    if (isSuperusers(request.collection)) refuseSuperusers(ctx);
    const collection = await this.o.collections.get(ctx.db, request.collection);
    if ((request.action === 'update' || request.action === 'delete') && request.id) {
      let ids = targets.get(collection.name);
      if (!ids) targets.set(collection.name, (ids = new Set()));
      ids.add(request.id);
    }
    this.o.files.refuseInlineFiles(collection, request.body);
    let input = request.body;
    // What rules see as `@request.body`: the JSON values, uploads by the names they are stored under.
    let ruleBody: unknown = input;
    if (request.uploads !== undefined) {
      const uploads = new Map<string, StagedFile[]>([...request.uploads].filter(([key]) => fileFieldOf(collection, key) !== undefined));
      if (uploads.size > 0) {
        input = withUploads({ ...input }, uploads);
        ruleBody = JSON.parse(JSON.stringify(input));
      }
    }
    const headers = Object.keys(request.headers).length === 0 ? ctx.request.headers : { ...ctx.request.headers, ...request.headers };
    const sub: RequestContext = {
      ...ctx,
      request: { method: request.method, headers, query: request.query, body: ruleBody, ip: ctx.request.ip, context: 'batch' },
    };
    const records = this.o.records;
    switch (request.action) {
      case 'create':
        return records.prepareCreate(sub, collection, input, request.query);
      case 'update':
        return records.prepareUpdate(sub, collection, request.id!, input, request.query);
      case 'upsert':
        return records.prepareUpsert(sub, collection, input, request.query);
      case 'delete':
        return records.prepareDelete(sub, collection, request.id!);
    }
  }
}

/**
 * `_superusers` in a batch. PocketBase answers anyone but a superuser as its closed rules do (403); a
 * superuser's write there it would commit with the batch. Cairn's administrators are instance-wide
 * (system.db, `cairn_system`), outside the transaction of the `x-dbname` database a batch runs in, so
 * a superuser's is refused (400) rather than written apart from the batch's fate.
 */
function refuseSuperusers(ctx: RequestContext): never {
  if (!isPrivileged(ctx.auth)) throw forbidden('Only superusers can perform this action.');
  throw badRequest('_superusers records are not written in batches: administrators are instance-wide, outside the batch\'s transaction; use /api/collections/_superusers/records.');
}

/** The stored records a batch updates or deletes: ids by table. */
type LockTargets = Map<string, Set<string>>;

/**
 * Locks the records a batch will update or delete, table by table and id by id in one order, before
 * its first write: two batches changing the same records in different orders then wait for each
 * other instead of deadlocking, which PostgreSQL would end by failing one (SQLite has one writer: no
 * locks). Not the records it upserts: an upsert of an id it did not find takes that id's lock before
 * its row (records/upsert.ts), and locking the row first here would take them in the other order.
 */
async function lockInOrder(tx: Transaction, targets: LockTargets): Promise<void> {
  const lock = tx.dialect.lockForUpdate('t');
  if (lock === '') return;
  for (const table of [...targets.keys()].sort()) {
    const ids = [...targets.get(table)!].sort();
    await tx.all(`SELECT t.id FROM ${tx.dialect.quoteIdent(table)} t WHERE t.id IN (${ids.map(() => '?').join(', ')}) ORDER BY t.id${lock}`, ids);
  }
}
