import { badRequest } from '../errors.ts';
import { isoDate } from '../lib/time.ts';
import type { Expr, Operand } from '../rules/ast.ts';
import { baseOperator, isAnyOf } from '../rules/ast.ts';
import { parseFilter } from '../rules/parser.ts';

/**
 * `filter` and `sort` of `GET /api/collections`, as PocketBase v0.39 takes them: the filter language
 * over the collections' own top-level properties (`name`, `type`, `system`, the rules, …), evaluated
 * on the listed definitions. An unknown property or a malformed expression is a 400.
 */
const FIELDS = new Set(['id', 'name', 'type', 'system', 'listRule', 'viewRule', 'createRule', 'updateRule', 'deleteRule', 'created', 'updated', 'viewQuery']);

type Item = Record<string, unknown>;

const invalid = (what: 'filter' | 'sort') => badRequest(`Invalid ${what} parameter.`);

// Dates compare in one form whichever a filter writes (PocketBase's, as answered, or ISO 8601).
function operand(o: Operand, item: Item): unknown {
  if (o.type === 'literal') return isoDate(o.value);
  if (!FIELDS.has(o.name)) throw invalid('filter');
  const v = item[o.name];
  return v === undefined ? null : o.name === 'created' || o.name === 'updated' ? isoDate(v) : v;
}

function like(value: unknown, pattern: unknown): boolean {
  const text = String(value ?? '').toLowerCase();
  const p = String(pattern ?? '').toLowerCase();
  if (!p.includes('%')) return text.includes(p);
  const re = new RegExp(`^${p.split('%').map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('.*')}$`, 's');
  return re.test(text);
}

function compare(op: string, a: unknown, b: unknown): boolean {
  const norm = (v: unknown) => (v === null || v === undefined ? '' : typeof v === 'boolean' ? (v ? 1 : 0) : v);
  const x = norm(a);
  const y = norm(b);
  switch (op) {
    case '=':
      return String(x) === String(y);
    case '!=':
      return String(x) !== String(y);
    case '~':
      return like(x, y);
    case '!~':
      return !like(x, y);
    case '>':
      return x > y;
    case '>=':
      return x >= y;
    case '<':
      return x < y;
    default:
      return x <= y;
  }
}

function evaluate(expr: Expr, item: Item): boolean {
  if (expr.type === 'and') return evaluate(expr.left, item) && evaluate(expr.right, item);
  if (expr.type === 'or') return evaluate(expr.left, item) || evaluate(expr.right, item);
  if (expr.type !== 'comparison') return false;
  const op = isAnyOf(expr.operator) ? baseOperator(expr.operator) : expr.operator;
  return compare(op, operand(expr.left, item), operand(expr.right, item));
}

export function filterCollections<T extends Item>(items: T[], filter: string): T[] {
  if (filter.trim() === '') return items;
  let expr: Expr;
  try {
    expr = parseFilter(filter);
  } catch {
    throw invalid('filter');
  }
  return items.filter((item) => evaluate(expr, item));
}

export function sortCollections<T extends Item>(items: T[], sort: string): T[] {
  if (sort.trim() === '') return items;
  const keys = sort.split(',').map((part) => {
    const p = part.trim();
    const desc = p.startsWith('-');
    const name = p.replace(/^[-+]/, '');
    if (!FIELDS.has(name)) throw invalid('sort');
    return { name, desc };
  });
  return [...items].sort((a, b) => {
    for (const { name, desc } of keys) {
      const x = String(a[name] ?? '');
      const y = String(b[name] ?? '');
      if (x !== y) return (x < y ? -1 : 1) * (desc ? -1 : 1);
    }
    return 0;
  });
}
