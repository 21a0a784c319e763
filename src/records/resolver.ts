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

    const { dialect, lookup, allowHidden } = this.options;
    const hops: Hop[] = [...start.hops];
    let current = start.collection;
    let ref = start.ref;
    let key = start.key;
    let depth = 0;
    const hop = () => {
      if (++depth > MAX_RELATION_DEPTH) throw new FilterError(`relation path deeper than ${MAX_RELATION_DEPTH}`, position);
    };

    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i];
      const last = i === segments.length - 1;
      const column = columnOf(current, segment, allowHidden);
      key = `${key}.${segment}`;

      if (!column) {
        const back = BACK_RELATION.exec(segment);
        const source = back ? lookup(back[1]) : undefined;
        const via = source ? source.fields.find((f) => f.name === back![2] && f.type === 'relation') : undefined;
        if (!back || !source || !via || relationTarget(via).toLowerCase() !== current.name.toLowerCase() || last) {
          throw new FilterError(`unknown field ${JSON.stringify(segments.slice(0, i + 1).join('.'))}`, position);
        }
        hop();
        // `comments_via_post`: the records of `comments` whose `post` points at the current row.
        const r = this.aliasFor(key, 'r');
        const on = typeOf(via).multiple(via)
          ? sql`EXISTS (SELECT 1 FROM ${raw(dialect.jsonEach(`${r}.${quoteIdent(via.name)}`, `${r}_v`))} WHERE ${raw(r)}_v.value = ${ref}.id)`
          : sql`${raw(r)}.${ident(via.name)} = ${ref}.id`;
        hops.push({ key, from: sql`${ident(source.name)} ${raw(r)}`, on: this.visibleOnly(on, source, r), many: true });
        current = source;
        ref = sql`${raw(r)}`;
        continue;
      }

      const columnRef = column.masked
        ? sql`(CASE WHEN ${ref}."emailVisibility" = TRUE THEN ${ref}."email" END)`
        : sql`${ref}.${ident(segment)}`;
      if (column.field?.type === 'json' && !last) {
        // The remaining segments are a path inside the JSON value.
        const keys = segments.slice(i + 1);
        if (keys.some((k) => !JSON_KEY.test(k))) throw new FilterError(`invalid JSON path in ${JSON.stringify(path)}`, position);
        if (modifier === 'length' || modifier === 'each') throw new FilterError(`":${modifier}" cannot follow a JSON path in ${JSON.stringify(path)}`, position);
        return { ...this.operand(hops, dialect.jsonPath(columnRef, keys), 'json', modifier), nullable: true };
      }

      if (last) {
        if (modifier === 'length') {
          if (!column.multiple) throw new FilterError(`":length" needs a multiple-value field, ${JSON.stringify(segment)} is not`, position);
          return this.operand(hops, sql`${raw(dialect.jsonArrayLength(columnRef.text))}`, 'number', undefined);
        }
        if (column.multiple) {
          const each = modifier === 'each';
          const jkey = each ? `${key}:each` : `${key}[]`;
          const j = this.aliasFor(jkey, 'j');
          hops.push({ key: jkey, from: sql`${raw(dialect.jsonEach(columnRef.text, j))}`, many: true });
          return this.operand(hops, sql`${raw(j)}.value`, column.valueType, each ? undefined : modifier, each);
        }
        if (modifier === 'each') throw new FilterError(`":each" needs a multiple-value field, ${JSON.stringify(segment)} is not`, position);
        const op = this.operand(hops, columnRef, column.valueType, modifier);
        return column.field?.type === 'json' || column.masked ? { ...op, nullable: true } : op;
      }

      if (column.field?.type !== 'relation') {
        throw new FilterError(`${JSON.stringify(segment)} is not a relation field, so ${JSON.stringify(path)} cannot be followed`, position);
      }
      hop();
      const target = lookup(relationTarget(column.field));
      if (!target) throw new FilterError(`the collection related by ${JSON.stringify(segment)} no longer exists`, position);
      // `author.id` is the value of `author` itself (PocketBase reads it so too): the column, which an
      // index serves, instead of a hop into the related table. Not where the caller may see only
      // some related records: there the hop is what hides the others.
      if (!column.multiple && i === segments.length - 2 && segments[i + 1] === 'id' && modifier === undefined && !this.options.related?.(target, sql`${raw('_t')}`)) {
        return this.operand(hops, columnRef, 'text', undefined);
      }
      const r = this.aliasFor(key, 'r');
      if (column.multiple) {
        const j = this.aliasFor(`${key}[]`, 'j');
        hops.push({ key: `${key}[]`, from: sql`${raw(dialect.jsonEach(columnRef.text, j))}`, many: true });
        hops.push({ key, from: sql`${ident(target.name)} ${raw(r)}`, on: this.visibleOnly(sql`${raw(r)}.id = ${raw(j)}.value`, target, r), many: true });
      } else {
        hops.push({ key, from: sql`${ident(target.name)} ${raw(r)}`, on: this.visibleOnly(sql`${raw(r)}.id = ${columnRef}`, target, r), many: false });
      }
      current = target;
      ref = sql`${raw(r)}`;
    }
    throw new FilterError(`invalid field path ${JSON.stringify(path)}`, position);
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
