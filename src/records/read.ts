import type { Collection } from '../collections/model.ts';
import type { CollectionSet } from '../collections/service.ts';
import { isSystem, type RequestContext } from '../context.ts';
import { badRequest, isApiError, notFound } from '../errors.ts';
import { compileFilter, compileSort } from '../rules/index.ts';
import { type Database, type Dialect, EMPTY, join, type Queryable, raw, type Row, type Sql, sql } from '../storage/index.ts';
import type { RecordDeps } from './deps.ts';
import { ownRow } from './caller-row.ts';
import { checkExpand, checkExpandedSize, DEFAULT_EXPAND_MAX_RECORDS, DEFAULT_MAX_ANSWER_BYTES, expandRecords, parseExpand } from './expand.ts';
import { parseFieldsParam, pickFields } from './fields-param.ts';
import { filterProblem, flag, type ListQuery, pagination, param } from './query-params.ts';
import { JsonText, type RecordJson, serializeRecord, withExpandSlot } from './serialize.ts';
import { rendererOf } from './render.ts';
import { type ConditionTexts, conditionText, ROOT_ALIAS, type RecordShape, shapeOf } from './shape.ts';
import { viewerFor } from './viewer.ts';

export interface ListResult {
  page: number;
  perPage: number;
  totalItems: number;
  totalPages: number;
  items: unknown[];
}

export interface OutputOptions {
  expand?: unknown;
  fields?: unknown;
}

/**
 * Checks `expand` and `fields` before a write, which applies them only once its change is committed:
 * a bad one must refuse the write, not fail the answer of a change already made.
 */
export function checkOutputOptions(collections: CollectionSet, collection: Collection, options: OutputOptions): void {
  const expand = param(options.expand);
  if (expand !== '') checkExpand(collections, collection, parseExpand(expand));
  parseFieldsParam(param(options.fields));
}

/**
 * Applies `expand`, the enrich hooks and `fields` to records about to be returned, in that order
 * (hooks see expanded records and may add keys that `fields` then picks, as in PocketBase).
 */
export async function finishRecords(deps: RecordDeps, ctx: RequestContext, collection: Collection, records: RecordJson[], options: OutputOptions): Promise<unknown[]> {
  const expand = param(options.expand);
  if (expand !== '') {
    const shape = shapeOf(collection);
    records = records.map((r) => withExpandSlot(r, shape));
    const collections = await deps.collections.all(ctx.db);
    const limits = deps.expandLimits ?? { records: DEFAULT_EXPAND_MAX_RECORDS, bytes: DEFAULT_MAX_ANSWER_BYTES };
    await expandRecords(deps, ctx, collections, collection, records, parseExpand(expand), { limits, fetched: 0 });
    // Expand is bounded by work, not only depth (API contract §20).
    checkExpandedSize(records, limits);
  }
  if (deps.events && !isSystem(ctx)) await deps.events.enrich(ctx, collection, records);
  const tree = parseFieldsParam(param(options.fields));
  return tree ? records.map((r) => pickFields(r, tree)) : records;
}

/** Lists records: access condition, filter, sort, pagination, totals, expand and fields. */
/**
 * What a collection's records are listed in when nothing else decides, and what `@rowid` sorts by:
 * the table's insertion order, or a view's id (a view has no rowid of its own).
 */
export function insertionOrderOf(collection: Collection, dialect: Dialect): string {
  return collection.type === 'view' ? `${ROOT_ALIAS}.id` : dialect.insertionOrder(ROOT_ALIAS);
}

export function listRecords(deps: RecordDeps, ctx: RequestContext, collection: Collection, query: ListQuery): Promise<ListResult>;
export function listRecords(deps: RecordDeps, ctx: RequestContext, collection: Collection, query: ListQuery, asText: true): Promise<ListResult | JsonText>;
export async function listRecords(deps: RecordDeps, ctx: RequestContext, collection: Collection, query: ListQuery, asText = false): Promise<ListResult | JsonText> {
  const { page, perPage } = pagination(query);
  const collections = await deps.collections.all(ctx.db);
  const shape = shapeOf(collection);
  const dialect = ctx.db.dialect;

  const conditions: Sql[] = [];
  const access = deps.access.condition(ctx, collection, 'list', collections);
  if (access) conditions.push(sql`(${access})`);

  const filter = param(query.filter).trim();
  const sortText = param(query.sort).trim();
  let order: Sql[] = [];
  try {
    if (filter !== '') {
      conditions.push(sql`(${compileFilter(filter, deps.access.filterResolver(ctx, collection, collections), { dialect })})`);
    }
  } catch (err) {
    throw filterProblem(err, 'filter');
  }
  const insertion = insertionOrderOf(collection, dialect);
  try {
    if (sortText !== '') order = compileSort(sortText, deps.access.filterResolver(ctx, collection, collections), dialect, ROOT_ALIAS, insertion);
  } catch (err) {
    throw filterProblem(err, 'sort');
  }

  const search = param(query.search).trim();
  if (search !== '' && deps.search) {
    const s = await deps.search(ctx, collection, search);
    if (s) {
      conditions.push(s.where);
      if (s.order && sortText === '') order.push(s.order);
    }
  }
  order.push(sql`${raw(insertion)}`);

  const from = sql`${raw(shape.table)} ${raw(ROOT_ALIAS)}`;
  const where = conditions.length > 0 ? sql` WHERE ${join(conditions, ' AND ')}` : EMPTY;
  const q = sql`SELECT ${raw(shape.selectList)} FROM ${from}${where} ORDER BY ${join(order, ', ')} LIMIT ${perPage} OFFSET ${(page - 1) * perPage}`;
  let rows: Row[];
  let totalItems = -1;
  let totalPages = -1;
  try {
    if (flag(query.skipTotal)) rows = await ctx.db.all(q.text, q.params);
    else {
      // The page and its total in one round trip where the driver can (PostgreSQL pipelines them).
      const [pageRows, counted] = await ctx.db.allEach([q, sql`SELECT COUNT(*) AS n FROM ${from}${where}`]);
      rows = pageRows;
      totalItems = Number((counted[0] as { n: number } | undefined)?.n ?? 0);
      totalPages = Math.ceil(totalItems / perPage);
    }
  } catch (err) {
    throw viewFailure(ctx, collection, err);
  }

  const viewer = await viewerFor(ctx, deps, collection, collections, rows.map((r) => r.id as string));
  if (asText && plainAnswer(deps, ctx, collection, query)) {
    // Rendered straight from the rows (render.ts): no record objects, no second pass to stringify.
    const render = rendererOf(shape, viewer);
    let text = `{"page":${page},"perPage":${perPage},"totalItems":${totalItems},"totalPages":${totalPages},"items":[`;
    for (let i = 0; i < rows.length; i++) text += (i === 0 ? '' : ',') + render(rows[i], viewer);
    return new JsonText(`${text}]}`);
  }
  const records = rows.map((row) => serializeRecord(row, shape, viewer));
  const items = await finishRecords(deps, ctx, collection, records, query);
  return { page, perPage, totalItems, totalPages, items };
}

/**
 * A view collection's query failing as it runs (a division by zero, a value too big, a cast of a bad
 * value) is its author's doing, not the server's: a 400 that says so. The database's words stay out of
 * it, since they may quote values of rows the caller cannot see; the SQL console shows them to an
 * administrator. A database that is busy or unreachable is still a 503, and a table's error is left as it is.
 */
function viewFailure(ctx: RequestContext, collection: Collection, err: unknown): unknown {
  if (collection.type !== 'view') return err;
  if (isApiError(err) ? err.status >= 500 : ctx.db.dialect.classifyError(err).kind === 'busy') return err;
  return badRequest(`The query of view "${collection.name}" failed as it ran; an administrator can run it in the SQL console to see why.`);
}

/** Whether records of `collection` leave for this caller as they are read: nothing to expand, pick or enrich. */
function plainAnswer(deps: RecordDeps, ctx: RequestContext, collection: Collection, options: OutputOptions): boolean {
  return param(options.expand) === '' && param(options.fields) === '' && (isSystem(ctx) || deps.events?.enriches(collection) !== true);
}

const viewTexts: ConditionTexts = new WeakMap();

const viewUnder = (shape: RecordShape, condition: string) => `${shape.selectById} AND (${condition})`;

function viewByIdText(shape: RecordShape, condition: string): string {
  return conditionText(viewTexts, shape, condition, viewUnder);
}

/** The row of one record by id, under an access condition when there is one. Open rules (the common
 * case) run the query the shape built once; under a rule, the query made once for the condition's text. */
export async function selectById(q: Pick<Queryable, 'get'>, shape: RecordShape, id: string, access: Sql | null): Promise<Row | undefined> {
  return q.get(...byId(shape, id, access));
}

/**
 * `selectById` in a transaction that goes on to write the row: concurrent writers of it wait until
 * this one commits (PostgreSQL; SQLite's write transactions are one at a time), so that an update
 * made from the stored values (`n+`) or a delete's walk over what points at the record reads what
 * the last writer left.
 */
export async function selectByIdToWrite(tx: Pick<Queryable, 'get' | 'dialect'>, shape: RecordShape, id: string, access: Sql | null, write: 'update' | 'delete'): Promise<Row | undefined> {
  const [text, params] = byId(shape, id, access);
  return tx.get(text + (write === 'update' ? tx.dialect.lockForUpdate(ROOT_ALIAS) : tx.dialect.lockForWrite(ROOT_ALIAS)), params);
}

/** `selectById` as a request's read by key (`Database.lookup`), outside any transaction. */
function lookupById(db: Database, shape: RecordShape, id: string, access: Sql | null): Promise<Row | undefined> {
  return db.lookup(...byId(shape, id, access));
}

function byId(shape: RecordShape, id: string, access: Sql | null): [string, unknown[]] {
  return access ? [viewByIdText(shape, access.text), [id, ...access.params]] : [shape.selectById, [id]];
}

/** One record by id, if the caller may view it (404 otherwise, so its existence does not leak). */
export async function viewRecord(deps: RecordDeps, ctx: RequestContext, collection: Collection, id: string, options: OutputOptions, asText = false): Promise<unknown> {
  const collections = await deps.collections.all(ctx.db);
  const shape = shapeOf(collection);
  const access = deps.access.condition(ctx, collection, 'view', collections);
  // A view of the caller's own account that its rule surely lets through answers from the row its
  // token was checked against in this request: the same row, read a moment earlier.
  const own = ownRow(ctx.auth, shape, id);
  let row: Row | undefined;
  try {
    row = own && (access === null || deps.access.showsOwnRecord(ctx, collection)) ? own : await lookupById(ctx.db, shape, id, access);
  } catch (err) {
    throw viewFailure(ctx, collection, err);
  }
  if (!row) throw notFound();
  const viewer = await viewerFor(ctx, deps, collection, collections, [row.id as string]);
  // Most views ask for neither expand nor fields, nor have enrich hooks: no further pass over the record.
  if (plainAnswer(deps, ctx, collection, options)) return asText ? new JsonText(rendererOf(shape, viewer)(row, viewer)) : serializeRecord(row, shape, viewer);
  const [out] = await finishRecords(deps, ctx, collection, [serializeRecord(row, shape, viewer)], options);
  return out;
}
