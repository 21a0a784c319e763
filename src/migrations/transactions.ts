import type { Database, StorageBackend, Transaction } from '../storage/index.ts';

/**
 * Runs `fn` with a transaction open on every database at once (on PostgreSQL, one transaction over
 * all of them), so a migration's changes to several
 * databases commit together or not at all: an error anywhere inside `fn` rolls every one of them
 * back. The transactions are nested, so they commit innermost first once `fn` has succeeded; should a
 * COMMIT itself fail after inner ones went through (disk full, I/O error), `undo(i)` is called for
 * each database `i` that had committed, to restore it from the caller's snapshot.
 *
 * Databases are locked in the order given; callers serialize multi-database work (the apply lock),
 * so no two such runs can wait on each other.
 */
export async function inAllTransactions<T>(
  backend: StorageBackend,
  dbs: readonly Database[],
  fn: (txs: Transaction[]) => Promise<T>,
  undo: (index: number) => Promise<void>,
): Promise<T> {
  // One real transaction where the driver has one across databases (PostgreSQL schemas): nothing to undo.
  if (backend.transactionAcross) return backend.transactionAcross(dbs, fn);
  const txs: Transaction[] = [];
  const committed: number[] = [];
  const open = async (i: number): Promise<T> => {
    if (i === dbs.length) return fn(txs);
    const result = await dbs[i].transaction(async (tx) => {
      txs[i] = tx;
      return open(i + 1);
    });
    committed.push(i);
    return result;
  };
  try {
    return await open(0);
  } catch (err) {
    for (const i of committed) {
      try {
        await undo(i);
      } catch (undoErr) {
        process.emitWarning(`could not undo the committed changes of "${dbs[i].name}": ${(undoErr as Error).message}`);
      }
    }
    throw err;
  }
}
