import type { Sql } from '../storage/sql.ts';
import type { Expr } from './ast.ts';
import { type CompileOptions, compileExpr, type Resolver } from './compile.ts';
import { parseFilter } from './parser.ts';

export { FilterError } from './errors.ts';
export { parseFilter } from './parser.ts';
export { compileExpr, type Resolver, type ResolvedOperand, type ValueType } from './compile.ts';
export { compileSort } from './sort.ts';

const PARSE_CACHE_LIMIT = 2000;
const parsed = new Map<string, Expr>();

/** Parses with a cache: the same filter and rule texts come back on every request. */
export function parseCached(text: string): Expr {
  let expr = parsed.get(text);
  if (expr === undefined) {
    expr = parseFilter(text);
    if (parsed.size >= PARSE_CACHE_LIMIT) parsed.clear();
    parsed.set(text, expr);
  }
  return expr;
}

/** Parses and compiles filter or rule text into a SQL condition. */
export function compileFilter(text: string, resolver: Resolver, options: CompileOptions): Sql {
  return compileExpr(parseCached(text), resolver, options);
}
