import { ApiError, badRequest, isApiError, validationFailed } from '../errors.ts';
import type { Database, StatementResult } from '../storage/types.ts';

/** At most this many rows are answered; the rest of a result is not read. */
export const MAX_ROWS = 1000;
/** Longer texts are refused before anything runs. */
export const MAX_QUERY_LENGTH = 5000;

export interface SqlResult {
  /** Milliseconds the statements took. */
  execTime: number;
  /** Rows the statements inserted, updated or deleted, added up. */
  affectedRows: number;
  /** The last statement's result columns. */
  columns: Array<{ name: string; type: string; nullable: boolean }>;
  /** The last statement's rows, each value as text (null stays null). */
  rows: Array<Array<string | null>>;
}

/**
 * The SQL console (PocketBase's `POST /api/sql`): an administrator's SQL, one statement or several,
 * run in one transaction of the database, so a failing statement leaves nothing of the others.
 * The answer is the last statement's result, its values as text as SQLite's console shows them.
 */
export async function runSql(db: Database, body: unknown): Promise<SqlResult> {
  const query = (body as { query?: unknown } | null)?.query;
  if (typeof query !== 'string' || query.trim() === '') {
    throw validationFailed({ query: { code: 'validation_required', message: 'Cannot be blank.' } });
  }
  if (query.length > MAX_QUERY_LENGTH) {
    throw validationFailed({ query: { code: 'validation_length_out_of_range', message: `The length must be between 0 and ${MAX_QUERY_LENGTH}.` } });
  }
  const statements = db.dialect.splitStatements(query);
  if (statements.length === 0) throw validationFailed({ query: { code: 'validation_required', message: 'Cannot be blank.' } });
  const outside = statements.map(reachesOutside).find((what) => what !== undefined);
  if (outside !== undefined) {
    throw validationFailed({ query: { code: 'validation_sql_outside_database', message: `${outside} reaches files or programs outside the database: not run from the console.` } });
  }
  const started = performance.now();
  let last: StatementResult;
  let affectedRows = 0;
  try {
    last = await db.transaction(async (tx) => {
      let result: StatementResult = { columns: [], rows: [], changes: 0 };
      for (const statement of statements) {
        result = await tx.statement(statement, MAX_ROWS);
        affectedRows += result.changes;
      }
      return result;
    });
  } catch (err) {
    // The database's own words are what an administrator needs; an unreachable database stays a 503.
    if (isApiError(err) && (err as ApiError).status >= 500) throw err;
    throw badRequest(`Failed to execute query. Raw error:\n${db.dialect.describeError(err)}`);
  }
  return {
    execTime: Math.round(performance.now() - started),
    affectedRows,
    columns: last.columns.map((c) => ({ name: c.name, type: c.type, nullable: true })),
    rows: last.rows.map((row) => row.map(asText)),
  };
}

/**
 * What in a statement reaches outside its database, which the console refuses whatever the
 * database's role may do (on PostgreSQL Cairn's role is often a superuser, who may run programs
 * through COPY): SQLite's ATTACH, DETACH and VACUUM INTO write or open other files; PostgreSQL's COPY
 * and its server-file and large-object functions read and write the server's files.
 */
function reachesOutside(statement: string): string | undefined {
  // Leading comments are skipped, so that they cannot hide the statement's first word.
  const text = statement.replace(/^(?:\s+|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*/, '');
  const first = /^(attach|detach|copy)\b/i.exec(text)?.[1];
  if (first) return first.toUpperCase();
  if (/^vacuum\b[\s\S]*\binto\b/i.test(text)) return 'VACUUM INTO';
  const fn = /\b(pg_read_file|pg_read_binary_file|pg_ls_dir|pg_stat_file|pg_file_write|lo_import|lo_export|dblink\w*)\s*\(/i.exec(statement)?.[1];
  return fn ? `${fn.toLowerCase()}()` : undefined;
}

function asText(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (Buffer.isBuffer(value) || value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
  if (value instanceof Date) return value.toISOString();
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}
