import type { Resolver, ResolvedOperand, ValueType } from '../rules/index.ts';
import { FilterError } from '../rules/index.ts';
import { raw, sql } from '../storage/sql.ts';

/**
 * The names a log filter or sort may use (PocketBase's filter on logs): the log's own keys and the
 * request's details, each also under `data.` as PocketBase's dashboard writes them
 * (`data.status >= 400`). Every name maps to a fixed column expression: nothing from the filter text
 * becomes SQL.
 */
const COLUMNS: Record<string, { sql: string; type: ValueType }> = {
  id: { sql: 'id', type: 'number' },
  created: { sql: 'created', type: 'date' },
  updated: { sql: 'created', type: 'date' },
  level: { sql: 'level', type: 'number' },
  message: { sql: "(method || ' ' || url)", type: 'text' },
  method: { sql: 'method', type: 'text' },
  url: { sql: 'url', type: 'text' },
  status: { sql: 'status', type: 'number' },
  execTime: { sql: 'exec_ms', type: 'number' },
  auth: { sql: 'auth', type: 'text' },
  authId: { sql: 'auth_id', type: 'text' },
  database: { sql: 'db_name', type: 'text' },
  userIp: { sql: 'user_ip', type: 'text' },
  remoteIp: { sql: 'remote_ip', type: 'text' },
  userAgent: { sql: 'user_agent', type: 'text' },
  referer: { sql: 'referer', type: 'text' },
  error: { sql: 'error', type: 'text' },
};

/** Keys of the log object itself; the others are request details, found under `data.` too. */
const TOP_LEVEL = new Set(['id', 'created', 'updated', 'level', 'message']);

export const logFieldResolver: Resolver = {
  resolve(name: string, position: number): ResolvedOperand {
    if (name === 'data.type') return { kind: 'scalar', sql: sql`${'request'}`, valueType: 'text' };
    const key = name.startsWith('data.') ? name.slice(5) : name;
    const column = Object.hasOwn(COLUMNS, key) && !(name.startsWith('data.') && TOP_LEVEL.has(key)) ? COLUMNS[key] : undefined;
    if (!column) throw new FilterError(`unknown log field ${JSON.stringify(name)}`, position);
    return { kind: 'scalar', sql: sql`${raw(column.sql)}`, valueType: column.type };
  },
};
