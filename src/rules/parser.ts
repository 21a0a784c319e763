import type { Call, ComparisonOperator, Expr, Identifier, Literal, Operand } from './ast.ts';
import { FilterError } from './errors.ts';
import { type Token, tokenize } from './lexer.ts';

/** The language's functions and how many arguments each takes, at least and at most. */
const FUNCTIONS: Record<string, [number, number]> = { geoDistance: [4, 4], strftime: [1, 10] };

/** Longest filter or rule text accepted; longer input is refused before it is parsed. */
export const MAX_FILTER_LENGTH = 8192;
/** Deepest parenthesis nesting accepted, which also bounds recursion in the compiler. */
export const MAX_DEPTH = 32;
/** Most comparisons in one expression, which bounds the size of the generated SQL. */
export const MAX_COMPARISONS = 200;

/**
 * Parses filter or rule text into an expression tree. `&&` binds tighter than `||`; both are
 * left-associative; parentheses group. Throws FilterError with the position of the problem.
 */
export function parseFilter(text: string): Expr {
  if (text.length > MAX_FILTER_LENGTH) throw new FilterError(`expression longer than ${MAX_FILTER_LENGTH} characters`, MAX_FILTER_LENGTH);
  const tokens = tokenize(text);
  let pos = 0;
  let comparisons = 0;

  const peek = (): Token => tokens[pos];
  const next = (): Token => tokens[pos++];

  function describe(t: Token): string {
    return t.type === 'eof' ? 'end of expression' : JSON.stringify(t.value);
  }

  function parseOr(depth: number): Expr {
    let left = parseAnd(depth);
    while (peek().type === 'or') {
      next();
      left = { type: 'or', left, right: parseAnd(depth) };
    }
    return left;
  }

  function parseAnd(depth: number): Expr {
    let left = parseTerm(depth);
    while (peek().type === 'and') {
      next();
      left = { type: 'and', left, right: parseTerm(depth) };
    }
    return left;
  }

  function parseTerm(depth: number): Expr {
    const t = peek();
    if (t.type === 'lparen') {
      if (depth >= MAX_DEPTH) throw new FilterError(`parentheses nested deeper than ${MAX_DEPTH}`, t.position);
      next();
      const inner = parseOr(depth + 1);
      const close = next();
      if (close.type !== 'rparen') throw new FilterError(`expected ")" but found ${describe(close)}`, close.position);
      return inner;
    }
    return parseComparison();
  }

  function parseOperand(): Operand {
    const t = next();
    switch (t.type) {
      case 'string':
        return { type: 'literal', value: t.value, position: t.position };
      case 'number':
        return { type: 'literal', value: Number(t.value), position: t.position };
      case 'identifier': {
        if (peek().type === 'lparen') return parseCall(t);
        // Any letter case, as PocketBase reads them (`True`, `NULL`).
        const word = t.value.toLowerCase();
        if (word === 'true' || word === 'false') return { type: 'literal', value: word === 'true', position: t.position };
        if (word === 'null') return { type: 'literal', value: null, position: t.position };
        return { type: 'identifier', name: t.value, position: t.position };
      }
      default:
        throw new FilterError(`expected a field, a value or "(" but found ${describe(t)}`, t.position);
    }
  }

  /** `name(arg, …)`: a function of FUNCTIONS, its arguments fields or values (no nested calls). */
  function parseCall(name: Token): Call {
    const arity = FUNCTIONS[name.value] as [number, number] | undefined;
    if (arity === undefined) throw new FilterError(`unknown function ${JSON.stringify(name.value)}; known: ${Object.keys(FUNCTIONS).join(', ')}`, name.position);
    next();
    const args: Operand[] = [];
    if (peek().type !== 'rparen') {
      for (;;) {
        const arg = peek();
        if (arg.type !== 'string' && arg.type !== 'number' && arg.type !== 'identifier') throw new FilterError(`expected a field or a value as an argument of ${name.value} but found ${describe(arg)}`, arg.position);
        const operand = parseOperand();
        if (operand.type === 'call') throw new FilterError(`${name.value} takes fields and values, not functions`, operand.position);
        args.push(operand);
        if (peek().type !== 'comma') break;
        next();
      }
    }
    const close = next();
    if (close.type !== 'rparen') throw new FilterError(`expected "," or ")" but found ${describe(close)}`, close.position);
    const [least, most] = arity;
    if (args.length < least || args.length > most) {
      throw new FilterError(`${name.value} takes ${least === most ? least : `${least} to ${most}`} arguments, got ${args.length}`, name.position);
    }
    return { type: 'call', name: name.value, args, position: name.position };
  }

  function parseComparison(): Expr {
    const left = parseOperand();
    const op = next();
    if (op.type !== 'operator') throw new FilterError(`expected an operator after the operand but found ${describe(op)}`, op.position);
    const right = parseOperand();
    if (++comparisons > MAX_COMPARISONS) throw new FilterError(`more than ${MAX_COMPARISONS} comparisons`, op.position);
    return { type: 'comparison', operator: op.value as ComparisonOperator, left, right, position: left.position };
  }

  if (peek().type === 'eof') throw new FilterError('empty expression', 0);
  const expr = parseOr(0);
  const rest = peek();
  if (rest.type !== 'eof') throw new FilterError(`unexpected ${describe(rest)}`, rest.position);
  return desugarChanged(expr);
}

const CHANGED = /^@request\.(?:body|data)\.([A-Za-z0-9_]+):changed$/;

/**
 * PocketBase ≥ 0.23's `:changed` modifier, written in terms of the rest of the language as PocketBase
 * defines it: `@request.body.f:changed = true` holds when the request sends `f` with a value other
 * than the record's, i.e. `(@request.body.f:isset = true && @request.body.f != f)`; `= false` is its
 * negation. Only `=` and `!=` against `true` or `false` mean something.
 */
function desugarChanged(expr: Expr): Expr {
  if (expr.type !== 'comparison') {
    const left = desugarChanged(expr.left);
    const right = desugarChanged(expr.right);
    return left === expr.left && right === expr.right ? expr : { ...expr, left, right };
  }
  const changedSide = [expr.left, expr.right].find((op): op is Identifier => op.type === 'identifier' && op.name.endsWith(':changed'));
  if (!changedSide) return expr;
  const name = changedSide.name;
  const m = CHANGED.exec(name);
  if (!m) throw new FilterError(`":changed" applies to @request.body.<field> only, not ${JSON.stringify(name)}`, changedSide.position);
  const other = changedSide === expr.left ? expr.right : expr.left;
  const truth = other.type === 'literal' && typeof other.value === 'boolean' ? other.value : other.type === 'literal' && (other.value === 'true' || other.value === 'false') ? other.value === 'true' : undefined;
  if (truth === undefined || (expr.operator !== '=' && expr.operator !== '!=')) {
    throw new FilterError(`${JSON.stringify(name)} is compared with "= true", "= false", "!= true" or "!= false"`, expr.position);
  }
  const changed = expr.operator === '=' ? truth : !truth;
  const position = expr.position;
  const body: Identifier = { type: 'identifier', name: `@request.body.${m[1]}`, position };
  const isset: Identifier = { type: 'identifier', name: `@request.body.${m[1]}:isset`, position };
  const field: Identifier = { type: 'identifier', name: m[1], position };
  const bool = (value: boolean): Literal => ({ type: 'literal', value, position });
  return changed
    ? { type: 'and', left: { type: 'comparison', operator: '=', left: isset, right: bool(true), position }, right: { type: 'comparison', operator: '!=', left: body, right: field, position } }
    : { type: 'or', left: { type: 'comparison', operator: '=', left: isset, right: bool(false), position }, right: { type: 'comparison', operator: '=', left: body, right: field, position } };
}
