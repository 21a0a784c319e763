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

export interface Transaction extends Queryable {
  /** Runs `fn` once the outermost transaction has committed; dropped if it rolls back. */
  afterCommit(fn: () => void | Promise<void>): void;
}

export interface Database extends Queryable {
  /** The database name (`main`, `system`, …). */
  readonly name: string;
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

export interface Dialect {
  readonly name: 'sqlite' | 'postgres';
  quoteIdent(name: string): string;
  /** Column type and default for a field column, e.g. `TEXT DEFAULT '' NOT NULL`. */
  columnDefinition(kind: ColumnKind, multiple: boolean): string;
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
  /** Random order, for `sort=@random`. */
  randomOrder(): string;
  /** An order term that makes sorting stable in insertion order (the tie-breaker of every list). */
  insertionOrder(alias: string): string;
  classifyError(err: unknown): StorageErrorKind;
  /** Physical columns of a table, or an empty list when the table does not exist. */
  tableColumns(db: Queryable, table: string): Promise<ColumnInfo[]>;
  tableExists(db: Queryable, table: string): Promise<boolean>;
  /** The table an index of that name belongs to, or undefined when there is no such index. */
  indexTable(db: Queryable, index: string): Promise<string | undefined>;
}
