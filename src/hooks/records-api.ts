import type { CollectionService, CollectionSet } from '../collections/service.ts';
import { type RequestContext, systemContext } from '../context.ts';
import { insertionOrderOf, selectById } from '../records/read.ts';
import { type RecordJson, serializeRecord } from '../records/serialize.ts';
import type { RecordService } from '../records/service.ts';
import { ROOT_ALIAS, shapeOf } from '../records/shape.ts';
import { PRIVILEGED_VIEWER } from '../records/viewer.ts';
import { compileFilter, compileSort, type Resolver } from '../rules/index.ts';
import { bindFilterParams } from '../rules/params.ts';
import type { Collection } from '../collections/model.ts';
import { authSettingsOf, publicAuthSettings } from '../collections/auth-settings.ts';
import { type Database, type DatabaseRegistry, EMPTY, join, raw, type Row, type Sql, sql, type Transaction, withinTransaction } from '../storage/index.ts';
import { NotFoundError } from './errors.ts';
import type { CollectionName, FindOptions, RecordsApi } from './types.ts';

/** What hook data access works with: the services of the app serving now (a restore replaces them). */
export interface HookData {
  registry: DatabaseRegistry;
  collections: CollectionService;
  records: RecordService;
}

/** A transaction under way (a record event's), which the records API of its database joins. */
export interface OpenTransaction {
  db: string;
  tx: Transaction;
}

/**
 * `app.records(db)`: records of one database without access rules (a system context), through the
 * records domain, so writes are validated and run the record hooks as API writes do. Inside a
 * record event, the event's database is read and written in its transaction (`withinTransaction`):
 * a hook sees what the write has done so far, and what it writes rolls back with it.
 */
export class HookRecords implements RecordsApi {
  constructor(
    private readonly data: () => HookData,
    private readonly dbName: string,
    private readonly open?: OpenTransaction,
  ) {}

  /** The transaction this database's records are read and written in, if any. */
  get joined(): Transaction | undefined {
    return this.open?.db === this.dbName ? this.open.tx : undefined;
  }

  private async context(): Promise<RequestContext> {
    const base = await this.data().registry.get(this.dbName);
    const db: Database = this.open?.db === this.dbName ? withinTransaction(base, this.open.tx) : base;
    return systemContext(this.dbName, db);
  }

  private async scope(name: CollectionName) {
    const ctx = await this.context();
    const collection = await this.data().collections.get(ctx.db, name);
    return { ctx, collection };
  }

  async findById(name: CollectionName, id: string): Promise<any> {
    const { ctx, collection } = await this.scope(name);
    const shape = shapeOf(collection);
    const row = typeof id === 'string' ? await selectById(ctx.db, shape, id, null) : undefined;
    if (!row) throw new NotFoundError(`No record "${String(id)}" in "${collection.name}".`);
    return serializeRecord(row, shape, PRIVILEGED_VIEWER);
  }

  /**
   * `findById` synchronously, inside a record event's transaction where the engine answers on this
   * thread (SQLite) and the collections are loaded; undefined where it cannot (then use `findById`).
   * Throws `NotFoundError` as `findById` does.
   */
  findByIdNow(name: CollectionName, id: string): RecordJson | undefined {
    const now = this.now(name);
    if (!now?.tx.getNow || typeof id !== 'string') return undefined;
    const shape = shapeOf(now.collection);
    const row = now.tx.getNow<Row>(shape.selectById, [id]);
    if (!row) throw new NotFoundError(`No record "${id}" in "${now.collection.name}".`);
    return serializeRecord(row, shape, PRIVILEGED_VIEWER);
  }

  /** What the `…Now` reads need: the record event's transaction here, and the collections as loaded. */
  private now(name: CollectionName): { tx: Transaction; base: Database; set: CollectionSet; collection: Collection } | undefined {
    const tx = this.open?.db === this.dbName ? this.open.tx : undefined;
    const base = tx && this.data().registry.opened(this.dbName);
    const set = base && this.data().collections.peekAll(base);
    const collection = set?.find(name);
    return tx && base && set && collection ? { tx, base, set, collection } : undefined;
  }

  async findFirst(name: CollectionName, filter: string, params?: Record<string, unknown>): Promise<any> {
    const [record] = await this.find(name, { filter, params, limit: 1 });
    if (!record) throw new NotFoundError(`No record of "${String(name)}" matches ${JSON.stringify(filter)}.`);
    return record;
  }

  async find(name: CollectionName, options: FindOptions = {}): Promise<any[]> {
    const { ctx, collection } = await this.scope(name);
    const q = findQuery(ctx, collection, await this.data().collections.all(ctx.db), this.data().records, options);
    const rows = await ctx.db.all<Row>(q.text, q.params);
    const shape = shapeOf(collection);
    return rows.map((row): RecordJson => serializeRecord(row, shape, PRIVILEGED_VIEWER));
  }

  /**
   * `find` synchronously, where `findByIdNow` can read (a record event's transaction on SQLite, the
   * collections loaded); undefined where it cannot. Throws what `find` throws for a bad filter.
   */
  findNow(name: CollectionName, options: FindOptions = {}): RecordJson[] | undefined {
    const now = this.now(name);
    if (!now?.tx.allNow) return undefined;
    const ctx = systemContext(this.dbName, withinTransaction(now.base, now.tx));
    const q = findQuery(ctx, now.collection, now.set, this.data().records, options);
    const shape = shapeOf(now.collection);
    return now.tx.allNow<Row>(q.text, q.params).map((row) => serializeRecord(row, shape, PRIVILEGED_VIEWER));
  }

  async count(name: CollectionName, filter?: string, params?: Record<string, unknown>): Promise<number> {
    const { ctx, collection } = await this.scope(name);
    const { from, where } = await this.condition(ctx, collection, filter, params);
    const q = sql`SELECT COUNT(*) AS n FROM ${from}${where}`;
    return Number((await ctx.db.get<{ n: number }>(q.text, q.params))?.n ?? 0);
  }

  async create(name: CollectionName, data: Record<string, unknown>): Promise<any> {
    const { ctx, collection } = await this.scope(name);
    return this.data().records.create(ctx, collection, data);
  }

  async update(name: CollectionName, id: string, data: Record<string, unknown>): Promise<any> {
    const { ctx, collection } = await this.scope(name);
    return this.data().records.update(ctx, collection, id, data);
  }

  async delete(name: CollectionName, id: string): Promise<void> {
    const { ctx, collection } = await this.scope(name);
    await this.data().records.delete(ctx, collection, id);
  }

  async transaction<T>(fn: (records: RecordsApi) => Promise<T>): Promise<T> {
    const ctx = await this.context();
    return ctx.db.transaction((tx) => fn(new HookRecords(this.data, this.dbName, { db: this.dbName, tx })));
  }

  /** A collection's description (pb_hooks' `findCollectionByNameOrId`). */
  async collection(name: CollectionName): Promise<CollectionInfo> {
    const { collection } = await this.scope(name);
    return describe(collection);
  }

  /** The collections of a type, PocketBase's system ones too (pb_hooks' `findCollectionsByType`). */
  async collectionsOfType(type: string): Promise<CollectionInfo[]> {
    const ctx = await this.context();
    const set = await this.data().collections.all(ctx.db);
    return set.list.filter((c) => c.type === type).map(describe);
  }

  /**
   * The records whose ids the rows of an app's query give (its `id` column), in the rows' order
   * (pb_hooks' `recordQuery`): the query picks and orders, the records are read as `find` reads them.
   */
  async byQuery(name: CollectionName, text: string, params: Record<string, unknown>): Promise<RecordJson[]> {
    const rows = (await this.sql(text, params, 'all')) as Row[];
    const ids = [...new Set(rows.map((r) => r.id).filter((id): id is string => typeof id === 'string'))];
    if (ids.length === 0) return [];
    const { ctx, collection } = await this.scope(name);
    const shape = shapeOf(collection);
    const byId = new Map<string, RecordJson>();
    // In chunks: both engines cap the values one statement binds.
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500);
      const q = sql`SELECT ${raw(shape.selectList)} FROM ${raw(shape.table)} ${raw(ROOT_ALIAS)} WHERE ${raw(ROOT_ALIAS)}.id IN (${join(chunk.map((id) => sql`${id}`), ', ')})`;
      for (const row of await ctx.db.all<Row>(q.text, q.params)) {
        const record = serializeRecord(row, shape, PRIVILEGED_VIEWER);
        byId.set(String(record.id), record);
      }
    }
    return ids.map((id) => byId.get(id)).filter((r): r is RecordJson => r !== undefined);
  }

  /** The record with `expand` applied (pb_hooks' `expandRecord`). */
  async expanded(name: CollectionName, id: string, expand: string): Promise<any> {
    const { ctx, collection } = await this.scope(name);
    const record = await this.findById(name, id);
    const [out] = await this.data().records.output(ctx, collection, [record], { expand } as any);
    return out;
  }

  /**
   * Raw SQL of the app on this database's engine: PocketBase's `{:name}` placeholders bound from
   * `params`, `{{table}}` and `[[column]]` quoted as identifiers. `all` and `one` give rows.
   */
  async sql(text: string, params: Record<string, unknown>, mode: 'all' | 'one' | 'execute'): Promise<unknown> {
    if (typeof text !== 'string' || text.trim() === '') throw new TypeError('the query is empty');
    const ctx = await this.context();
    const values: unknown[] = [];
    const q = text
      .replace(/\{\{([^}]+)\}\}|\[\[([^\]]+)\]\]/g, (_m, a: string | undefined, b: string | undefined) => `"${String(a ?? b).replace(/"/g, '""')}"`)
      .replace(/\{:([A-Za-z0-9_]+)\}/g, (_m, name: string) => {
        if (!(name in params)) throw new TypeError(`the query names {:${name}}, which bind() did not give`);
        const v = params[name];
        values.push(typeof v === 'boolean' && ctx.db.dialect.name === 'sqlite' ? (v ? 1 : 0) : v !== null && typeof v === 'object' ? JSON.stringify(v) : v);
        return '?';
      });
    if (mode === 'execute') {
      await ctx.db.run(q, values);
      return undefined;
    }
    const rows = await ctx.db.all<Row>(q, values);
    return mode === 'one' ? rows.slice(0, 1) : rows;
  }

  private async condition(ctx: RequestContext, collection: Collection, filter: string | undefined, params: Record<string, unknown> | undefined) {
    const set = await this.data().collections.all(ctx.db);
    return conditionOf(ctx, collection, filter, params, () => this.data().records.deps.access.filterResolver(ctx, collection, set));
  }
}

/** The table and `WHERE` of a filter (PocketBase's `{:name}` params bound) on a collection's records. */
function conditionOf(ctx: RequestContext, collection: Collection, filter: string | undefined, params: Record<string, unknown> | undefined, resolver: () => Resolver) {
  const from = sql`${raw(shapeOf(collection).table)} ${raw(ROOT_ALIAS)}`;
  const text = bindFilterParams(filter?.trim() ?? '', params);
  if (text === '') return { from, where: EMPTY };
  const condition = compileFilter(text, resolver(), { dialect: ctx.db.dialect });
  return { from, where: sql` WHERE ${condition}` };
}

/** The query of `find`: the records a filter matches, sorted, paged, in insertion order otherwise. */
function findQuery(ctx: RequestContext, collection: Collection, set: CollectionSet, records: RecordService, options: FindOptions): Sql {
  const shape = shapeOf(collection);
  const resolver = () => records.deps.access.filterResolver(ctx, collection, set);
  const { from, where } = conditionOf(ctx, collection, options.filter, options.params, resolver);
  let order: Sql[] = [];
  const sort = options.sort?.trim() ?? '';
  const insertion = insertionOrderOf(collection, ctx.db.dialect);
  if (sort !== '') order = compileSort(sort, resolver(), ctx.db.dialect, ROOT_ALIAS, insertion);
  order.push(sql`${raw(insertion)}`);
  const offset = options.offset === undefined ? 0 : count(options.offset, 'offset');
  // Both engines take OFFSET only after a LIMIT: without one, every row.
  const limit = options.limit !== undefined ? sql` LIMIT ${count(options.limit, 'limit')}` : offset > 0 ? sql` LIMIT ${Number.MAX_SAFE_INTEGER}` : EMPTY;
  const paging = offset > 0 ? sql`${limit} OFFSET ${offset}` : limit;
  return sql`SELECT ${raw(shape.selectList)} FROM ${from}${where} ORDER BY ${join(order, ', ')}${paging}`;
}

type CollectionInfo = { id: string; name: string; type: string; fields: unknown[] };

function describe(collection: Collection): CollectionInfo {
  const info = { id: collection.id, name: collection.name, type: collection.type, fields: (collection as any).fields ?? [] };
  // An auth collection's options at its top level, as PocketBase's model has them (no secrets;
  // `authToken.duration` 0: the instance's lifetime).
  return collection.type === 'auth' && Array.isArray(collection.fields) ? { ...publicAuthSettings(authSettingsOf(collection), 0), ...info } : info;
}

function count(value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0) throw new TypeError(`${what} must be a non-negative integer`);
  return value;
}
