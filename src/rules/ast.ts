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
/** A function of the language (PocketBase's `geoDistance(lonA, latA, lonB, latB)`). */
export type Call = { type: 'call'; name: string; args: Operand[]; position: number };
export type Operand = Literal | Identifier | Call;

/** The names an operand reads: itself, or a function's arguments'. */
export function identifiersOf(op: Operand): Identifier[] {
  if (op.type === 'identifier') return [op];
  return op.type === 'call' ? op.args.flatMap(identifiersOf) : [];
}

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
