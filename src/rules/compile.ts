import { normalizeDate } from '../lib/time.ts';
import { type Sql, sql, raw } from '../storage/sql.ts';
import type { Dialect } from '../storage/types.ts';
import { baseOperator, type ComparisonOperator, type Expr, isAnyOf, type Literal, type Operand } from './ast.ts';
import { FilterError } from './errors.ts';

/** What a value is compared as; decides how literals on the other side are coerced. */
export type ValueType = 'text' | 'number' | 'bool' | 'date' | 'json';

/**
 * An operand after resolution. A `scalar` is one SQL value; a `set` is a subquery selecting the
 * column `v` (the elements of a multiple field, or the values reached through a multiple relation).
 */
export interface ResolvedOperand {
  kind: 'scalar' | 'set';
  sql: Sql;
  valueType?: ValueType;
  /** For sets: every element must match, even under an any-of operator (`:each`). */
  each?: boolean;
  /** Set for values known when compiling (literals, request data): their value. */
  constant?: { value: unknown };
}

/** Turns identifiers (fields, relation paths, `@request.*`, …) into SQL. Throws FilterError. */
export interface Resolver {
  resolve(name: string, position: number): ResolvedOperand;
}

export interface CompileOptions {
  dialect: Dialect;
  /** The time `@now` and the date macros refer to. */
  now?: Date;
}

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
    if (op.type !== 'identifier') return undefined;
    const macro = dateMacro(op.name, now);
    if (macro !== undefined) return constant(macro, typeof macro === 'number' ? 'number' : 'date');
    return resolver.resolve(op.name, op.position);
  }

  function comparison(operator: ComparisonOperator, leftOp: Operand, rightOp: Operand): Sql {
    const resolvedLeft = resolveIdentifier(leftOp);
    const resolvedRight = resolveIdentifier(rightOp);
    // A literal is coerced towards the type of what it is compared with.
    const left = resolvedLeft ?? constant(coerceLiteral(leftOp as Literal, resolvedRight?.valueType), undefined);
    const right = resolvedRight ?? constant(coerceLiteral(rightOp as Literal, resolvedLeft?.valueType), undefined);
    const base = baseOperator(operator);

    // `x = null` and `x = ""` both ask "is x empty", as in PocketBase.
    if ((base === '=' || base === '!=') && (isEmptyConstant(left) !== isEmptyConstant(right))) {
      const subject = isEmptyConstant(left) ? right : left;
      const empty = subject.kind === 'set' ? sql`NOT EXISTS (${subject.sql})` : sql`COALESCE(${subject.sql}, '') = ''`;
      return base === '=' ? empty : sql`NOT (${empty})`;
    }

    const rightValue = base === '~' || base === '!~' ? likePattern(right) : right;
    if (left.kind === 'scalar' && rightValue.kind === 'scalar') {
      return compare(base, left.sql, rightValue.sql);
    }

    const sources: Sql[] = [];
    const l = left.kind === 'set' ? (sources.push(sql`(${left.sql}) ${raw('sa')}`), sql`sa.v`) : left.sql;
    const r = rightValue.kind === 'set' ? (sources.push(sql`(${rightValue.sql}) ${raw('sb')}`), sql`sb.v`) : rightValue.sql;
    const from = sources.length === 2 ? sql`${sources[0]}, ${sources[1]}` : sources[0];
    const cond = compare(base, l, r);
    const every = left.each === true || rightValue.each === true || !isAnyOf(operator);
    if (!every) return sql`EXISTS (SELECT 1 FROM ${from} WHERE ${cond})`;
    // "All elements match" (PocketBase's default for multiple values): at least one element, and no
    // element for which the comparison fails.
    return sql`(EXISTS (SELECT 1 FROM ${from}) AND NOT EXISTS (SELECT 1 FROM ${from} WHERE NOT COALESCE(${cond}, FALSE)))`;
  }

  function compare(op: ReturnType<typeof baseOperator>, l: Sql, r: Sql): Sql {
    switch (op) {
      case '=':
        return sql`${l} IS ${r}`;
      case '!=':
        return sql`${l} IS NOT ${r}`;
      case '>':
        return sql`${l} > ${r}`;
      case '>=':
        return sql`${l} >= ${r}`;
      case '<':
        return sql`${l} < ${r}`;
      case '<=':
        return sql`${l} <= ${r}`;
      case '~':
      case '!~': {
        const likeSql = dialect.like('\u0000L', '\u0000R', op === '!~');
        const [before, middle, after] = splitTwice(likeSql, '\u0000L', '\u0000R');
        return sql`${raw(before)}${l}${raw(middle)}${r}${raw(after)}`;
      }
    }
  }

  return walk(expr);
}

function splitTwice(text: string, a: string, b: string): [string, string, string] {
  const i = text.indexOf(a);
  const j = text.indexOf(b);
  return [text.slice(0, i), text.slice(i + a.length, j), text.slice(j + b.length)];
}

function constant(value: unknown, valueType: ValueType | undefined): ResolvedOperand {
  return { kind: 'scalar', sql: sql`${value}`, valueType, constant: { value } };
}

function isEmptyConstant(op: ResolvedOperand): boolean {
  return op.constant !== undefined && (op.constant.value === null || op.constant.value === '');
}

/** `~` wraps a plain value in `%…%` (a contains-match); a value that already has `%` is used as the
 * pattern the caller wrote. */
function likePattern(op: ResolvedOperand): ResolvedOperand {
  if (op.constant !== undefined) {
    const text = op.constant.value === null ? '' : String(op.constant.value);
    const pattern = text.includes('%') ? text : `%${text.replace(/[\\%_]/g, (ch) => `\\${ch}`)}%`;
    return constant(pattern, 'text');
  }
  if (op.kind === 'set') return op;
  return { ...op, sql: sql`('%' || ${op.sql} || '%')` };
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
