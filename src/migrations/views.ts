import { fieldType } from '../collections/fields/registry.ts';
import { AUTH_SECRET_COLUMNS, type FieldDef, isReservedFieldName } from '../collections/model.ts';
import { badRequest } from '../errors.ts';
import { isValidName, quoteIdent } from '../lib/identifiers.ts';
import { randomId } from '../lib/ids.ts';
import type { Database, Queryable } from '../storage/index.ts';

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

/**
 * The first name in the query that a view may not read: an auth collection's secret columns, or a
 * table of Cairn's own (`_`-prefixed: API key hashes, one-time tokens, the outbox …) or SQLite's.
 * Column checks on the view's result are not enough, since an alias or an expression hides where a
 * value came from, and a view's rules may later open it to everyone.
 */
function forbiddenName(query: string): string | undefined {
  for (const m of query.matchAll(SQL_TOKENS)) {
    const name = m[1]?.replace(/""/g, '"') ?? m[2] ?? m[3] ?? m[4];
    if (name === undefined) continue;
    const lower = name.toLowerCase();
    if (SECRET_NAMES.has(lower) || lower.startsWith('_') || FORBIDDEN_PREFIXES.some((p) => lower.startsWith(p)) || FORBIDDEN_NAMES.has(lower)) return name;
  }
  return undefined;
}

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

/**
 * Creates the view `name` (the name was checked and is free) and returns the fields its columns
 * give. Runs in the caller's transaction; a broken query is a 400 naming the view.
 */
export async function createView(tx: Queryable, name: string, query: string): Promise<FieldDef[]> {
  const view = quoteIdent(name);
  // A view whose collection was deleted through the collections API is still there; it holds no data.
  if ((await tx.dialect.relationKind(tx, name)) === 'view') await tx.exec(`DROP VIEW ${view}`);
  let columns: { name: string; type: string }[];
  try {
    // A nested transaction (savepoint): PostgreSQL aborts the whole transaction on an error otherwise.
    columns = await tx.transaction(async (inner) => {
      // run() prepares exactly one statement, so the query cannot carry a second one.
      await inner.run(`CREATE VIEW ${view} AS ${query}`);
      return inner.dialect.tableColumns(inner, name);
    });
  } catch (err) {
    throw badRequest(`Invalid SQL for view "${name}": ${(err as Error).message}`);
  }
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
    await tx.run(`CREATE VIEW ${view} AS SELECT ${select}${missing.map((c) => `, '' AS ${quoteIdent(c)}`).join('')} FROM (${query}) AS _view`);
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
      const sample = await tx.all<Record<string, unknown>>(`SELECT * FROM ${quoteIdent(name)} LIMIT ${DRY_RUN_SAMPLE}`);
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
