import { relationTarget } from '../collections/fields/relation.ts';
import type { Collection, FieldDef } from '../collections/model.ts';
import type { CollectionSet } from '../collections/service.ts';
import { inRuleContext, type RequestContext } from '../context.ts';
import { badRequest, isApiError } from '../errors.ts';
import { list, raw, type Sql, sql } from '../storage/index.ts';
import { typeOf } from '../collections/fields/registry.ts';
import type { RecordDeps } from './deps.ts';
import { type RecordJson, serializeRecord, withExpandSlot } from './serialize.ts';
import { ROOT_ALIAS, shapeOf } from './shape.ts';
import { byteOrder } from '../lib/key-order.ts';
import { viewerFor } from './viewer.ts';

/** Deepest `expand` path, as in PocketBase. */
export const MAX_EXPAND_DEPTH = 6;
/** Most records one back-relation expands to, as in PocketBase. */
const MAX_BACK_RELATIONS = 1000;
const CHUNK = 500;
// `comments_via_post`, and v0.22's deprecated `comments(post)`, which PocketBase still reads (§23).
const BACK_RELATION = /^(\w+)_via_(\w+)$|^(\w+)\((\w+)\)$/;
const SEGMENT = /^\w+$|^\w+\(\w+\)$/;

type ExpandTree = Map<string, ExpandTree>;

/** Most records one answer's `expand` holds, counting each place a record appears (API contract §20). */
export const DEFAULT_EXPAND_MAX_RECORDS = 5000;
/** Most bytes one answer with `expand` writes (API contract §20). */
export const DEFAULT_MAX_ANSWER_BYTES = 32 * 1024 * 1024;

export interface ExpandLimits {
  records: number;
  bytes: number;
}

/** What one answer's expand may still read: distinct records fetched, checked level by level. */
export interface ExpandBudget {
  limits: ExpandLimits;
  fetched: number;
}

function tooManyRecords(limits: ExpandLimits): Error {
  return badRequest(`The expand would hold more than ${limits.records} records; ask for fewer levels or relations (CAIRN_EXPAND_MAX_RECORDS).`, {
    expand: { code: 'validation_expand_too_large', message: `At most ${limits.records} expanded records per answer.` },
  });
}

function spend(budget: ExpandBudget, n: number): void {
  budget.fetched += n;
  // Records fetched are distinct per level; the answer holds at least as many.
  if (budget.fetched > budget.limits.records) throw tooManyRecords(budget.limits);
}

/**
 * At least the length of `JSON.stringify(record)` without its `expand`, without writing it: six
 * characters for each of a string's or a key's (the longest escape, `\u0000`), numbers and literals
 * at their longest, arrays and objects (JSON and multiple fields) written out.
 */
function ownLengthBound(record: RecordJson): number {
  let n = 2;
  for (const key in record) {
    if (key === 'expand') continue;
    const value = record[key];
    if (value === undefined) continue;
    n += 6 * key.length + 4;
    if (typeof value === 'string') n += 6 * value.length + 2;
    else if (typeof value === 'number') n += 24;
    else if (typeof value === 'boolean' || value === null) n += 5;
    else n += JSON.stringify(value)?.length ?? 0;
  }
  return n;
}

const ownLength = (record: RecordJson): number => {
  const { expand: _expand, ...own } = record;
  return JSON.stringify(own).length;
};

/**
 * Checks what an expanded answer would hold before it is written: a record related from several
 * places is one object shared by all, but the JSON repeats it under each, so a few records related to
 * each other make an answer exponential in the depth (six records, six levels: 93 MB). Counted over
 * the shared objects (each once, memoized), so the check costs what the expand read, not what the
 * answer would weigh. The records listed appear once each: their own fields are bounded cheaply
 * (`ownLengthBound`) and written out only when that bound would pass the limit, since writing them
 * cost more than the rest of the check (a list of 20 posts of 500 characters expanding their
 * authors). Throws `400` saying which bound was passed.
 */
export function checkExpandedSize(records: RecordJson[], limits: ExpandLimits): void {
  const memo = new Map<object, { count: number; bytes: number }>();
  const expanded = (r: RecordJson): { count: number; bytes: number } => {
    const m = { count: 0, bytes: 0 };
    if (!r.expand) return m;
    for (const [key, value] of Object.entries(r.expand)) {
      m.bytes += key.length + 12;
      for (const child of Array.isArray(value) ? value : [value]) {
        if (!child || typeof child !== 'object') continue;
        const c = measure(child as RecordJson);
        m.count += c.count;
        m.bytes += c.bytes + 1;
      }
    }
    return m;
  };
  const measure = (r: RecordJson): { count: number; bytes: number } => {
    let m = memo.get(r);
    if (m) return m;
    const below = expanded(r);
    m = { count: 1 + below.count, bytes: ownLength(r) + below.bytes };
    memo.set(r, m);
    return m;
  };
  let count = 0;
  let bytes = 0;
  let listed = 0;
  for (const r of records) {
    const m = expanded(r);
    count += m.count;
    bytes += m.bytes;
    listed += ownLengthBound(r);
  }
  if (count > limits.records) throw tooManyRecords(limits);
  // The bound first; the listed records are written out only when it does not settle it.
  if (bytes + listed > limits.bytes && bytes + records.reduce((n, r) => n + ownLength(r), 0) > limits.bytes) {
    throw badRequest(`The expanded answer would be larger than ${Math.round(limits.bytes / (1024 * 1024))} MB; ask for fewer levels, relations or records (CAIRN_MAX_ANSWER_MB).`, {
      expand: { code: 'validation_expand_too_large', message: `At most ${Math.round(limits.bytes / (1024 * 1024))} MB of expanded records per answer.` },
    });
  }
}

export function parseExpand(text: string): ExpandTree {
  const root: ExpandTree = new Map();
  if (text.length > 2000) throw badRequest('The expand parameter is too long.');
  for (const part of text.split(',')) {
    const path = part.trim();
    if (path === '') continue;
    const segments = path.split('.');
    if (segments.length > MAX_EXPAND_DEPTH) throw badRequest(`Expand paths can be at most ${MAX_EXPAND_DEPTH} relations deep.`);
    let node = root;
    for (const s of segments) {
      if (!SEGMENT.test(s)) throw badRequest(`Invalid expand path ${JSON.stringify(path)}.`);
      let child = node.get(s);
      if (!child) {
        child = new Map();
        node.set(s, child);
      }
      node = child;
    }
  }
  return sorted(root);
}

/** The tree with each level's keys in PocketBase's order: `expand` is a map its encoder sorts. */
function sorted(tree: ExpandTree): ExpandTree {
  return new Map([...tree].sort(([a], [b]) => byteOrder(a, b)).map(([k, sub]) => [k, sorted(sub)]));
}

/** Reads records visible to the caller under the view rule; an admin-only collection yields none. */
async function visibleRecords(deps: RecordDeps, ctx: RequestContext, collections: CollectionSet, collection: Collection, condition: (alias: string) => Sql, expands: boolean): Promise<RecordJson[]> {
  let access: Sql | null;
  try {
    access = deps.access.condition(ctx, collection, 'view', collections);
  } catch (err) {
    // Like PocketBase, expand leaves out what the caller may not see instead of failing the request.
    if (isApiError(err) && (err.status === 403 || err.status === 404)) return [];
    throw err;
  }
  const shape = shapeOf(collection);
  const where = access ? sql`${condition(ROOT_ALIAS)} AND (${access})` : condition(ROOT_ALIAS);
  const q = sql`SELECT ${raw(shape.selectList)} FROM ${raw(shape.table)} ${raw(ROOT_ALIAS)} WHERE ${where} LIMIT ${MAX_BACK_RELATIONS}`;
  const rows = await ctx.db.all(q.text, q.params);
  const viewer = await viewerFor(ctx, deps, collection, collections, rows.map((r) => r.id as string));
  return expands ? rows.map((row) => withExpandSlot(serializeRecord(row, shape, viewer), shape)) : rows.map((row) => serializeRecord(row, shape, viewer));
}

function inList(column: Sql, ids: string[]): Sql {
  return sql`${column} IN (${list(ids)})`;
}

async function byIds(deps: RecordDeps, ctx: RequestContext, collections: CollectionSet, collection: Collection, ids: string[], expands: boolean): Promise<Map<string, RecordJson>> {
  const out = new Map<string, RecordJson>();
  for (let i = 0; i < ids.length; i += CHUNK) {
    const chunk = ids.slice(i, i + CHUNK);
    const records = await visibleRecords(deps, ctx, collections, collection, (a) => inList(sql`${raw(a)}.id`, chunk), expands);
    for (const r of records) out.set(r.id, r);
  }
  return out;
}

/**
 * `<collection>_via_<field>`: the records of another collection whose relation field points here.
 * Undefined when the segment names no such relation: as in PocketBase, a path that leads nowhere
 * expands nothing rather than failing the request (clients send one `expand` for several collections).
 */
function backRelation(collections: CollectionSet, collection: Collection, segment: string): { source: Collection; via: FieldDef } | undefined {
  const back = BACK_RELATION.exec(segment);
  const source = back ? collections.find(back[1] ?? back[3]) : undefined;
  const viaName = back?.[2] ?? back?.[4];
  const via = source?.fields.find((f) => f.name === viaName && f.type === 'relation');
  if (!source || !via || relationTarget(via).toLowerCase() !== collection.name.toLowerCase()) return undefined;
  return { source, via };
}

/**
 * Checks every path of an `expand` against the collections, as `expandRecords` resolves them: a
 * write checks it before it writes, so that a bad `expand` refuses the write instead of failing the
 * answer of a change already made.
 */
export function checkExpand(collections: CollectionSet, collection: Collection, tree: ExpandTree): void {
  for (const [segment, subtree] of tree) {
    const field = collection.fields.find((f) => f.name === segment);
    if (field && field.type === 'relation') {
      const target = collections.find(relationTarget(field));
      if (target) checkExpand(collections, target, subtree);
      continue;
    }
    const back = backRelation(collections, collection, segment);
    if (back) checkExpand(collections, back.source, subtree);
  }
}

/** Resolves `expand` on records of `collection` in place, batching one query per relation and level. */
export async function expandRecords(
  deps: RecordDeps,
  ctx: RequestContext,
  collections: CollectionSet,
  collection: Collection,
  records: RecordJson[],
  tree: ExpandTree,
  budget: ExpandBudget = { limits: deps.expandLimits ?? { records: DEFAULT_EXPAND_MAX_RECORDS, bytes: DEFAULT_MAX_ANSWER_BYTES }, fetched: 0 },
): Promise<void> {
  if (records.length === 0) return;
  ctx = inRuleContext(ctx, 'expand');
  for (const [segment, subtree] of tree) {
    const field = collection.fields.find((f) => f.name === segment);
    if (field && field.type === 'relation') {
      const target = collections.find(relationTarget(field));
      if (!target) continue;
      const idsOf = (r: RecordJson): string[] => {
        const v = r[segment];
        return Array.isArray(v) ? (v as string[]) : typeof v === 'string' && v !== '' ? [v] : [];
      };
      // As PocketBase: a path naming a relation gives every record of this level an `expand`, `{}`
      // when nothing it relates to exists or may be viewed (a path that names no relation gives none).
      for (const r of records) r.expand ??= {};
      const ids = [...new Set(records.flatMap(idsOf))];
      if (ids.length === 0) continue;
      const related = await byIds(deps, ctx, collections, target, ids, subtree.size > 0);
      spend(budget, related.size);
      if (subtree.size > 0) await expandRecords(deps, ctx, collections, target, [...related.values()], subtree, budget);
      for (const r of records) {
        const v = r[segment];
        const value = Array.isArray(v) ? idsOf(r).map((id) => related.get(id)).filter(Boolean) : related.get(v as string);
        if (value === undefined || (Array.isArray(value) && value.length === 0)) continue;
        r.expand ??= {};
        r.expand[segment] = value;
      }
      continue;
    }

    const back = backRelation(collections, collection, segment);
    if (!back) continue;
    const { source, via } = back;
    for (const r of records) r.expand ??= {};
    const ids = records.map((r) => r.id);
    const multiple = typeOf(via).multiple(via);
    const found: RecordJson[] = [];
    for (let i = 0; i < ids.length; i += CHUNK) {
      const chunk = ids.slice(i, i + CHUNK);
      found.push(
        ...(await visibleRecords(deps, ctx, collections, source, (a) => {
          const column = sql`${raw(a)}.${raw(ctx.db.dialect.quoteIdent(via.name))}`;
          if (!multiple) return inList(column, chunk);
          const j = 'jx';
          return sql`EXISTS (SELECT 1 FROM ${raw(ctx.db.dialect.jsonEach(column.text, j))} WHERE ${inList(sql`${raw(j)}.value`, chunk)})`;
        }, subtree.size > 0)),
      );
    }
    spend(budget, found.length);
    if (subtree.size > 0) await expandRecords(deps, ctx, collections, source, found, subtree, budget);
    for (const r of records) {
      const refs = found.filter((f) => {
        const v = f[via.name];
        return Array.isArray(v) ? v.includes(r.id) : v === r.id;
      });
      if (refs.length === 0) continue;
      r.expand ??= {};
      r.expand[segment] = refs;
    }
  }
}
