import type { Database, Transaction } from './types.ts';

const BASE = Symbol('the database a transaction view belongs to');

type Bound = Database & { [BASE]: Database };

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
    allEach: async (queries) => {
      const out = [];
      for (const q of queries) out.push(await tx.all(q.text, q.params));
      return out;
    },
    get: (text, params) => tx.get(text, params),
    run: (text, params) => tx.run(text, params),
    exec: (text) => tx.exec(text),
    transaction: (fn) => tx.transaction(fn),
    close: async () => undefined,
    [BASE]: base,
  };
  return view;
}

/** The database itself, for a view `withinTransaction` made; else `db`. */
export function baseDatabase(db: Database): Database {
  return (db as Partial<Bound>)[BASE] ?? db;
}
