import type { Sql } from './sql.ts';

/**
 * The storage interface every caller uses. It is asynchronous even though the SQLite driver is
 * synchronous underneath, so that a PostgreSQL driver can implement it without reshaping callers.
 *
 * SQL is written with `?` placeholders; a driver whose database uses another placeholder style
 * rewrites them. Anything that differs between SQL dialects lives behind `Dialect`.
 */

export type SqlValue = string | number | bigint | boolean | null | Buffer | Uint8Array;
export type Row = Record<string, unknown>;

export interface RunResult {
  changes: number;
  /** The rowid of the row an INSERT wrote (SQLite): cheaper than RETURNING, which buffers its rows. */
  lastInsertRowid: number;
}

export interface Queryable {
  readonly dialect: Dialect;
  /** All rows of a query. */
  all<T = Row>(sql: string, params?: readonly unknown[]): Promise<T[]>;
  /** The first row of a query, or undefined. */
  get<T = Row>(sql: string, params?: readonly unknown[]): Promise<T | undefined>;
  /** A statement that returns no rows (INSERT/UPDATE/DELETE/DDL). */
  run(sql: string, params?: readonly unknown[]): Promise<RunResult>;
  /** Several statements without parameters, such as a DDL script. */
  exec(sql: string): Promise<void>;
  /**
   * Runs `fn` in a transaction: committed when it resolves, rolled back when it rejects. Called on a
   * transaction handle it nests (a savepoint). Keep slow work (hashing, network) outside: the
   * database is locked for writers while `fn` runs.
   */
  transaction<T>(fn: (tx: Transaction) => Promise<T>): Promise<T>;
}

/** What one statement of arbitrary SQL gave (the SQL console): its columns and rows, in order. */
export interface StatementResult {
  /** Each result column with its declared type ('' for an expression or an unknown type). */
  columns: Array<{ name: string; type: string }>;
  /** Rows as arrays in column order, values as the driver reads them. */
  rows: unknown[][];
  /** Rows the statement inserted, updated or deleted. */
  changes: number;
}

export interface Transaction extends Queryable {
  /**
   * The first row of a query, synchronously: only where the engine answers on this thread (SQLite).
   * pb_hooks handlers run on the main thread read through it (src/pbhooks/main-runtime.ts).
   */
  getNow?<T = Row>(sql: string, params?: readonly unknown[]): T | undefined;
  /** All rows of a query, synchronously, where `getNow` is. */
  allNow?<T = Row>(sql: string, params?: readonly unknown[]): T[];
  /**
   * `get` for the transaction's last statement: the transaction commits with it, and a statement
   * after it fails. On PostgreSQL that saves a round trip: a transaction that ran nothing yet sends it
   * alone (one statement is atomic by itself), else right behind it goes COMMIT, in one write. Only
   * for the transaction's owner (inside a savepoint it is `get`, and the transaction goes on), and
   * only where a failure after it leaves nothing to undo: what it wrote stays (a delete that matched
   * no row may still answer 404).
   */
  commitWith<T = Row>(sql: string, params?: readonly unknown[]): Promise<T | undefined>;
  /** Runs `fn` once the outermost transaction has committed; dropped if it rolls back. */
  afterCommit(fn: () => void | Promise<void>): void;
  /**
   * One statement of arbitrary SQL, without parameters, as an administrator typed it (`/api/sql`):
   * its columns even when it returns no row, its rows as arrays (duplicate column names kept), at most
   * `maxRows` of them. Statement caches are dropped, since it may change the schema.
   */
  statement(sql: string, maxRows: number): Promise<StatementResult>;
}

export interface Database extends Queryable {
  /** The database name (`main`, `system`, …). */
  readonly name: string;
  /**
   * All rows of each of several reads that do not depend on each other (a page and its total). On
   * PostgreSQL they are written together on one connection and answered in one round trip.
   */
  allEach(queries: readonly Sql[]): Promise<Row[][]>;
  /**
   * `get` for a read of one row by its key that is cheap to answer (a token's account, a record by
   * id): on PostgreSQL such reads of concurrent requests share a connection and go out together
   * (postgres/shared-reads.ts). Never for a slow read: those behind it on the connection would wait.
   */
  lookup<T = Row>(sql: string, params?: readonly unknown[]): Promise<T | undefined>;
  close(): Promise<void>;
}

/** What a database error means to Cairn, decoded by the dialect from driver-specific codes. */
export type StorageErrorKind =
  | { kind: 'unique'; table?: string; columns: string[] }
  | { kind: 'busy' }
  | { kind: 'other' };

export interface ColumnInfo {
  name: string;
  type: string;
}

/** The storage-level kinds a field value is stored as; dialects map them to column types.
 * `citext` is text compared case-insensitively (auth emails). */
export type ColumnKind = 'text' | 'citext' | 'number' | 'bool' | 'json';

/** What a compared value is (the filter language's value types); `null` for a NULL constant. */
export type CompareKind = 'text' | 'number' | 'bool' | 'date' | 'json';

/** How the two sides of a comparison are made comparable (see `Dialect.comparable`). */
export interface Comparable {
  left(value: Sql): Sql;
  right(value: Sql): Sql;
  /** Whether both sides end up as text, so NULL and '' can be equated with COALESCE. */
  textual: boolean;
}

/** Full-text indexes of collections (`create_fts`) and the `search=` condition of lists. */
export interface FulltextDialect {
  /** Builds the index of a collection's fields and indexes the rows already there. */
  create(tx: Queryable, collection: string, fields: readonly string[], tokenize: string | undefined): Promise<void>;
  /** Removes it (a no-op when there is none). */
  drop(tx: Queryable, collection: string): Promise<void>;
  /**
   * Matching rows (every word) of the record aliased `alias`, and an order term, best first. With
   * `only`, words match in those indexed fields alone (the caller may not read the others: hidden
   * fields); `indexed` lists every field of the index, in its order.
   */
  search(alias: string, collection: string, words: readonly string[], tokenize: string | undefined, only?: { fields: readonly string[]; indexed: readonly string[] }): { where: Sql; order: Sql };
}

export interface Dialect {
  readonly name: 'sqlite' | 'postgres';
  readonly fulltext: FulltextDialect;
  quoteIdent(name: string): string;
  /**
   * The column some databases need so that rows keep their insertion order (SQLite has its rowid;
   * PostgreSQL gets `_seq`), as a column definition, or undefined when the database has one built in.
   */
  readonly insertionOrderColumn?: { name: string; definition: string };
  /** Column type and default for a field column, e.g. `TEXT DEFAULT '' NOT NULL`. */
  columnDefinition(kind: ColumnKind, multiple: boolean): string;
  /** A record table's `id` column, its primary key: compared and sorted as the text columns that hold
   * ids (relation fields), so a join from one to the other can use the key's index. */
  readonly idColumn: string;
  /**
   * Gives an existing record table's `id` what `idColumn` gives a new one (a table made by an earlier
   * version, or adopted), keeping the views that read it; nothing where it has it already (always
   * on SQLite, whose columns all compare as BINARY).
   */
  alignIdColumn(db: Queryable, table: string): Promise<void>;
  /**
   * The views that read a table or view, through others too, nearest first, with their stored
   * definitions (PostgreSQL refuses to drop or change what a view reads); none on SQLite, which keeps
   * no such record.
   */
  viewsReading(db: Queryable, relation: string): Promise<Array<{ schema: string; name: string; sql: string }>>;
  /** A table-valued source over the elements of a JSON array expression; elements are read from
   * `<alias>.value`. */
  jsonEach(expr: string, alias: string): string;
  /** Number of elements of a JSON array expression (0 for NULL or non-arrays). */
  jsonArrayLength(expr: string): string;
  /** A case-insensitive LIKE with `\` as escape character. */
  like(left: string, right: string, negate: boolean): string;
  /** An UPDATE turning the single values of a column into one-element JSON arrays (a field that
   * becomes multiple); empty values become `[]`, values that already are arrays stay. */
  wrapInJsonArraySql(table: string, column: string): string;
  /**
   * `SELECT ? AS "a", ? AS "b", …`: one row of parameters (bound in column order), each typed as a
   * column of that kind and multiplicity is (type, comparison affinity, collation). Wrapped as a
   * derived table under a table's alias, it lets a condition compiled against the table's rows be
   * evaluated on values that are not in the table: a deleted record's last state (realtime).
   */
  typedRow(columns: ReadonlyArray<{ name: string; kind: ColumnKind; multiple: boolean }>): string;
  /**
   * Converters that make two compared values comparable. SQLite compares values of any types; a
   * typed database needs both sides converted to one type, chosen from what each side is.
   */
  comparable(left: CompareKind | null | undefined, right: CompareKind | null | undefined): Comparable;
  /** `left IS NOT right` that holds when exactly one side is NULL. */
  distinct(left: Sql, right: Sql): Sql;
  /** Whether a value is empty (NULL or ''), whatever its type; or, with `negate`, whether it is not. */
  isEmpty(value: Sql, negate: boolean): Sql;
  /** A value as text (for concatenation and LIKE): as it is on SQLite, converted on PostgreSQL. */
  asText(value: Sql): Sql;
  /** Lower-cased text of a value. */
  lower(value: Sql): Sql;
  /**
   * SQLite's `strftime(format, time, modifier…)` with a NULL read as '' (PocketBase's filter function):
   * `time` is text (a SQLite time value) or absent (now). PostgreSQL's translation knows the modifiers
   * PocketBase's users write; one it does not is returned as `{ unsupported }`.
   */
  strftime(format: string, time: Sql | undefined, modifiers: readonly string[]): Sql | { unsupported: string };
  /** The value at a path of keys inside a JSON column (NULL when absent or when the column is not JSON). */
  jsonPath(column: Sql, keys: readonly string[]): Sql;
  /** An ORDER BY term; NULLs sort first in ascending order, as SQLite sorts them. */
  orderBy(value: Sql, descending: boolean, nullable: boolean): Sql;
  /** A 64-bit integer primary key column type whose values the caller supplies (SQLite: the rowid
   * alias `INTEGER PRIMARY KEY`, so the table is one b-tree; PostgreSQL: `BIGINT PRIMARY KEY`). */
  bigintPrimaryKey(): string;
  /** Random order, for `sort=@random`. */
  randomOrder(): string;
  /**
   * The statement that creates a table of data a crash may lose (counters): PostgreSQL's `CREATE
   * UNLOGGED TABLE` writes no WAL, so its commits wait on no disk flush; SQLite's plain `CREATE TABLE`.
   */
  readonly createUnloggedTable: string;
  /**
   * Statements that make a collection's table announce its committed row changes to every process
   * (PostgreSQL: a trigger sending NOTIFY), or none where one process sees every write itself.
   */
  changeNoticeSql(table: string): string[];
  /** An order term that makes sorting stable in insertion order (the tie-breaker of every list). */
  insertionOrder(alias: string): string;
  /**
   * What a read of rows a transaction goes on to write ends with, so that concurrent writers of
   * them wait for it (`FOR UPDATE OF alias`); empty where a write transaction holds the whole
   * database already (SQLite).
   */
  lockForWrite(alias: string): string;
  /**
   * `lockForWrite` for a row a transaction goes on to update without changing its id: concurrent
   * writers of it wait, but not writers that only point at it (`FOR NO KEY UPDATE`, which `FOR KEY
   * SHARE` does not conflict with, as PostgreSQL's own foreign keys have it): two records made to
   * point at each other at once then do not wait on each other in a circle.
   */
  lockForUpdate(alias: string): string;
  /**
   * What a read of rows a write is about to point at ends with, so that a concurrent delete of them
   * waits for the write's commit (`FOR KEY SHARE`); empty on SQLite, as `lockForWrite`.
   */
  lockToReference(): string;
  /**
   * The index methods a collection's index may name (`CREATE INDEX … USING gin`), empty where the
   * engine has one kind of index (SQLite): there `USING` and operator classes are refused by name.
   */
  readonly indexMethods: readonly string[];
  /**
   * A collection's own index statement as this database runs it, with what it needs made ready in the
   * same transaction. SQLite takes it as written; on PostgreSQL, PocketBase's SQLite spellings
   * (backtick quoting, `col COLLATE NOCASE`) become their PostgreSQL equivalents, and pg_trgm's
   * operator classes get the extension (made on first use) and are named with its schema.
   */
  indexStatement(db: Queryable, statement: string, operatorClasses: readonly string[]): Promise<string>;
  classifyError(err: unknown): StorageErrorKind;
  /** A script of several statements as the statements, split where the dialect ends one (quotes,
   * comments, trigger bodies and dollar-quoting respected); empty statements dropped. */
  splitStatements(script: string): string[];
  /** A database error as the database words it, for an administrator who ran the SQL (`/api/sql`). */
  describeError(err: unknown): string;
  /** Physical columns of a table, or an empty list when the table does not exist. */
  tableColumns(db: Queryable, table: string): Promise<ColumnInfo[]>;
  /**
   * Whether a column declared as `declaredType` reads back exactly `value` once `value` is inserted
   * into it, so the INSERT need not read its row back (`RETURNING`). Absent where reading it back costs
   * little (PostgreSQL answers RETURNING in the same round trip); SQLite's RETURNING doubles an
   * insert's cost, and its type affinity changes only values it can recognise.
   */
  insertKeeps?(declaredType: string, value: unknown): boolean;
  tableExists(db: Queryable, table: string): Promise<boolean>;
  /** Whether a name is a table or a view of the database, or neither. */
  relationKind(db: Queryable, name: string): Promise<'table' | 'view' | undefined>;
  /**
   * Schemas other than the database's own that a view reads from (PostgreSQL; always none on SQLite),
   * besides its reading of the administrators (`superusersRelation`).
   */
  foreignSchemasOf(db: Queryable, view: string): Promise<string[]>;
  /**
   * What a view's SQL reads as PocketBase's `_superusers`: the instance's administrators, their public
   * columns only (`SUPERUSERS_VIEW_COLUMNS`). SQLite: `_superusers`, a virtual table each connection
   * of a data database has (sqlite/superusers.ts); PostgreSQL: the view `cairn_system._superusers`.
   */
  readonly superusersRelation: string;
  /** The table an index of that name belongs to, or undefined when there is no such index. */
  indexTable(db: Queryable, index: string): Promise<string | undefined>;
}
