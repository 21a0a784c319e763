import { fieldType } from '../collections/fields/registry.ts';
import { AUTH_SECRET_COLUMNS, type FieldDef, isReservedFieldName } from '../collections/model.ts';
import { badRequest, isApiError } from '../errors.ts';
import { isValidName, quoteIdent } from '../lib/identifiers.ts';
import { randomId } from '../lib/ids.ts';
import type { Database, Queryable } from '../storage/index.ts';
import { bareColumnAt, sqliteViewForPostgres } from './view-dialect.ts';

/**
 * SQL views (`create_views`), registered as read-only `view` collections. The records layer reads a
 * view like a table, so the view must have an `id` column; `created` and `updated` are added (empty)
 * when the query has none. The collection's fields are inferred from the view's columns.
 */

const SELECT_START = /^\s*(SELECT|WITH)\b/i;

const SECRET_NAMES = new Set([...AUTH_SECRET_COLUMNS].map((c) => c.toLowerCase()));
// String literals first, so their text is never read as a name; then quoted and bare identifiers.
const SQL_TOKENS = /'(?:[^']|'')*'|"((?:[^"]|"")*)"|`([^`]*)`|\[([^\]]*)\]|([A-Za-z_][A-Za-z0-9_$]*)/g;

// The databases' own catalogues and what reaches past the database: SQLite's tables, PostgreSQL's
// catalogues, other schemas' instance tables, and functions that read files, settings or other
// connections, or run SQL given as text.
const FORBIDDEN_PREFIXES = ['sqlite_', 'pg_', 'lo_', 'dblink'];
const FORBIDDEN_NAMES = new Set([
  'information_schema',
  'cairn_system',
  'current_setting',
  'set_config',
  'query_to_xml',
  'query_to_xml_and_xmlschema',
  'query_to_xmlschema',
  'cursor_to_xml',
  'cursor_to_xmlschema',
  'table_to_xml',
  'table_to_xml_and_xmlschema',
  'schema_to_xml',
  'database_to_xml',
]);

/** PocketBase's administrators, which a view may read as PocketBase's may (storage/superusers.ts). */
const SUPERUSERS = '_superusers';

/** The name a token of SQL_TOKENS names, if it is a name (not a string literal). */
function nameOf(m: RegExpMatchArray): string | undefined {
  return m[1]?.replace(/""/g, '"') ?? m[2] ?? m[3] ?? m[4];
}

/**
 * The first name in the query that a view may not read: an auth collection's secret columns, or a
 * table of Cairn's own (`_`-prefixed: API key hashes, one-time tokens, the outbox …) or SQLite's.
 * Column checks on the view's result are not enough, since an alias or an expression hides where a
 * value came from, and a view's rules may later open it to everyone. `_superusers` is read through
 * a relation that holds only its public columns, so it is allowed.
 */
function forbiddenName(query: string): string | undefined {
  for (const m of query.matchAll(SQL_TOKENS)) {
    const name = nameOf(m);
    if (name === undefined) continue;
    const lower = name.toLowerCase();
    if (lower === SUPERUSERS) continue;
    if (SECRET_NAMES.has(lower) || lower.startsWith('_') || FORBIDDEN_PREFIXES.some((p) => lower.startsWith(p)) || FORBIDDEN_NAMES.has(lower)) return name;
  }
  return undefined;
}

/**
 * The query as the engine runs it: `_superusers` (unqualified, outside string literals) names the
 * engine's relation of the administrators (`Dialect.superusersRelation`); undefined when the query
 * does not read it.
 */
function withSuperusers(query: string, relation: string): string | undefined {
  let found = false;
  let result = '';
  let last = 0;
  for (const m of query.matchAll(SQL_TOKENS)) {
    const name = nameOf(m);
    if (name === undefined || name.toLowerCase() !== SUPERUSERS || query[m.index! - 1] === '.') continue;
    found = true;
    result += query.slice(last, m.index) + relation;
    last = m.index! + m[0].length;
  }
  return found ? result + query.slice(last) : undefined;
}

/** A view column's declared type when its source declares none (SQLite says `BLOB` for a view's). */
function untyped(declared: string | null | undefined): boolean {
  return !declared || declared.toUpperCase() === 'BLOB';
}

/**
 * The field types of `_superusers`' columns, for a view column the engine gives no declared type
 * (SQLite's virtual table has none; PostgreSQL's view types them).
 */
const SUPERUSERS_COLUMN_TYPES: Record<string, string> = { id: 'TEXT', email: 'TEXT', emailvisibility: 'BOOLEAN', verified: 'BOOLEAN' };

/** The query as it will be stored: trimmed, without a trailing semicolon; 400 if it is not a SELECT or
 * reads what no view may expose. */
export function viewQuery(name: string, text: string): string {
  const query = text.trim().replace(/;\s*$/, '');
  if (!SELECT_START.test(query)) throw badRequest(`The SQL of view "${name}" must be a single SELECT statement.`);
  const problem = viewSqlProblem(query);
  if (problem !== undefined) throw badRequest(`The SQL of view "${name}" ${problem}`);
  return query;
}

/** Why a view's SQL is refused whatever the database holds, or undefined; checked when a file is read. */
export function viewSqlProblem(query: string): string | undefined {
  const forbidden = forbiddenName(query);
  if (forbidden === undefined) return undefined;
  return `reads "${forbidden}": views cannot expose password hashes, token keys, Cairn's internal tables or the database's catalogues.`;
}

function fieldTypeOfColumn(declared: string): string {
  const t = declared.toLowerCase();
  if (/int|real|floa|doub|num|dec/.test(t)) return 'number';
  if (t.includes('bool')) return 'bool';
  if (t.includes('json') || t === '') return 'json';
  return 'text';
}

function inferredField(view: string, column: string, declared: string): FieldDef {
  const type = fieldType(fieldTypeOfColumn(declared))!;
  return {
    // Derived from the names, so re-creating an unchanged view yields the same metadata.
    id: `${view}_${column}`.slice(0, 100),
    name: column,
    type: type.name,
    required: false,
    unique: false,
    hidden: false,
    system: false,
    presentable: false,
    default: null,
    options: type.normalizeOptions({}, new Map()),
  };
}

type Columns = { name: string; type: string }[];

/**
 * The query tried again while the database's error points at what SQLite (as PocketBase builds it)
 * reads otherwise: a double-quoted name that is no column is a string there (SQLite's "DQS", which
 * Cairn's SQLite turns off), and on PostgreSQL a column read bare beside an aggregate (a grouping
 * error at a position) is read from one row of its group (src/migrations/view-dialect.ts).
 */
async function attempts(sql: string, prefix: number, attempt: (sql: string) => Promise<Columns>): Promise<{ ok: true; sql: string; columns: Columns } | { ok: false; error: Error }> {
  let error = new Error('not tried');
  for (let tries = 0; tries < 24; tries++) {
    try {
      return { ok: true, sql, columns: await attempt(sql) };
    } catch (err) {
      error = err as Error;
      const { code, position } = err as { code?: string; position?: string };
      const offset = position === undefined ? -1 : Number(position) - 1 - prefix;
      const dqs = /no such column: ("(?:[^"]|"")*") - should this be a string literal/.exec(error.message)?.[1];
      const next =
        dqs !== undefined
          ? stringAt(sql, sql.indexOf(dqs))
          : code === '42703' && sql[offset] === '"'
            ? stringAt(sql, offset)
            : code === '42803' && offset >= 0
              ? bareColumnAt(sql, offset)
              : undefined;
      if (next === undefined || next === sql) break;
      sql = next;
    }
  }
  return { ok: false, error };
}

/** The double-quoted token at `offset` as a string literal. */
function stringAt(sql: string, offset: number): string | undefined {
  const m = offset < 0 ? null : /^"((?:[^"]|"")*)"/.exec(sql.slice(offset));
  if (!m) return undefined;
  return `${sql.slice(0, offset)}'${m[1].replace(/""/g, '"').replace(/'/g, "''")}'${sql.slice(offset + m[0].length)}`;
}

/**
 * Creates the view `name` (the name was checked and is free) and returns the fields its columns
 * give. Runs in the caller's transaction; a broken query is a 400 naming the view.
 */
export async function createView(tx: Queryable, name: string, stored: string): Promise<FieldDef[]> {
  const view = quoteIdent(name);
  // The collection keeps the query as written; the engine runs it with `_superusers` resolved.
  const translated = withSuperusers(stored, tx.dialect.superusersRelation);
  let query = translated ?? stored;
  // A view whose collection was deleted through the collections API is still there; it holds no data.
  if ((await tx.dialect.relationKind(tx, name)) === 'view') await tx.exec(`DROP VIEW ${view}`);
  let columns: { name: string; type: string }[];
  // A nested transaction (savepoint): PostgreSQL aborts the whole transaction on an error otherwise.
  // run() prepares exactly one statement, so the query cannot carry a second one.
  const attempt = (sql: string) =>
    tx.transaction(async (inner) => {
      await inner.run(`CREATE VIEW ${view} AS ${sql}`);
      return inner.dialect.tableColumns(inner, name);
    });
  try {
    columns = await attempt(query);
  } catch (err) {
    // PocketBase's view queries are SQLite's as PocketBase builds it: a query refused as written is
    // tried again with double-quoted strings (both engines) and, on PostgreSQL, rewritten
    // (src/migrations/view-dialect.ts); the collection keeps the text it was given.
    const prefix = `CREATE VIEW ${view} AS `.length;
    let again: Awaited<ReturnType<typeof attempts>>;
    if (tx.dialect.name === 'postgres') {
      const booleans = await tx.all<{ name: string }>(`SELECT DISTINCT column_name AS name FROM information_schema.columns WHERE table_schema = current_schema() AND data_type = 'boolean'`);
      again = await attempts(sqliteViewForPostgres(query, new Set(booleans.map((b) => b.name))), prefix, attempt);
    } else again = await attempts(query, prefix, attempt);
    if (!again.ok) {
      const also = again.error.message !== (err as Error).message ? ` (and rewritten from SQLite's dialect: ${again.error.message})` : '';
      throw badRequest(`Invalid SQL for view "${name}": ${(err as Error).message}${also}`);
    }
    columns = again.columns;
    query = again.sql;
  }
  if (translated !== undefined) columns = columns.map((c) => (untyped(c.type) ? { ...c, type: SUPERUSERS_COLUMN_TYPES[c.name.toLowerCase()] ?? c.type } : c));
  const foreign = await tx.dialect.foreignSchemasOf(tx, name);
  if (foreign.length > 0) throw badRequest(`View "${name}" reads from "${foreign[0]}": a view reads only its own database.`);
  const lower = new Set(columns.map((c) => c.name.toLowerCase()));
  if (!lower.has('id')) throw badRequest(`View "${name}" must select an "id" column: records are addressed by id.`);
  const missing = ['created', 'updated'].filter((c) => !lower.has(c));
  // Record ids are text. An id the query computes as a number (`ROW_NUMBER() OVER () AS id`) is cast
  // to text, as PocketBase's views do, so that `/records/1` finds it and answers `"id":"1"`. Only then:
  // a cast id of a plain table column would keep lookups by id from using the table's index.
  const idColumn = columns.find((c) => c.name.toLowerCase() === 'id');
  const castId = idColumn !== undefined && fieldTypeOfColumn(idColumn.type ?? '') !== 'text';
  if (missing.length > 0 || castId) {
    const select = castId ? columns.map((c) => (c === idColumn ? `CAST(${quoteIdent(c.name)} AS TEXT) AS ${quoteIdent(c.name)}` : quoteIdent(c.name))).join(', ') : '*';
    await tx.exec(`DROP VIEW ${view}`);
    // The query on a line of its own: a `--` comment it ends with must not swallow the parenthesis.
    await tx.run(`CREATE VIEW ${view} AS SELECT ${select}${missing.map((c) => `, '' AS ${quoteIdent(c)}`).join('')} FROM (${query}\n) AS _view`);
  }
  const fields: FieldDef[] = [];
  const seen = new Set<string>();
  for (const column of columns) {
    const key = column.name.toLowerCase();
    if (seen.has(key)) throw badRequest(`View "${name}" has two columns named "${column.name}"; give them distinct aliases.`);
    seen.add(key);
    // System columns are read as such; auth secrets and other reserved names are never exposed.
    if (isReservedFieldName(key, 'view')) continue;
    if (!isValidName(column.name)) throw badRequest(`Column "${column.name}" of view "${name}" is not a valid field name; alias it (… AS name).`);
    fields.push(inferredField(name, column.name, column.type ?? ''));
  }
  return fields;
}

export async function dropView(tx: Queryable, name: string): Promise<void> {
  await tx.exec(`DROP VIEW IF EXISTS ${quoteIdent(name)}`);
}

/**
 * Renames a column of `table`. SQLite rewrites the views that read it, but not the names Cairn's
 * wrapper around a view's query gives its columns (a text `id`, empty `created` and `updated`:
 * `createView`), and then refuses the rename (`error in view v after rename`). Such a view is put back
 * as its bare query for the rename, which SQLite rewrites as PocketBase's view would be, and is then
 * wrapped again.
 */
export async function renameColumn(tx: Queryable, table: string, from: string, to: string): Promise<void> {
  const statement = `ALTER TABLE ${quoteIdent(table)} RENAME COLUMN ${quoteIdent(from)} TO ${quoteIdent(to)}`;
  const bare: string[] = [];
  for (;;) {
    try {
      await tx.transaction((inner) => inner.exec(statement));
      break;
    } catch (err) {
      const view = /error in view (\S+?)(?: after rename)?:/.exec((err as Error).message)?.[1];
      const query = view === undefined || bare.includes(view) || tx.dialect.name !== 'sqlite' ? undefined : await wrappedQuery(tx, view);
      if (query === undefined) throw err;
      await dropView(tx, view!);
      await tx.exec(`CREATE VIEW ${quoteIdent(view!)} AS ${query}`);
      bare.push(view!);
    }
  }
  for (const view of bare) {
    const row = await tx.get<{ sql: string }>(`SELECT sql FROM sqlite_master WHERE type = 'view' AND name = ?`, [view]);
    if (!row) continue;
    await dropView(tx, view);
    await createView(tx, view, row.sql.replace(VIEW_HEAD, ''));
  }
}

const VIEW_HEAD = /^\s*CREATE\s+VIEW\s+(?:"(?:[^"]|"")+"|`[^`]+`|\S+)\s+AS\s+/i;

/** The query inside the wrapper `createView` put around it (as SQLite keeps it, renames applied), or undefined. */
async function wrappedQuery(tx: Queryable, view: string): Promise<string | undefined> {
  const row = await tx.get<{ sql: string }>(`SELECT sql FROM sqlite_master WHERE type = 'view' AND name = ?`, [view]);
  return row ? /^SELECT\s[\s\S]*?\sFROM\s+\(([\s\S]*)\)\s+AS\s+_view\s*$/i.exec(row.sql.replace(VIEW_HEAD, ''))?.[1] : undefined;
}

/**
 * The views reading the view `name`, through others too, nearest first (their stored definitions), on
 * PostgreSQL, which refuses to drop a view others read. SQLite keeps no such record, and lets it go.
 */
export async function dependentViews(tx: Queryable, name: string): Promise<{ name: string; sql: string }[]> {
  const readers = await tx.dialect.viewsReading(tx, name);
  // Only a view's readers: a table of that name (one a deleted collection left) keeps its own.
  return readers.length > 0 && (await tx.dialect.relationKind(tx, name)) === 'view' ? readers : [];
}

/**
 * Drops the view `name` and runs `make` (which creates it anew), keeping the views that read it. SQLite
 * lets a view be dropped under another; PostgreSQL refuses, so there the views reading it (through
 * others too) are dropped first and made again afterwards from their stored definitions.
 */
export async function replaceView<T>(tx: Queryable, name: string, make: () => Promise<T>): Promise<T> {
  const dependents = await dependentViews(tx, name);
  for (const d of [...dependents].reverse()) await tx.exec(`DROP VIEW IF EXISTS ${quoteIdent(d.name)}`);
  // Only a view: a table of that name (one a deleted collection left) is `make`'s to deal with.
  if ((await tx.dialect.relationKind(tx, name)) === 'view') await dropView(tx, name);
  const out = await make();
  for (const d of dependents) {
    try {
      await tx.transaction((inner) => inner.exec(`CREATE VIEW ${quoteIdent(d.name)} AS ${d.sql.trim().replace(/;$/, '')}`));
    } catch (err) {
      throw badRequest(`View "${d.name}" reads "${name}" and no longer works with its new query: ${(err as Error).message}`);
    }
  }
  return out;
}

/** Rows a dry run of a view answers, besides its fields. */
const DRY_RUN_SAMPLE = 10;

class DryRunDone extends Error {
  constructor(readonly result: { fields: FieldDef[]; sample: Record<string, unknown>[] }) {
    super('dry run');
  }
}

/**
 * What a view collection of `text` would be (PocketBase's `POST /api/collections/meta/dry-run-view`):
 * its fields and up to ten rows, from a view made and rolled back in one transaction, so nothing is
 * left behind. The rows must have ids, distinct ones, as records are addressed by id.
 */
export async function dryRunView(db: Database, text: string): Promise<{ fields: FieldDef[]; sample: Record<string, unknown>[] }> {
  const name = `cairn_dry_run_${randomId().slice(0, 8)}`;
  try {
    await db.transaction(async (tx) => {
      const fields = await createView(tx, name, viewQuery(name, text));
      let sample: Record<string, unknown>[];
      try {
        sample = await tx.all<Record<string, unknown>>(`SELECT * FROM ${quoteIdent(name)} LIMIT ${DRY_RUN_SAMPLE}`);
      } catch (err) {
        // The query failing as it runs (a value too big, a division by zero) is the query's fault.
        if (isApiError(err) && err.status >= 500) throw err;
        throw badRequest(`The query failed as it ran: ${isApiError(err) ? err.message : tx.dialect.describeError(err)}`);
      }
      const ids = new Set<string>();
      for (const row of sample) {
        const id = row.id === null || row.id === undefined ? '' : String(row.id);
        if (id === '') throw badRequest('The query could return records with empty ids.');
        if (ids.has(id)) throw badRequest(`The query could return records with the same id (${JSON.stringify(id)}).`);
        ids.add(id);
        row.id = id;
      }
      throw new DryRunDone({ fields, sample });
    });
  } catch (err) {
    if (err instanceof DryRunDone) return err.result;
    throw err;
  }
  throw new Error('unreachable: a dry run always rolls back');
}
