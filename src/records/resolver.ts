import { relationTarget } from '../collections/fields/relation.ts';
import { typeOf } from '../collections/fields/registry.ts';
import type { Collection, FieldDef } from '../collections/model.ts';
import type { ResolvedOperand, Resolver, ValueType } from '../rules/compile.ts';
import { FilterError } from '../rules/errors.ts';
import { quoteIdent } from '../lib/identifiers.ts';
import { ident, join, raw, type Sql, sql } from '../storage/sql.ts';
import type { Dialect } from '../storage/types.ts';

/** Most relation hops in one path (`a.b.c.d.e.f.name`), as in PocketBase. */
export const MAX_RELATION_DEPTH = 6;

const JSON_KEY = /^[A-Za-z0-9_-]+$/;
const BACK_RELATION = /^([A-Za-z][A-Za-z0-9_]*)_via_([A-Za-z][A-Za-z0-9_]*)$/;
const PATH_MODIFIERS = ['length', 'each', 'lower'];

// Maps, not object literals: names come from requests, and `__proto__` must not find anything.
/** Columns that every record has, filterable and sortable though not in `fields`. */
const SYSTEM_COLUMNS = new Map<string, ValueType>([
  ['id', 'text'],
  ['created', 'date'],
  ['updated', 'date'],
]);
/** Auth columns that filters may use; password hashes and token keys are never reachable. */
const AUTH_COLUMNS = new Map<string, ValueType>([
  ['email', 'text'],
  ['emailVisibility', 'bool'],
  ['verified', 'bool'],
]);

const VALUE_TYPES = new Map<string, ValueType>([
  ['number', 'number'],
  ['bool', 'bool'],
  ['date', 'date'],
  ['json', 'json'],
]);

export type CollectionLookup = (name: string) => Collection | undefined;

export interface FieldResolverOptions {
  dialect: Dialect;
  lookup: CollectionLookup;
  /** Hidden fields (and emails that are not public) are usable only by administrators and rules. */
  allowHidden: boolean;
  /** Resolves names starting with `@` (request data, other collections); without it they are refused. */
  special?: Resolver;
  /**
   * The condition a related row (of `collection`, reached as `ref`) must meet to count in a path, or
   * null when every row counts. Callers' own filters and sorts get the rules domain's, so a path
   * never reads a record the caller may not view; rules, written by administrators, see everything.
   */
  related?: (collection: Collection, ref: Sql) => Sql | null;
}

interface Column {
  valueType: ValueType;
  field?: FieldDef;
  multiple: boolean;
  /** The email of an auth record, which callers without `allowHidden` only see where it is public. */
  masked?: boolean;
}

/** What values of a field are compared as. */
export function fieldValueType(field: FieldDef): ValueType {
  return VALUE_TYPES.get(field.type) ?? 'text';
}

function columnOf(collection: Collection, name: string, allowHidden: boolean): Column | undefined {
  const system = SYSTEM_COLUMNS.get(name);
  if (system) return { valueType: system, multiple: false };
  const auth = collection.type === 'auth' ? AUTH_COLUMNS.get(name) : undefined;
  if (auth) return { valueType: auth, multiple: false, masked: name === 'email' && !allowHidden };
  const field = collection.fields.find((f) => f.name === name);
  if (!field || (field.hidden && !allowHidden)) return undefined;
  const type = typeOf(field);
  return { valueType: fieldValueType(field), field, multiple: type.multiple(field) };
}

/**
 * One step of a path: a source (table or JSON array) joined to the previous one. `key` names the
 * path prefix it stands for, so two operands going through the same prefix share the joined row.
 */
export interface Hop {
  key: string;
  /** `table alias` or `json_each(…) alias`. */
  from: Sql;
  on?: Sql;
  /** Whether the hop can yield several rows for one starting row. */
  many: boolean;
}

/** Where a path starts: a row of `collection` reachable as `ref`, after `hops` (empty for the record itself). */
export interface PathStart {
  collection: Collection;
  ref: Sql;
  hops: Hop[];
  key: string;
}

/** Where `resolvePath` is along a path: the joins so far, the collection reached (`collection`) and its alias (`ref`). */
interface PathWalk extends PathStart {
  path: string;
  segments: string[];
  modifier: string | undefined;
  position: number;
  /** Relation hops taken. */
  depth: number;
}

function unknownField(walk: PathWalk, i: number): FilterError {
  return new FilterError(`unknown field ${JSON.stringify(walk.segments.slice(0, i + 1).join('.'))}`, walk.position);
}

/**
 * Resolves field names and relation paths of a collection for the filter compiler, as PocketBase
 * does. Paths through single relations are scalar subqueries. Paths through multiple relations,
 * back-relations, multiple-value fields and `@collection` are joined rows: the compiled condition is
 * wrapped in `EXISTS (SELECT 1 FROM … LEFT JOIN …)`, and operands going through the same path prefix
 * refer to the same joined row, so `tags.name ?= "a" && tags.active ?= true` needs one tag with both.
 */
export class RecordFieldResolver implements Resolver {
  private readonly aliases = new Map<string, string>();
  private readonly joins = new Map<string, Hop>();

  constructor(
    private readonly root: Collection,
    private readonly rootAlias: string,
    private readonly options: FieldResolverOptions,
  ) {}

  get lookup(): CollectionLookup {
    return this.options.lookup;
  }

  get dialect(): Dialect {
    return this.options.dialect;
  }

  resolve(name: string, position: number): ResolvedOperand {
    if (name.startsWith('@')) {
      if (this.options.special) return this.options.special.resolve(name, position);
      throw new FilterError(`unknown identifier ${JSON.stringify(name)}`, position);
    }
    return this.resolvePath({ collection: this.root, ref: sql`${raw(this.rootAlias)}`, hops: [], key: '' }, name, position);
  }

  wrap(condition: Sql): Sql {
    if (this.joins.size === 0) return condition;
    const joins = [...this.joins.values()].map((h) => sql` LEFT JOIN ${h.from} ON ${h.on ?? sql`TRUE`}`);
    this.joins.clear();
    return sql`EXISTS (SELECT 1 FROM (SELECT 1) ${raw('_j0')}${join(joins, '')} WHERE ${condition})`;
  }

  /** The alias of a path prefix: the same prefix always gets the same alias within this resolver. */
  aliasFor(key: string, prefix: string): string {
    let alias = this.aliases.get(key);
    if (alias === undefined) {
      alias = `${prefix}${this.aliases.size + 1}`;
      this.aliases.set(key, alias);
    }
    return alias;
  }

  /** Resolves `path` (with an optional `:modifier`) from `start`. */
  resolvePath(start: PathStart, path: string, position: number): ResolvedOperand {
    const [base, modifier, ...extra] = path.split(':');
    if (extra.length > 0 || (modifier !== undefined && !PATH_MODIFIERS.includes(modifier))) {
      throw new FilterError(`unknown modifier in ${JSON.stringify(path)}`, position);
    }
    const segments = base.split('.');
    if (segments.some((s) => s === '')) throw new FilterError(`invalid field path ${JSON.stringify(path)}`, position);
    const walk: PathWalk = { path, segments, modifier, position, hops: [...start.hops], collection: start.collection, ref: start.ref, key: start.key, depth: 0 };
    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i];
      const last = i === segments.length - 1;
      const column = columnOf(walk.collection, segment, this.options.allowHidden);
      walk.key = `${walk.key}.${segment}`;
      if (!column) {
        if (last) throw unknownField(walk, i);
        this.backRelationHop(walk, i);
        continue;
      }
      const columnRef = column.masked
        ? sql`(CASE WHEN ${walk.ref}."emailVisibility" = TRUE THEN ${walk.ref}."email" END)`
        : sql`${walk.ref}.${ident(segment)}`;
      if (column.field?.type === 'json' && !last) return this.jsonPathOperand(walk, i, columnRef);
      // A geoPoint's coordinates, as PocketBase reads them (`geoDistance(place.lon, place.lat, …)`).
      if (column.field?.type === 'geoPoint' && !last) {
        if (i !== segments.length - 2 || !['lon', 'lat'].includes(segments[i + 1])) throw unknownField(walk, i + 1);
        return this.jsonPathOperand(walk, i, columnRef);
      }
      if (last) return this.lastSegmentOperand(walk, column, columnRef);
      const shortcut = this.relationHop(walk, i, column, columnRef);
      if (shortcut) return shortcut;
    }
    throw new FilterError(`invalid field path ${JSON.stringify(path)}`, position);
  }

  /** One more relation hop, past `MAX_RELATION_DEPTH` refused. */
  private deeper(walk: PathWalk): void {
    if (++walk.depth > MAX_RELATION_DEPTH) throw new FilterError(`relation path deeper than ${MAX_RELATION_DEPTH}`, walk.position);
  }

  /** `comments_via_post`: the records of `comments` whose `post` points at the current row. */
  private backRelationHop(walk: PathWalk, i: number): void {
    const { dialect, lookup } = this.options;
    const back = BACK_RELATION.exec(walk.segments[i]);
    const source = back ? lookup(back[1]) : undefined;
    const via = source ? source.fields.find((f) => f.name === back![2] && f.type === 'relation') : undefined;
    if (!back || !source || !via || relationTarget(via).toLowerCase() !== walk.collection.name.toLowerCase()) throw unknownField(walk, i);
    this.deeper(walk);
    const r = this.aliasFor(walk.key, 'r');
    const on = typeOf(via).multiple(via)
      ? sql`EXISTS (SELECT 1 FROM ${raw(dialect.jsonEach(`${r}.${quoteIdent(via.name)}`, `${r}_v`))} WHERE ${raw(r)}_v.value = ${walk.ref}.id)`
      : sql`${raw(r)}.${ident(via.name)} = ${walk.ref}.id`;
    walk.hops.push({ key: walk.key, from: sql`${ident(source.name)} ${raw(r)}`, on: this.visibleOnly(on, source, r), many: true });
    walk.collection = source;
    walk.ref = sql`${raw(r)}`;
  }

  /** The segments after a JSON field's are a path inside its value. */
  private jsonPathOperand(walk: PathWalk, i: number, columnRef: Sql): ResolvedOperand {
    const keys = walk.segments.slice(i + 1);
    if (keys.some((k) => !JSON_KEY.test(k))) throw new FilterError(`invalid JSON path in ${JSON.stringify(walk.path)}`, walk.position);
    if (walk.modifier === 'length' || walk.modifier === 'each') throw new FilterError(`":${walk.modifier}" cannot follow a JSON path in ${JSON.stringify(walk.path)}`, walk.position);
    return { ...this.operand(walk.hops, this.options.dialect.jsonPath(columnRef, keys), 'json', walk.modifier), nullable: true };
  }

  /** The path's field: its value, its length (`:length`) or, for a multiple one, each of its values (a join). */
  private lastSegmentOperand(walk: PathWalk, column: Column, columnRef: Sql): ResolvedOperand {
    const { dialect } = this.options;
    const { modifier, hops, key } = walk;
    const segment = walk.segments[walk.segments.length - 1];
    if (modifier === 'length') {
      if (!column.multiple) throw new FilterError(`":length" needs a multiple-value field, ${JSON.stringify(segment)} is not`, walk.position);
      return this.operand(hops, sql`${raw(dialect.jsonArrayLength(columnRef.text))}`, 'number', undefined);
    }
    if (column.multiple) {
      const each = modifier === 'each';
      const jkey = each ? `${key}:each` : `${key}[]`;
      const j = this.aliasFor(jkey, 'j');
      hops.push({ key: jkey, from: sql`${raw(dialect.jsonEach(columnRef.text, j))}`, many: true });
      return this.operand(hops, sql`${raw(j)}.value`, column.valueType, each ? undefined : modifier, each);
    }
    if (modifier === 'each') throw new FilterError(`":each" needs a multiple-value field, ${JSON.stringify(segment)} is not`, walk.position);
    const op = this.operand(hops, columnRef, column.valueType, modifier);
    return column.field?.type === 'json' || column.masked ? { ...op, nullable: true } : op;
  }

  /**
   * A hop through the relation field of segment `i` into its collection; the operand itself when the
   * path ends in the related record's `id`, which is the relation's own value.
   */
  private relationHop(walk: PathWalk, i: number, column: Column, columnRef: Sql): ResolvedOperand | undefined {
    const { segments, key } = walk;
    const segment = segments[i];
    if (column.field?.type !== 'relation') {
      throw new FilterError(`${JSON.stringify(segment)} is not a relation field, so ${JSON.stringify(walk.path)} cannot be followed`, walk.position);
    }
    this.deeper(walk);
    const target = this.options.lookup(relationTarget(column.field));
    if (!target) throw new FilterError(`the collection related by ${JSON.stringify(segment)} no longer exists`, walk.position);
    // `author.id` is the value of `author` itself (PocketBase reads it so too): the column, which an
    // index serves, instead of a hop into the related table. Not where the caller may see only
    // some related records: there the hop is what hides the others.
    if (!column.multiple && i === segments.length - 2 && segments[i + 1] === 'id' && walk.modifier === undefined && !this.options.related?.(target, sql`${raw('_t')}`)) {
      return this.operand(walk.hops, columnRef, 'text', undefined);
    }
    const r = this.aliasFor(key, 'r');
    if (column.multiple) {
      const j = this.aliasFor(`${key}[]`, 'j');
      walk.hops.push({ key: `${key}[]`, from: sql`${raw(this.options.dialect.jsonEach(columnRef.text, j))}`, many: true });
      walk.hops.push({ key, from: sql`${ident(target.name)} ${raw(r)}`, on: this.visibleOnly(sql`${raw(r)}.id = ${raw(j)}.value`, target, r), many: true });
    } else {
      walk.hops.push({ key, from: sql`${ident(target.name)} ${raw(r)}`, on: this.visibleOnly(sql`${raw(r)}.id = ${columnRef}`, target, r), many: false });
    }
    walk.collection = target;
    walk.ref = sql`${raw(r)}`;
    return undefined;
  }

  /** The join condition of a hop into `collection` (aliased `alias`), narrowed to rows that count. */
  private visibleOnly(on: Sql, collection: Collection, alias: string): Sql {
    const visible = this.options.related?.(collection, sql`${raw(alias)}`);
    return visible ? sql`${on} AND ${visible}` : on;
  }

  /**
   * The operand for `value` read at the end of `hops`: the value itself when there are none, a
   * scalar subquery when every hop yields at most one row, a `:each` set, or a joined value.
   */
  private operand(hops: Hop[], value: Sql, valueType: ValueType, modifier: string | undefined, eachSet = false): ResolvedOperand {
    const v = modifier === 'lower' ? this.options.dialect.lower(value) : value;
    if (hops.length === 0) return { kind: 'scalar', sql: v, valueType };
    const on = hops.flatMap((h) => (h.on ? [h.on] : []));
    const where = on.length > 0 ? sql` WHERE ${join(on, ' AND ')}` : sql``;
    const select = sql`SELECT ${v} AS v FROM ${join(
      hops.map((h) => h.from),
      ', ',
    )}${where}`;
    if (eachSet) return { kind: 'set', sql: select, valueType, each: true };
    if (!hops.some((h) => h.many)) {
      const rows = sql`FROM ${join(
        hops.map((h) => h.from),
        ', ',
      )} WHERE ${on.length > 0 ? join(on, ' AND ') : sql`TRUE`}`;
      return { kind: 'scalar', sql: sql`(${select} LIMIT 1)`, valueType, nullable: true, through: { rows, value: v } };
    }
    for (const h of hops) if (!this.joins.has(h.key)) this.joins.set(h.key, h);
    return { kind: 'scalar', sql: v, valueType, every: select };
  }
}
