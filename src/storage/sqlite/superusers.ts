import BetterSqlite3 from 'better-sqlite3';
import { SUPERUSERS_SELECT, SUPERUSERS_VIEW_COLUMNS } from '../superusers.ts';

/**
 * `_superusers` on SQLite: a view in a database file cannot read a table of another file (system.db),
 * so each connection of a data database has an eponymous virtual table of that name whose rows are
 * the administrators, read from system.db when a statement scans it (storage/superusers.ts). A view
 * collection's stored SQL is then the SQL its author wrote. Tools that open the file without Cairn
 * see a view that names a table they lack.
 */
export function registerSuperusers(conn: BetterSqlite3.Database, read: () => unknown[][]): void {
  conn.table('_superusers', {
    columns: [...SUPERUSERS_VIEW_COLUMNS],
    *rows() {
      yield* read();
    },
  });
}

/** The administrators, read on a read-only connection to system.db of its own, opened at first use. */
export class SqliteSuperusers {
  private conn?: BetterSqlite3.Database;
  private statement?: BetterSqlite3.Statement;

  constructor(private readonly systemFile: string) {}

  readonly rows = (): unknown[][] => {
    if (this.statement === undefined) {
      this.conn = new BetterSqlite3(this.systemFile, { readonly: true, fileMustExist: true });
      this.conn.pragma('busy_timeout = 10000');
      this.statement = this.conn.prepare(SUPERUSERS_SELECT).raw(true);
    }
    return this.statement.all() as unknown[][];
  };

  close(): void {
    this.conn?.close();
    this.conn = undefined;
    this.statement = undefined;
  }
}
