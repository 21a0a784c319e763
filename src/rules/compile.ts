import { normalizeDate } from '../lib/time.ts';
import { join, raw, type Sql, sql } from '../storage/sql.ts';
import type { CompareKind, Dialect } from '../storage/types.ts';
import { baseOperator, type Call, type ComparisonOperator, type Expr, isAnyOf, type Literal, type Operand } from './ast.ts';
import { Deferred } from './deferred.ts';
import { FilterError } from './errors.ts';

/** What a value is compared as; decides how literals on the other side are coerced. */
export type ValueType = 'text' | 'number' | 'bool' | 'date' | 'json';

/**
 * An operand after resolution. A `scalar` is one SQL value; a `set` is a subquery selecting the
 * column `v` (elements of a request array, or of a multiple field under `:each`).
 */
export interface ResolvedOperand {
  kind: 'scalar' | 'set';
  sql: Sql;
  valueType?: ValueType;
  /** Whether the value can be NULL (a path through a relation, a JSON value): sorts say where NULLs go. */
  nullable?: boolean;
  /** A set named with `:each` (a multiple field or a request list). It is quantified as any other
   * set: PocketBase 0.39 answers `type:each ?!= 'c'` with the records where one value is not "c"
   * and `type:each != 'c'` with those where none is (measured on its binary, issue 48). */
  each?: boolean;
  /**
   * For a scalar read from a joined row (a path through a multiple relation, `@collection.*`): a
   * subquery of the values of all such rows. Under the plain operators every one of them must match
   * too (PocketBase's multi-match); the any-of operators need one matching row.
   */
  every?: Sql;
  /**
   * For a scalar read through single relations (`author.organization.name`): the rows it is read
   * from (`FROM … WHERE …`, at most one row) and the value in them. A comparison with a known value
   * then becomes `EXISTS (… AND value = ?)`, a semi-join the database plans once for the whole list,
   * where a scalar subquery is run again for every row (issue 48: 280 ms a list on PostgreSQL).
   */
  through?: { rows: Sql; value: Sql };
  /** Set for values known when compiling (literals, request data): the value, and the deferred
   * parameter that carries it when the SQL is cached and bound per request. */
  constant?: { value: unknown; param?: Deferred };
}

/** Turns identifiers (fields, relation paths, `@request.*`, …) into SQL. Throws FilterError. */
export interface Resolver {
  resolve(name: string, position: number): ResolvedOperand;
  /** Called once with the compiled condition: wraps it in the joins the resolved names need. */
  wrap?(condition: Sql): Sql;
}

export interface CompileOptions {
  dialect: Dialect;
  /** The time `@now` and the date macros refer to. */
  now?: Date;
  /** Date macros become deferred parameters (see deferred.ts), for SQL that is cached. */
  deferMacros?: boolean;
}

type Condition = (left: Sql, right: Sql) => Sql;

const ALWAYS = sql`(1 = 1)`;
const NEVER = sql`(1 = 0)`;

/** Compiles a parsed expression to a parameterized SQL condition. */
export function compileExpr(expr: Expr, resolver: Resolver, options: CompileOptions): Sql {
  const now = options.now ?? new Date();
  const { dialect } = options;

  function walk(e: Expr): Sql {
    if (e.type === 'comparison') return comparison(e.operator, e.left, e.right);
    const left = walk(e.left);
    const right = walk(e.right);
    return e.type === 'and' ? sql`(${left} AND ${right})` : sql`(${left} OR ${right})`;
  }

  function resolveIdentifier(op: Operand): ResolvedOperand | undefined {
    if (op.type === 'call') return call(op);
    if (op.type !== 'identifier') return undefined;
    const macro = dateMacro(op.name, now);
    if (macro !== undefined) {
      const valueType = typeof macro === 'number' ? 'number' : 'date';
      if (!options.deferMacros) return constant(macro, valueType);
      const name = op.name;
      const param = new Deferred((env) => dateMacro(name, env.now));
      return { kind: 'scalar', sql: sql`${param}`, valueType, constant: { value: macro, param } };
    }
    return resolver.resolve(op.name, op.position);
  }

  function call(op: Call): ResolvedOperand {
    return op.name === 'strftime' ? strftime(op) : geoDistance(op);
  }

  /**
   * PocketBase's `strftime(format, time, modifier…)` (≥ 0.36): SQLite's date formatting, a NULL read
   * as ''. The format and the modifiers are quoted strings; the time a date, a number or a field, and
   * a field of several values (a multiple relation's path) is matched value by value as the field
   * itself would be (`strftime('%Y', rel.created) ?= '2026'`).
   */
  function strftime(op: Call): ResolvedOperand {
    const [format, time, ...modifiers] = op.args;
    const quoted = (arg: Operand, what: string): string => {
      if (arg.type !== 'literal' || typeof arg.value !== 'string') throw new FilterError(`strftime takes a quoted string as its ${what}`, arg.position);
      return arg.value;
    };
    const pattern = quoted(format, 'format');
    const steps = modifiers.map((m) => quoted(m, 'modifier'));
    const formatted = (value: Sql | undefined): Sql => {
      const out = dialect.strftime(pattern, value, steps);
      if ('unsupported' in out) throw new FilterError(`strftime's modifier ${JSON.stringify(out.unsupported)} is not supported on ${dialect.name === 'postgres' ? 'PostgreSQL' : dialect.name}`, op.position);
      return out;
    };
    if (time === undefined) return { kind: 'scalar', sql: formatted(undefined), valueType: 'text' };
    if (time.type === 'literal') {
      if (typeof time.value !== 'string' && typeof time.value !== 'number') throw new FilterError('strftime takes a date, a number or a field as its time value', time.position);
      return { kind: 'scalar', sql: formatted(dialect.asText(sql`${String(time.value)}`)), valueType: 'text' };
    }
    const resolved = resolveIdentifier(time)!;
    const each = (v: Sql) => formatted(dialect.asText(v));
    const overSet = (set: Sql) => sql`SELECT ${each(sql`fm.v`)} AS v FROM (${set}) AS fm`;
    if (resolved.kind === 'set') return { kind: 'set', sql: overSet(resolved.sql), valueType: 'text', each: resolved.each };
    return {
      kind: 'scalar',
      sql: each(resolved.sql),
      valueType: 'text',
      every: resolved.every && overSet(resolved.every),
      through: resolved.through && { rows: resolved.through.rows, value: each(resolved.through.value) },
    };
  }

  /**
   * PocketBase's `geoDistance(lonA, latA, lonB, latB)`: the haversine distance in kilometres between
   * two points, each coordinate a number or a field (a geoPoint's `.lon`/`.lat`, a number field, a
   * path through single relations). The cosine is held to [-1, 1] first: a point's distance to itself
   * can round just past 1, where PostgreSQL's acos fails the query and SQLite's gives NULL.
   */
  function geoDistance(op: Call): ResolvedOperand {
    const [lonA, latA, lonB, latB] = op.args.map((arg) => {
      if (arg.type === 'literal') {
        if (typeof arg.value !== 'number') throw new FilterError(`${op.name} takes numbers and fields, not ${JSON.stringify(arg.value)}`, arg.position);
        return sql`${arg.value}`;
      }
      const resolved = resolveIdentifier(arg)!;
      if (resolved.kind !== 'scalar') throw new FilterError(`${op.name} takes single values: ${JSON.stringify((arg as { name: string }).name)} has several`, arg.position);
      return dialect.comparable('number', kindOf(resolved)).left(resolved.sql);
    });
    const rad = (v: Sql) => sql`RADIANS(${v})`;
    const cosine = sql`(COS(${rad(latA)}) * COS(${rad(latB)}) * COS(${rad(lonB)} - ${rad(lonA)}) + SIN(${rad(latA)}) * SIN(${rad(latB)}))`;
    const clamped = sql`(CASE WHEN ${cosine} > 1 THEN 1 WHEN ${cosine} < -1 THEN -1 ELSE ${cosine} END)`;
    return { kind: 'scalar', sql: sql`(6371 * ACOS(${clamped}))`, valueType: 'number', nullable: true };
  }

  function comparison(operator: ComparisonOperator, leftOp: Operand, rightOp: Operand): Sql {
    const resolvedLeft = resolveIdentifier(leftOp);
    const resolvedRight = resolveIdentifier(rightOp);
    // A literal is coerced towards the type of what it is compared with.
    const left = resolvedLeft ?? constant(coerceLiteral(leftOp as Literal, resolvedRight?.valueType), undefined);
    const right = resolvedRight ?? constant(coerceLiteral(rightOp as Literal, resolvedLeft?.valueType), undefined);
    const base = baseOperator(operator);
    const anyOf = isAnyOf(operator);

    if (base === '=' || base === '!=') {
      const equal = base === '=';
      const leftEmpty = isEmptyConstant(left);
      const rightEmpty = isEmptyConstant(right);
      // `x = null` and `x = ""` both ask "is x empty", as in PocketBase.
      if (leftEmpty && rightEmpty) return equal ? ALWAYS : NEVER;
      if (leftEmpty || rightEmpty) {
        const subject = leftEmpty ? right : left;
        if (subject.kind === 'set') return equal ? sql`NOT EXISTS (${subject.sql})` : sql`EXISTS (${subject.sql})`;
        const isEmpty = (v: Sql) => dialect.isEmpty(v, !equal);
        return assemble(left, right, (l, r) => isEmpty(leftEmpty ? r : l), anyOf);
      }
      const as = dialect.comparable(kindOf(left), kindOf(right));
      // A known non-empty value compares directly (and can use an index); two unknowns compare as
      // PocketBase does, with NULL and '' equal.
      const known = left.constant !== undefined || right.constant !== undefined;
      let cond: Condition;
      if (known) {
        // `path != x` is true where the related row is missing, so it is the negation of `path = x`.
        const semi = semiJoin(left, right, (l, r) => sql`${as.left(l)} = ${as.right(r)}`);
        if (semi) return equal ? semi : sql`NOT ${semi}`;
      }
      if (known) cond = (l, r) => (equal ? sql`${as.left(l)} = ${as.right(r)}` : dialect.distinct(as.left(l), as.right(r)));
      else if (as.textual) {
        cond = (l, r) => {
          const [a, b] = [sql`COALESCE(${as.left(l)}, '')`, sql`COALESCE(${as.right(r)}, '')`];
          return equal ? sql`${a} = ${b}` : dialect.distinct(a, b);
        };
      } else cond = (l, r) => (equal ? sql`NOT (${dialect.distinct(as.left(l), as.right(r))})` : dialect.distinct(as.left(l), as.right(r)));
      return assemble(left, right, cond, anyOf);
    }
    if (base === '~' || base === '!~') {
      const likeSql = dialect.like('\u0000L', '\u0000R', base === '!~');
      const [before, middle, after] = splitTwice(likeSql, '\u0000L', '\u0000R');
      const like: Condition = (l, r) => sql`${raw(before)}${l}${raw(middle)}${r}${raw(after)}`;
      if (base === '~') {
        const semi = semiJoin(left, likePattern(right, dialect), like);
        if (semi) return semi;
      }
      return assemble(left, likePattern(right, dialect), (l, r) => sql`${raw(before)}${l}${raw(middle)}${r}${raw(after)}`, anyOf);
    }
    const as = dialect.comparable(kindOf(left), kindOf(right));
    const ordered: Condition = (l, r) => sql`${as.left(l)} ${raw(base)} ${as.right(r)}`;
    return semiJoin(left, right, ordered) ?? assemble(left, right, ordered, anyOf);
  }

  return resolver.wrap ? resolver.wrap(walk(expr)) : walk(expr);
}

/**
 * `cond` as a semi-join, `EXISTS (SELECT 1 FROM … WHERE … AND cond)`, when one operand is read through
 * single relations and the other is a known non-empty value. Only for conditions a missing row (a
 * NULL) never meets, so the EXISTS is exactly the scalar comparison; undefined otherwise.
 */
function semiJoin(left: ResolvedOperand, right: ResolvedOperand, cond: Condition): Sql | undefined {
  const known = (op: ResolvedOperand) => op.kind === 'scalar' && op.every === undefined && op.through === undefined && op.constant !== undefined && !isEmptyConstant(op);
  if (left.through && known(right)) return sql`EXISTS (SELECT 1 ${left.through.rows} AND ${cond(left.through.value, right.sql)})`;
  if (right.through && known(left)) return sql`EXISTS (SELECT 1 ${right.through.rows} AND ${cond(left.sql, right.through.value)})`;
  return undefined;
}

/**
 * Applies `cond` to two operands. Sets are quantified: any element under an any-of operator, else
 * every element (and at least one). Joined values (`every`) under a plain operator must also hold
 * for every joined row.
 */
function assemble(left: ResolvedOperand, right: ResolvedOperand, cond: Condition, anyOf: boolean): Sql {
  // Under an any-of operator PocketBase reads an empty `:each` list as one NULL value (`type:each ?!=
  // 'c'` holds for a record without types); the plain operators keep needing a value.
  const main = sources(left, right, false, anyOf);
  let out: Sql;
  if (main.from.length === 0) out = cond(main.l, main.r);
  else {
    const from = join(main.from, ', ');
    const c = cond(main.l, main.r);
    out = anyOf
      ? sql`EXISTS (SELECT 1 FROM ${from} WHERE ${c})`
      : sql`(EXISTS (SELECT 1 FROM ${from}) AND NOT EXISTS (SELECT 1 FROM ${from} WHERE NOT COALESCE(${c}, FALSE)))`;
  }
  if (anyOf || (left.every === undefined && right.every === undefined)) return out;
  const all = sources(left, right, true);
  return sql`(${out} AND NOT EXISTS (SELECT 1 FROM ${join(all.from, ', ')} WHERE NOT COALESCE(${cond(all.l, all.r)}, FALSE)))`;
}

function sources(left: ResolvedOperand, right: ResolvedOperand, useEvery: boolean, emptyEachAsNull = false): { from: Sql[]; l: Sql; r: Sql } {
  const from: Sql[] = [];
  const pick = (op: ResolvedOperand, alias: string): Sql => {
    const set = useEvery && op.every !== undefined ? op.every : op.kind === 'set' ? op.sql : undefined;
    if (set === undefined) return op.sql;
    if (emptyEachAsNull && op.each && set === op.sql) from.push(sql`(SELECT 1 AS one) ${raw(`${alias}0`)} LEFT JOIN (${set}) ${raw(alias)} ON TRUE`);
    else from.push(sql`(${set}) ${raw(alias)}`);
    return sql`${raw(alias)}.v`;
  };
  return { l: pick(left, 'sa'), r: pick(right, 'sb'), from };
}

function splitTwice(text: string, a: string, b: string): [string, string, string] {
  const i = text.indexOf(a);
  const j = text.indexOf(b);
  return [text.slice(0, i), text.slice(i + a.length, j), text.slice(j + b.length)];
}

function constant(value: unknown, valueType: ValueType | undefined): ResolvedOperand {
  return { kind: 'scalar', sql: sql`${value}`, valueType, constant: { value } };
}

/** What an operand is compared as: its value type, or for a constant without one its JavaScript type. */
function kindOf(op: ResolvedOperand): CompareKind | null | undefined {
  if (op.valueType !== undefined) return op.valueType;
  if (op.constant === undefined) return undefined;
  const v = op.constant.value;
  if (v === null || v === undefined) return null;
  return typeof v === 'number' ? 'number' : typeof v === 'boolean' ? 'bool' : 'text';
}

function isEmptyConstant(op: ResolvedOperand): boolean {
  return op.constant !== undefined && (op.constant.value === null || op.constant.value === undefined || op.constant.value === '');
}

/** `~` wraps a plain value in `%…%` (a contains-match); a value that already has `%` is used as the
 * pattern the caller wrote. */
function likeText(value: unknown): string {
  const text = value === null || value === undefined ? '' : String(value);
  return text.includes('%') ? text : `%${text.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
}

function likePattern(op: ResolvedOperand, dialect: Dialect): ResolvedOperand {
  if (op.constant !== undefined) {
    const value = likeText(op.constant.value);
    const param = op.constant.param?.map(likeText);
    return { kind: 'scalar', sql: sql`${param ?? value}`, valueType: 'text', constant: { value, param } };
  }
  const wrapSet = (s: Sql) => sql`SELECT ('%' || ${dialect.asText(sql`v`)} || '%') AS v FROM (${s}) AS ${raw('lp')}`;
  if (op.kind === 'set') return { ...op, valueType: 'text', sql: wrapSet(op.sql) };
  return { ...op, valueType: 'text', sql: sql`('%' || ${dialect.asText(op.sql)} || '%')`, every: op.every && wrapSet(op.every) };
}

function coerceLiteral(lit: Literal, hint: ValueType | undefined): unknown {
  const v = lit.value;
  if (v === null) return null;
  switch (hint) {
    case 'number':
      if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
      if (typeof v === 'boolean') return v ? 1 : 0;
      return v;
    case 'bool':
      if (v === 'true' || v === true) return true;
      if (v === 'false' || v === false) return false;
      return v;
    case 'date':
      return typeof v === 'string' ? (normalizeDate(v) ?? v) : v;
    default:
      return v;
  }
}

const DAY_MS = 86_400_000;

/** PocketBase's datetime macros, evaluated in UTC. */
export function dateMacro(name: string, now: Date): string | number | undefined {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  const d = now.getUTCDate();
  const iso = (ms: number) => new Date(ms).toISOString();
  switch (name) {
    case '@now':
      return now.toISOString();
    case '@second':
      return now.getUTCSeconds();
    case '@minute':
      return now.getUTCMinutes();
    case '@hour':
      return now.getUTCHours();
    case '@weekday':
      return now.getUTCDay();
    case '@day':
      return d;
    case '@month':
      return m + 1;
    case '@year':
      return y;
    case '@todayStart':
      return iso(Date.UTC(y, m, d));
    case '@todayEnd':
      return iso(Date.UTC(y, m, d) + DAY_MS - 1);
    case '@monthStart':
      return iso(Date.UTC(y, m, 1));
    case '@monthEnd':
      return iso(Date.UTC(y, m + 1, 1) - 1);
    case '@yearStart':
      return iso(Date.UTC(y, 0, 1));
    case '@yearEnd':
      return iso(Date.UTC(y + 1, 0, 1) - 1);
    default:
      return undefined;
  }
}

export { FilterError };
