import { nowIso } from '../lib/time.ts';
import type { Database, Dialect, Transaction } from './types.ts';

/**
 * One step of Cairn's own internal schema (its `_`-prefixed tables), identified by a stable id.
 * Steps are recorded by id rather than numbered, so domains can add theirs independently.
 */
export interface SchemaStep {
  id: string;
  up(tx: Transaction): Promise<void>;
}

/**
 * `, <column>` for tables read in insertion order (`ORDER BY created, <insertionOrder>`), on a
 * database without an implicit row order (PostgreSQL); empty on SQLite, which has its rowid.
 */
export function orderColumn(dialect: Dialect): string {
  return dialect.insertionOrderColumn ? `, ${dialect.insertionOrderColumn.definition}` : '';
}

/** Runs the steps not yet recorded in `_cairn_schema`, each in its own transaction, in list order. */
export async function applySchemaSteps(db: Database, steps: readonly SchemaStep[]): Promise<void> {
  await db.exec('CREATE TABLE IF NOT EXISTS _cairn_schema (id TEXT PRIMARY KEY NOT NULL, applied TEXT NOT NULL)');
  const done = new Set((await db.all<{ id: string }>('SELECT id FROM _cairn_schema')).map((r) => r.id));
  for (const step of steps) {
    if (done.has(step.id)) continue;
    await db.transaction(async (tx) => {
      await step.up(tx);
      await tx.run('INSERT INTO _cairn_schema (id, applied) VALUES (?, ?)', [step.id, nowIso()]);
    });
  }
}
