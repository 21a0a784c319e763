import BetterSqlite3 from 'better-sqlite3';

/**
 * Checks of SQLite files that are not open in Cairn (a backup's contents before they are restored).
 * SQLite-specific by nature, so they live with the driver, not in the backups domain.
 */

/** Problems found in a database file: empty when it opens and `PRAGMA integrity_check` says ok. */
export function checkSqliteFile(file: string): string[] {
  let db: BetterSqlite3.Database | undefined;
  try {
    db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
    const rows = db.pragma('integrity_check') as Array<{ integrity_check: string }>;
    const problems = rows.map((r) => r.integrity_check).filter((m) => m !== 'ok');
    return problems.slice(0, 5);
  } catch (err) {
    return [(err as Error).message];
  } finally {
    db?.close();
  }
}

/** Rows of a query on a file opened read-only (undefined when the file or the table is missing). */
export function readRows<T>(file: string, sql: string): T[] | undefined {
  let db: BetterSqlite3.Database | undefined;
  try {
    db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
    return db.prepare(sql).all() as T[];
  } catch {
    return undefined;
  } finally {
    db?.close();
  }
}
