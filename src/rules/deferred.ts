import { Sql } from '../storage/sql.ts';

/** What deferred parameters are read from when a cached query is bound to one request. */
export interface BindEnv {
  /** The time `@now` and the date macros refer to. */
  now: Date;
  /** Request values, by the index the compiling resolver gave them. */
  values: readonly unknown[];
}

/**
 * A parameter whose value is known only when the query runs (request data, the time). Compiled
 * rules are cached with these in their parameter list; `bindSql` replaces them per request, so the
 * SQL text is shared while the values never become part of it.
 */
export class Deferred {
  constructor(private readonly read: (env: BindEnv) => unknown) {}

  valueIn(env: BindEnv): unknown {
    return this.read(env);
  }

  /** The same source with a transformation applied to its value (a LIKE pattern, JSON encoding). */
  map(transform: (value: unknown) => unknown): Deferred {
    return new Deferred((env) => transform(this.read(env)));
  }
}

export function hasDeferred(q: Sql): boolean {
  return q.params.some((p) => p instanceof Deferred);
}

/** The query with every deferred parameter replaced by its value for `env`. */
export function bindSql(q: Sql, env: BindEnv): Sql {
  if (!hasDeferred(q)) return q;
  return new Sql(
    q.text,
    q.params.map((p) => (p instanceof Deferred ? p.valueIn(env) : p)),
  );
}
