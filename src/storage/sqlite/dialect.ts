import { quoteIdent } from '../../lib/identifiers.ts';
import { join, type Sql, sql } from '../sql.ts';
import { sqliteFulltext } from './fulltext.ts';
import { splitQuery, sqliteSplitterOptions } from 'dbgate-query-splitter';
import type { ColumnInfo, ColumnKind, Comparable, Dialect, Queryable, StorageErrorKind } from '../types.ts';

const COLUMN_DEFINITIONS: Record<ColumnKind, string> = {
  // Zero values instead of NULL, as PocketBase stores them: filters and sorts then need no COALESCE.
  text: "TEXT DEFAULT '' NOT NULL",
  citext: "TEXT COLLATE NOCASE DEFAULT '' NOT NULL",
  number: 'NUMERIC DEFAULT 0 NOT NULL',
  bool: 'BOOLEAN DEFAULT FALSE NOT NULL',
  json: 'JSON DEFAULT NULL',
};

// How a parameter takes a column's affinity and collation in a derived table. CAST to NUMERIC only
// where the bound value is a number already (a number or a bool as 0/1): on text it would make 0.
// JSON columns (declared JSON: numeric affinity) keep JSON text as text, which a bare parameter does.
const TYPED_PARAMS: Record<ColumnKind, string> = {
  text: 'CAST(? AS TEXT)',
  citext: 'CAST(? AS TEXT) COLLATE NOCASE',
  number: 'CAST(? AS NUMERIC)',
  bool: 'CAST(? AS NUMERIC)',
  json: '?',
};

// sqlite3_errstr() of the primary result codes better-sqlite3 names, as SQLite's own tools word an error.
const RESULT_TEXT: Record<string, string> = {
  SQLITE_ERROR: 'SQL logic error',
  SQLITE_INTERNAL: 'internal logic error',
  SQLITE_PERM: 'access permission denied',
  SQLITE_ABORT: 'query aborted',
  SQLITE_BUSY: 'database is locked',
  SQLITE_LOCKED: 'database table is locked',
  SQLITE_NOMEM: 'out of memory',
  SQLITE_READONLY: 'attempt to write a readonly database',
  SQLITE_INTERRUPT: 'interrupted',
  SQLITE_IOERR: 'disk I/O error',
  SQLITE_CORRUPT: 'database disk image is malformed',
  SQLITE_FULL: 'database or disk is full',
  SQLITE_CANTOPEN: 'unable to open database file',
  SQLITE_TOOBIG: 'string or blob too big',
  SQLITE_CONSTRAINT: 'constraint failed',
  SQLITE_MISMATCH: 'datatype mismatch',
  SQLITE_RANGE: 'column index out of range',
  SQLITE_NOTADB: 'file is not a database',
};

const UNIQUE_FAILED = /UNIQUE constraint failed: (.+)$/;

type Affinity = 'INTEGER' | 'TEXT' | 'BLOB' | 'REAL' | 'NUMERIC';

/** A declared type's affinity, by SQLite's rules in their order (datatype3.html §3.1). */
function affinityOf(declaredType: string): Affinity {
  const t = declaredType.toUpperCase();
  if (t.includes('INT')) return 'INTEGER';
  if (t.includes('CHAR') || t.includes('CLOB') || t.includes('TEXT')) return 'TEXT';
  if (t.includes('BLOB') || t === '') return 'BLOB';
  if (t.includes('REAL') || t.includes('FLOA') || t.includes('DOUB')) return 'REAL';
  return 'NUMERIC';
}

const affinities = new Map<string, Affinity>();

// Text that a numeric affinity turns into a number: a decimal literal, spaces around allowed. Wider
// than SQLite's own test is fine (the insert then reads its row back); narrower would not be.
const NUMERIC_TEXT = /^\s*[-+]?(?:\d|\.\d)[\d.]*(?:[eE][-+]?\d+)?\s*$/;

function guardJson(expr: string): string {
  // An adopted column may hold text that is not JSON; json_each would raise on it mid-query.
  return `CASE WHEN json_valid(${expr}) THEN ${expr} ELSE '[]' END`;
}

const same = (value: Sql): Sql => value;
// SQLite compares values of different types by its own rules (numbers before text), without errors.
const AS_IS: Comparable = { left: same, right: same, textual: true };

export const sqliteDialect: Dialect = {
  name: 'sqlite',

  fulltext: sqliteFulltext,

  indexMethods: [],

  indexStatement: async (_db, statement) => statement,

  quoteIdent,

  columnDefinition(kind, multiple) {
    return multiple ? "JSON DEFAULT '[]' NOT NULL" : COLUMN_DEFINITIONS[kind];
  },

  jsonEach(expr, alias) {
    return `json_each(${guardJson(expr)}) ${alias}`;
  },

  jsonArrayLength(expr) {
    return `COALESCE(json_array_length(${guardJson(expr)}), 0)`;
  },

  like(left, right, negate) {
    return `${left} ${negate ? 'NOT LIKE' : 'LIKE'} ${right} ESCAPE '\\'`;
  },

  wrapInJsonArraySql(table, column) {
    const col = quoteIdent(column);
    return `UPDATE ${quoteIdent(table)} SET ${col} = CASE WHEN ${col} IS NULL OR ${col} = '' THEN '[]' ELSE json_array(${col}) END
      WHERE ${col} IS NULL OR NOT json_valid(${col}) OR json_type(${col}) != 'array'`;
  },

  createUnloggedTable: 'CREATE TABLE',

  changeNoticeSql() {
    return [];
  },

  typedRow(columns) {
    return `SELECT ${columns.map((c) => `${c.multiple ? '?' : TYPED_PARAMS[c.kind]} AS ${quoteIdent(c.name)}`).join(', ')}`;
  },

  bigintPrimaryKey() {
    return 'INTEGER PRIMARY KEY';
  },

  comparable() {
    return AS_IS;
  },

  distinct(left, right) {
    return sql`${left} IS NOT ${right}`;
  },

  isEmpty(value, negate) {
    return negate ? sql`COALESCE(${value}, '') != ''` : sql`COALESCE(${value}, '') = ''`;
  },

  asText(value) {
    return value;
  },

  strftime(format, time, modifiers) {
    const args = [sql`${format}`, ...(time ? [time] : []), ...modifiers.map((m) => sql`${m}`)];
    return sql`COALESCE(strftime(${join(args, ', ')}), '')`;
  },

  lower(value) {
    return sql`LOWER(${value})`;
  },

  jsonPath(column, keys) {
    const path = '$' + keys.map((k) => (/^\d+$/.test(k) ? `[${k}]` : `."${k}"`)).join('');
    // json_extract raises on text that is not JSON (or nested too deep for SQLite), which an adopted
    // column may hold: such a value reads as null instead of failing the query.
    return sql`json_extract(CASE WHEN json_valid(${column}) THEN ${column} END, ${path})`;
  },

  orderBy(value, descending) {
    return descending ? sql`${value} DESC` : sql`${value} ASC`;
  },

  randomOrder() {
    return 'RANDOM()';
  },

  lockForWrite() {
    return '';
  },
  lockForUpdate() {
    return '';
  },
  lockToReference() {
    return '';
  },
  insertionOrder(alias) {
    return `${alias}.rowid`;
  },

  splitStatements(script: string): string[] {
    return (splitQuery(script, sqliteSplitterOptions) as unknown[]).map((s) => (typeof s === 'string' ? s : String((s as { text: string }).text)).trim()).filter(Boolean);
  },

  describeError(err: unknown): string {
    const code = String((err as { code?: unknown })?.code ?? '');
    const primary = RESULT_TEXT[code] ?? RESULT_TEXT[code.replace(/^(SQLITE_[A-Z]+)_.*$/, '$1')];
    const message = (err as Error)?.message ?? String(err);
    return primary ? `${primary}: ${message}` : message;
  },

  classifyError(err: unknown): StorageErrorKind {
    const code = (err as { code?: unknown })?.code;
    if (code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY') {
      const m = UNIQUE_FAILED.exec(String((err as Error).message));
      const qualified = m ? m[1].split(',').map((s) => s.trim()) : [];
      const table = qualified[0]?.split('.')[0];
      return { kind: 'unique', table, columns: qualified.map((q) => q.slice(q.indexOf('.') + 1)) };
    }
    if (code === 'SQLITE_BUSY' || code === 'SQLITE_LOCKED') return { kind: 'busy' };
    return { kind: 'other' };
  },

  async tableColumns(db: Queryable, table: string): Promise<ColumnInfo[]> {
    return db.all<ColumnInfo>('SELECT name, type FROM pragma_table_info(?)', [table]);
  },

  insertKeeps(declaredType, value) {
    let affinity = affinities.get(declaredType);
    if (affinity === undefined) {
      affinity = affinityOf(declaredType);
      // Declared types are the few Cairn writes plus those of adopted tables.
      if (affinities.size < 1000) affinities.set(declaredType, affinity);
    }
    if (typeof value === 'string') return affinity === 'TEXT' || affinity === 'BLOB' || !NUMERIC_TEXT.test(value);
    // A number stored as INTEGER or REAL reads back as the same number; text affinity would make it text.
    if (typeof value === 'number') return affinity !== 'TEXT' && Number.isFinite(value) && !Object.is(value, -0);
    return false;
  },

  async tableExists(db: Queryable, table: string): Promise<boolean> {
    const row = await db.get("SELECT 1 AS found FROM sqlite_master WHERE type IN ('table', 'view') AND name = ? COLLATE NOCASE", [
      table,
    ]);
    return row !== undefined;
  },

  async relationKind(db: Queryable, name: string): Promise<'table' | 'view' | undefined> {
    const row = await db.get<{ type: string }>("SELECT type FROM sqlite_master WHERE type IN ('table', 'view') AND name = ? COLLATE NOCASE", [name]);
    return row?.type as 'table' | 'view' | undefined;
  },

  async foreignSchemasOf(): Promise<string[]> {
    return [];
  },

  idColumn: 'id TEXT PRIMARY KEY NOT NULL',

  async alignIdColumn(): Promise<void> {},

  async viewsReading(): Promise<Array<{ schema: string; name: string; sql: string }>> {
    return [];
  },

  superusersRelation: '_superusers',

  async indexTable(db: Queryable, index: string): Promise<string | undefined> {
    const row = await db.get<{ tbl_name: string }>("SELECT tbl_name FROM sqlite_master WHERE type = 'index' AND name = ? COLLATE NOCASE", [index]);
    return row?.tbl_name;
  },
};
