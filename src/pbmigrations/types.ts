import type { Transaction } from '../storage/index.ts';

/**
 * One run of one `pb_migrations` file: what the JavaScript runtime is given to execute the file's
 * `migrate(up, down)` in one direction. The runner (runner.ts) owns everything around it: which files
 * run, in which order, on which database, the transaction, the lock and the `_migrations` record.
 */
export interface PbMigrationRun {
  /** The file's text, as read from the folder. */
  source: string;
  /** The file's absolute path: the name to evaluate it under, so an error's stack names `path:line:column`. */
  path: string;
  /** The file's name as `_migrations` records it (`1712345678_created_posts.js`). */
  file: string;
  /** `up` runs the first function given to `migrate`, `down` the second (none: nothing to do). */
  direction: 'up' | 'down';
  /** The database the file runs on (`main`, or another name of the instance). */
  db: string;
  /**
   * The database's transaction the file runs in. Every read and write the file makes on that database
   * (collections, records, raw SQL) must go through it: the runner holds it while the file runs, so
   * a write through another transaction of the same database would wait on it forever (SQLite's one
   * writer) or not be undone with it.
   */
  tx: Transaction;
}

/** What `execute` reports back. */
export interface PbMigrationOutcome {
  /**
   * Whether the file called `migrate(…)`. As on PocketBase, a file that does not register a migration
   * is not one: it is not recorded as applied.
   */
  registered: boolean;
}

/**
 * Runs one file in one direction: evaluates `source` with PocketBase's JavaScript globals and
 * `migrate(up, down)`, then calls the chosen function with the generation's argument (≥ 0.23: an
 * `app` bound to `tx`; v0.22: a `db` for which `new Dao(db)` is bound to `tx`), synchronously as
 * PocketBase does. Rejects with the file's error (a thrown error, a failed save); its `stack` naming
 * `path:line:column`, or `line` and `column` on the error itself, lets the runner say where.
 */
export type PbMigrationExecutor = (run: PbMigrationRun) => Promise<PbMigrationOutcome>;
