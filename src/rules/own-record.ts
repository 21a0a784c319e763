import type { RecordAuth } from '../context.ts';
import { authValue } from './access/request-values.ts';
import type { Expr, Operand } from './ast.ts';

/**
 * Whether a rule surely holds for a record caller on its own record (the record whose id is the
 * caller's, in the caller's collection), decided from the caller alone. Only `=` between the record's
 * id, the caller's id, collection name or id and non-empty text, joined by `&&` and `||`, is decided:
 * texts equal as they are are equal for the rule's SQL too, whatever its collation, so `true` is never
 * wrong; `false` means "not decided here" (read the record under the rule). PocketBase's and Cairn's
 * default rule for users, `id = @request.auth.id` (with `&& @request.auth.collectionName = "users"`),
 * is decided, so a view of one's own account needs no second read.
 */
export function holdsOnOwnRecord(expr: Expr, caller: RecordAuth): boolean {
  if (expr.type !== 'comparison') {
    const [left, right] = [holdsOnOwnRecord(expr.left, caller), holdsOnOwnRecord(expr.right, caller)];
    return expr.type === 'and' ? left && right : left || right;
  }
  if (expr.operator !== '=') return false;
  const left = valueOf(expr.left, caller);
  return left !== undefined && left === valueOf(expr.right, caller);
}

const AUTH = '@request.auth.';
/** The caller's own values a rule may compare with the record's id: `@request.auth.<key>` (authValue). */
const CALLER_KEYS = new Set(['id', 'collectionName', 'collectionId']);

/** An operand's text on the caller's own record (none is ever empty), or undefined for any other operand. */
function valueOf(operand: Operand, caller: RecordAuth): string | undefined {
  if (operand.type === 'literal') return typeof operand.value === 'string' && operand.value !== '' ? operand.value : undefined;
  if (operand.type === 'call') return undefined;
  if (operand.name === 'id') return caller.id;
  const key = operand.name.startsWith(AUTH) ? operand.name.slice(AUTH.length) : '';
  return CALLER_KEYS.has(key) ? (authValue(caller, key) as string) : undefined;
}
