import type { RecordAuth } from '../context.ts';
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

/** An operand's text on the caller's own record (none is ever empty), or undefined for any other operand. */
function valueOf(operand: Operand, caller: RecordAuth): string | undefined {
  if (operand.type === 'literal') return typeof operand.value === 'string' && operand.value !== '' ? operand.value : undefined;
  switch (operand.name) {
    case 'id':
    case '@request.auth.id':
      return caller.id;
    case '@request.auth.collectionName':
      return caller.collectionName;
    case '@request.auth.collectionId':
      return caller.collectionId;
    default:
      return undefined;
  }
}
