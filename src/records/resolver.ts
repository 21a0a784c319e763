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

/** Columns that every record has, filterable and sortable though not in `fields`. */
const SYSTEM_COLUMNS: Record<string, ValueType> = { id: 'text', created: 'date', updated: 'date' };
/** Auth columns that filters may use; password hashes and token keys are never reachable. */
const AUTH_COLUMNS: Record<string, ValueType> = { email: 'text', emailVisibility: 'bool', verified: 'bool' };

const VALUE_TYPES: Record<string, ValueType> = { number: 'number', bool: 'bool', date: 'date', json: 'json' };

export type CollectionLookup = (name: string) => Collection | undefined;

export interface FieldResolverOptions {
  dialect: Dialect;
  lookup: CollectionLookup;
  /** Hidden fields are usable only by administrators. */
  allowHidden: boolean;
  /** Resolves names starting with `@` (request data, other collections); without it they are refused. */
  special?: Resolver;
}

interface Column {
  valueType: ValueType;
  field?: FieldDef;
  multiple: boolean;
}

function columnOf(collection: Collection, name: string, allowHidden: boolean): Column | undefined {
  const system = SYSTEM_COLUMNS[name];
  if (system) return { valueType: system, multiple: false };
  if (collection.type === 'auth' && AUTH_COLUMNS[name]) return { valueType: AUTH_COLUMNS[name], multiple: false };
  const field = collection.fields.find((f) => f.name === name);
  if (!field || (field.hidden && !allowHidden)) return undefined;
  const type = typeOf(field);
  return { valueType: VALUE_TYPES[field.type] ?? 'text', field, multiple: type.multiple(field) };
}

/**
 * Resolves field names and relation paths of a collection for the filter compiler. Paths become
 * correlated subqueries against the row aliased `rootAlias`: single relations give a scalar,
 * multiple relations and multiple-value fields give a set.
 */
export class RecordFieldResolver implements Resolver {
  private aliasCounter = 0;

  constructor(
    private readonly root: Collection,
    private readonly rootAlias: string,
    private readonly options: FieldResolverOptions,
  ) {}

  resolve(name: string, position: number): ResolvedOperand {
    if (name.startsWith('@')) {
      if (this.options.special) return this.options.special.resolve(name, position);
      throw new FilterError(`unknown identifier ${JSON.stringify(name)}`, position);
    }
    return this.resolvePath(this.root, sql`${raw(this.rootAlias)}`, name, position, true);
  }

  /** A fresh alias for a subquery source, unique within this resolver. */
  nextAlias(prefix: string): string {
    return `${prefix}${++this.aliasCounter}`;
  }

  /**
   * Resolves `path` (with an optional `:modifier`) starting at `start`, a row of `collection`
   * reachable as `startRef`. With `correlated` false the start row itself is part of the set (used by
   * `@collection.*`), and the result is always a set.
   */
  resolvePath(collection: Collection, startRef: Sql, path: string, position: number, correlated: boolean, fromItems: Sql[] = []): ResolvedOperand {
    const [base, modifier, ...extra] = path.split(':');
    if (extra.length > 0 || (modifier !== undefined && !['length', 'each', 'lower'].includes(modifier))) {
      throw new FilterError(`unknown modifier in ${JSON.stringify(path)}`, position);
    }
    const segments = base.split('.');
    if (segments.some((s) => s === '')) throw new FilterError(`invalid field path ${JSON.stringify(path)}`, position);

    const { dialect, lookup, allowHidden } = this.options;
    const from: Sql[] = [...fromItems];
    const where: Sql[] = [];
    let isSet = !correlated;
    let current = collection;
    let ref = startRef;
    let hops = 0;

    for (let i = 0; i < segments.length; i++) {
      const segment = segments[i];
      const last = i === segments.length - 1;
      const column = columnOf(current, segment, allowHidden);

      if (!column) {
        const back = BACK_RELATION.exec(segment);
        const source = back ? lookup(back[1]) : undefined;
        const via = source ? source.fields.find((f) => f.name === back![2] && f.type === 'relation') : undefined;
        if (!back || !source || !via || relationTarget(via).toLowerCase() !== current.name.toLowerCase() || last) {
          throw new FilterError(`unknown field ${JSON.stringify(segments.slice(0, i + 1).join('.'))}`, position);
        }
        if (++hops > MAX_RELATION_DEPTH) throw new FilterError(`relation path deeper than ${MAX_RELATION_DEPTH}`, position);
        // `comments_via_post`: the records of `comments` whose `post` points at the current row.
        const r = this.nextAlias('r');
        from.push(sql`${ident(source.name)} ${raw(r)}`);
        if (typeOf(via).multiple(via)) {
          const j = this.nextAlias('j');
          where.push(sql`EXISTS (SELECT 1 FROM ${raw(dialect.jsonEach(`${r}.${quoteIdent(via.name)}`, j))} WHERE ${raw(j)}.value = ${ref}.id)`);
        } else {
          where.push(sql`${raw(r)}.${ident(via.name)} = ${ref}.id`);
        }
        isSet = true;
        current = source;
        ref = sql`${raw(r)}`;
        continue;
      }

      const columnRef = sql`${ref}.${ident(segment)}`;
      if (column.field?.type === 'json' && !last) {
        // The remaining segments are a path inside the JSON value.
        const keys = segments.slice(i + 1);
        if (keys.some((k) => !JSON_KEY.test(k))) throw new FilterError(`invalid JSON path in ${JSON.stringify(path)}`, position);
        const jsonPath = '$' + keys.map((k) => (/^\d+$/.test(k) ? `[${k}]` : `."${k}"`)).join('');
        return this.finish(from, where, isSet, sql`json_extract(${columnRef}, ${jsonPath})`, 'json', modifier, position, path);
      }

      if (last) {
        if (modifier === 'length') {
          if (!column.multiple) throw new FilterError(`":length" needs a multiple-value field, ${JSON.stringify(segment)} is not`, position);
          return this.finish(from, where, isSet, sql`${raw(dialect.jsonArrayLength(columnRef.text))}`, 'number', undefined, position, path);
        }
        if (column.multiple) {
          const j = this.nextAlias('j');
          from.push(sql`${raw(dialect.jsonEach(columnRef.text, j))}`);
          const each = modifier === 'each';
          const operand = this.finish(from, where, true, sql`${raw(j)}.value`, column.valueType, modifier === 'lower' ? 'lower' : undefined, position, path);
          return each ? { ...operand, each: true } : operand;
        }
        if (modifier === 'each') throw new FilterError(`":each" needs a multiple-value field, ${JSON.stringify(segment)} is not`, position);
        return this.finish(from, where, isSet, columnRef, column.valueType, modifier, position, path);
      }

      if (column.field?.type !== 'relation') {
        throw new FilterError(`${JSON.stringify(segment)} is not a relation field, so ${JSON.stringify(path)} cannot be followed`, position);
      }
      if (++hops > MAX_RELATION_DEPTH) throw new FilterError(`relation path deeper than ${MAX_RELATION_DEPTH}`, position);
      const target = lookup(relationTarget(column.field));
      if (!target) throw new FilterError(`the collection related by ${JSON.stringify(segment)} no longer exists`, position);
      const r = this.nextAlias('r');
      if (column.multiple) {
        const j = this.nextAlias('j');
        from.push(sql`${raw(dialect.jsonEach(columnRef.text, j))}`);
        from.push(sql`${ident(target.name)} ${raw(r)}`);
        where.push(sql`${raw(r)}.id = ${raw(j)}.value`);
        isSet = true;
      } else {
        from.push(sql`${ident(target.name)} ${raw(r)}`);
        where.push(sql`${raw(r)}.id = ${columnRef}`);
      }
      current = target;
      ref = sql`${raw(r)}`;
    }
    throw new FilterError(`invalid field path ${JSON.stringify(path)}`, position);
  }

  private finish(
    from: Sql[],
    where: Sql[],
    isSet: boolean,
    value: Sql,
    valueType: ValueType,
    modifier: string | undefined,
    position: number,
    path: string,
  ): ResolvedOperand {
    if (modifier === 'each') throw new FilterError(`":each" needs a multiple-value field in ${JSON.stringify(path)}`, position);
    let v = value;
    if (modifier === 'lower') v = sql`LOWER(${v})`;
    if (from.length === 0) return { kind: 'scalar', sql: v, valueType };
    const whereSql = where.length > 0 ? sql` WHERE ${join(where, ' AND ')}` : sql``;
    const select = sql`SELECT ${v} AS v FROM ${join(from, ', ')}${whereSql}`;
    if (isSet) return { kind: 'set', sql: select, valueType };
    return { kind: 'scalar', sql: sql`(${select} LIMIT 1)`, valueType };
  }
}
