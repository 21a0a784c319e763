import type { Sql } from './sql.ts';
import type { Database, Queryable, Row, Transaction } from './types.ts';

/** `Database.allEach` where nothing can overlap (SQLite's synchronous calls, a transaction's one connection). */
export async function allInOrder(q: Pick<Queryable, 'all'>, queries: readonly Sql[]): Promise<Row[][]> {
  const out: Row[][] = [];
  for (const query of queries) out.push(await q.all<Row>(query.text, query.params));
  return out;
}

const BASE = Symbol('the database a transaction view belongs to');
const TX = Symbol('the transaction a view runs in');

type Bound = Database & { [BASE]: Database; [TX]: Transaction };

/** The outermost transaction of a savepoint a view opened (`view.transaction(fn)`), for `transactionOf`. */
const outer = new WeakMap<Transaction, Transaction>();

/**
 * `db` as seen from inside `tx`: every statement runs in that transaction and `transaction()` nests
 * a savepoint in it. Code written against a `Database` (the records domain) can so join a write that
 * is under way (a hook's writes commit or roll back with the record that triggered them). Caches
 * keyed by database key on `baseDatabase`, so the view shares them.
 */
export function withinTransaction(db: Database, tx: Transaction): Database {
  const base = baseDatabase(db);
  const view: Bound = {
    name: base.name,
    dialect: tx.dialect,
    all: (text, params) => tx.all(text, params),
    allEach: (queries) => allInOrder(tx, queries),
    get: (text, params) => tx.get(text, params),
    // Inside the transaction, so it sees what the write has done so far.
    lookup: (text, params) => tx.get(text, params),
    run: (text, params) => tx.run(text, params),
    exec: (text) => tx.exec(text),
    transaction: (fn) =>
      tx.transaction((inner) => {
        outer.set(inner, outer.get(tx) ?? tx);
        return fn(inner);
      }),
    close: async () => undefined,
    [BASE]: base,
    [TX]: tx,
  };
  return view;
}

/** The database itself, for a view `withinTransaction` made; else `db`. */
export function baseDatabase(db: Database): Database {
  return (db as Partial<Bound>)[BASE] ?? db;
}

/**
 * The transaction a view `withinTransaction` made runs in (the outermost one, for a savepoint the view
 * opened); undefined for a database itself. State kept for one transaction (collections a migration
 * changed and has not committed) is found through it.
 */
export function transactionOf(db: Database): Transaction | undefined {
  const tx = (db as Partial<Bound>)[TX];
  return tx && (outer.get(tx) ?? tx);
}
