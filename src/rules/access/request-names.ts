import type { PathStart, RecordFieldResolver } from '../../records/resolver.ts';
import { ident, raw, type Sql, sql } from '../../storage/sql.ts';
import type { ResolvedOperand, Resolver } from '../compile.ts';
import { Deferred } from '../deferred.ts';
import { FilterError } from '../errors.ts';
import { type NameScope, parseRequestRef, type RequestRef } from './request-ref.ts';
import type { RequestValue } from './request-values.ts';

const COLLECTION_NAME = /^@collection\.([A-Za-z][A-Za-z0-9_]*)(?::([A-Za-z0-9_]+))?\.(.+)$/;

/**
 * Supplies the value of a request name and the index its parameter is read from at bind time.
 * Cached rules number names in a fixed order; one-off filters number them as they come.
 */
export type RequestValueSource = (ref: RequestRef) => { index: number; value: RequestValue };

/**
 * Resolves the names starting with `@`: `@request.*` into parameters (deferred ones when the SQL is
 * cached, so request values are bound per request and never become SQL text) and `@collection.*`
 * into a joined row of another collection (with `:alias` for several independent rows).
 */
export class SpecialNames implements Resolver {
  constructor(
    private readonly fields: RecordFieldResolver,
    private readonly scope: NameScope,
    private readonly source: RequestValueSource,
    /** Deferred parameters (cached SQL) or the values themselves (SQL used once). */
    private readonly deferred: boolean,
  ) {}

  resolve(name: string, position: number): ResolvedOperand {
    if (name.startsWith('@collection.')) return this.collection(name, position);
    if (name.startsWith('@request.') || name === '@request') {
      const ref = parseRequestRef(name, position, this.scope);
      const { index, value } = this.source(ref);
      return this.requestOperand(ref, index, value, position);
    }
    throw new FilterError(`unknown identifier ${JSON.stringify(name)}`, position);
  }

  private param(index: number, value: unknown, transform: (v: unknown) => unknown = (v) => v): unknown {
    return this.deferred ? new Deferred((env) => env.values[index]).map(transform) : transform(value);
  }

  private requestOperand(ref: RequestRef, index: number, v: RequestValue, position: number): ResolvedOperand {
    const { dialect } = this.fields;
    switch (v.kind) {
      case 'scalar': {
        const p = this.param(index, v.value);
        return { kind: 'scalar', sql: sql`${p}`, valueType: v.valueType, constant: { value: v.value, param: p instanceof Deferred ? p : undefined } };
      }
      case 'set': {
        const a = this.fields.aliasFor(`${ref.name}#set`, 'q');
        const p = this.param(index, v.value, (x) => JSON.stringify(x ?? []));
        const set = sql`SELECT ${raw(a)}.value AS v FROM (SELECT ${p} AS x) ${raw(`${a}x`)}, ${raw(dialect.jsonEach(`${a}x.x`, a))}`;
        return { kind: 'set', sql: set, valueType: v.valueType, each: v.each };
      }
      case 'relation': {
        const key = ref.name.split(':')[0].split('.').slice(0, 3).join('.');
        const r = this.fields.aliasFor(key, 'r');
        let on: Sql;
        if (v.multiple) {
          const p = this.param(index, v.ids, (x) => JSON.stringify(x ?? []));
          on = sql`${raw(r)}.id IN (SELECT ${raw(`${r}i`)}.value FROM (SELECT ${p} AS x) ${raw(`${r}x`)}, ${raw(dialect.jsonEach(`${r}x.x`, `${r}i`))})`;
        } else {
          on = sql`${raw(r)}.id = ${this.param(index, v.ids[0] ?? null)}`;
        }
        const start: PathStart = {
          collection: v.target,
          ref: sql`${raw(r)}`,
          hops: [{ key, from: sql`${ident(v.target.name)} ${raw(r)}`, on, many: v.multiple }],
          key,
        };
        const rest = ref.rest.join('.') + (ref.modifier ? `:${ref.modifier}` : '');
        return this.fields.resolvePath(start, rest, position);
      }
    }
  }

  private collection(name: string, position: number): ResolvedOperand {
    const m = COLLECTION_NAME.exec(name);
    if (!m) throw new FilterError(`invalid name ${JSON.stringify(name)}; use @collection.<collection>.<field>`, position);
    const target = this.fields.lookup(m[1]);
    if (!target) throw new FilterError(`unknown collection ${JSON.stringify(m[1])} in ${JSON.stringify(name)}`, position);
    // Names with the same collection and alias share one joined row, as in PocketBase.
    const key = `@collection.${target.name.toLowerCase()}:${m[2] ?? ''}`;
    const c = this.fields.aliasFor(key, 'c');
    const start: PathStart = {
      collection: target,
      ref: sql`${raw(c)}`,
      hops: [{ key, from: sql`${ident(target.name)} ${raw(c)}`, many: true }],
      key,
    };
    return this.fields.resolvePath(start, m[3], position);
  }
}

/** For callers who may not use `@request`/`@collection` in their own filters (PocketBase: 403). */
export class RefusedSpecialNames implements Resolver {
  constructor(private readonly refuse: () => Error) {}

  resolve(name: string, position: number): ResolvedOperand {
    if (name.startsWith('@request') || name.startsWith('@collection')) throw this.refuse();
    throw new FilterError(`unknown identifier ${JSON.stringify(name)}`, position);
  }
}
