import { type Queryable, raw, type Row, type Sql, sql } from '../../storage/index.ts';
import type { AuthPrepared } from '../auth-fields.ts';
import { ROOT_ALIAS, type RecordShape } from '../shape.ts';
import type { AuthState } from './plan.ts';

/** Values of a stored row in canonical form, as field types prepare them. */
export function canonical(shape: RecordShape, row: Row): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const f of shape.fields) out[f.name] = f.type.fromDb(row[f.name], f.field);
  return out;
}

/** The column values a write stores: an auth record's system columns, then the fields' values as stored. */
export function columnValues(shape: RecordShape, values: Map<string, unknown>, auth: AuthPrepared | undefined): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const [name, value] of auth?.columns ?? []) out.set(name, value);
  for (const f of shape.fields) if (values.has(f.name)) out.set(f.name, f.type.toDb(values.get(f.name), f.field));
  return out;
}

/** The auth columns an update's checks depend on, read through `q` (with the update's rule, when given). */
export async function authState(q: Pick<Queryable, 'get'>, shape: RecordShape, id: string, access: Sql | null): Promise<AuthState | undefined> {
  const query = sql`SELECT email, verified, passwordHash FROM ${raw(shape.table)} ${raw(ROOT_ALIAS)} WHERE ${raw(ROOT_ALIAS)}.id = ${id}${access ? sql` AND (${access})` : sql``}`;
  const row = await q.get<{ email: string; verified: unknown; passwordHash: string }>(query.text, query.params);
  return row && { email: row.email, verified: row.verified === 1 || row.verified === true, passwordHash: row.passwordHash };
}

export function sameAuthState(a: AuthState, b: AuthState): boolean {
  return a.email === b.email && a.verified === b.verified && a.passwordHash === b.passwordHash;
}
