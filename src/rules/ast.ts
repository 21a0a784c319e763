/** The syntax tree of the PocketBase filter and rule language. */

export type ComparisonOperator =
  | '='
  | '!='
  | '>'
  | '>='
  | '<'
  | '<='
  | '~'
  | '!~'
  | '?='
  | '?!='
  | '?>'
  | '?>='
  | '?<'
  | '?<='
  | '?~'
  | '?!~';

export type Literal = { type: 'literal'; value: string | number | boolean | null; position: number };
export type Identifier = { type: 'identifier'; name: string; position: number };
export type Operand = Literal | Identifier;

export type Expr =
  | { type: 'and' | 'or'; left: Expr; right: Expr }
  | { type: 'comparison'; operator: ComparisonOperator; left: Operand; right: Operand; position: number };

export function isAnyOf(op: ComparisonOperator): boolean {
  return op.startsWith('?');
}

/** The plain operator behind an any-of operator (`?>=` → `>=`). */
export function baseOperator(op: ComparisonOperator): Exclude<ComparisonOperator, `?${string}`> {
  return (op.startsWith('?') ? op.slice(1) : op) as Exclude<ComparisonOperator, `?${string}`>;
}
