import type { Expr, Operand } from './ast.ts';
import { parseCached } from './index.ts';

const FIELD = /^[A-Za-z][A-Za-z0-9_]*$/;

function fieldOf(op: Operand): string | undefined {
  if (op.type !== 'identifier') return undefined;
  // `author.id` on a single relation is `author` (the rule compiler reads it from the column): kept
  // with its `.id` so the caller, which knows the field types, takes it only for a relation.
  return FIELD.test(op.name.endsWith('.id') ? op.name.slice(0, -3) : op.name) ? op.name : undefined;
}

function isCallerId(op: Operand): boolean {
  return op.type === 'identifier' && op.name === '@request.auth.id';
}

/**
 * The fields a rule compares with the caller's id (`author = @request.auth.id`, or `author.id = …`,
 * returned as written): owner fields, which
 * every list and view under the rule filters on, so they are worth an index. Rules that do not parse
 * have none.
 */
export function ownerFields(rule: string | null | undefined): string[] {
  if (typeof rule !== 'string' || rule.trim() === '') return [];
  let expr: Expr;
  try {
    expr = parseCached(rule);
  } catch {
    return [];
  }
  const out = new Set<string>();
  const walk = (e: Expr): void => {
    if (e.type !== 'comparison') {
      walk(e.left);
      walk(e.right);
      return;
    }
    if (e.operator !== '=' && e.operator !== '?=') return;
    const field = isCallerId(e.right) ? fieldOf(e.left) : isCallerId(e.left) ? fieldOf(e.right) : undefined;
    if (field) out.add(field);
  };
  walk(expr);
  return [...out];
}
