import type { Collection } from '../collections/model.ts';
import { deleteCollectionRow, insertCollection, updateCollection } from '../collections/store.ts';
import { parseIndex, syncTable, uniqueIndexName } from '../collections/table-sync.ts';
import { quoteIdent } from '../lib/identifiers.ts';
import { sameJson } from '../lib/canonical-json.ts';
import { badRequest } from '../errors.ts';
import type { Queryable } from '../storage/index.ts';
import { createFulltext, dropFulltext } from './fts.ts';
import type { DatabaseSchema, FtsConfig } from './model.ts';
import { createView, dependentViews, dropView } from './views.ts';

/**
 * Makes a database's schema go from `before` (what it is) to `after` (what it must be), in the
 * caller's transaction: metadata rows, tables and columns (additive only: soft drops keep them),
 * indexes, views and full-text tables. Apply runs it towards a migration's result, rollback towards
 * the pre-migration snapshot; both are therefore "compare and revert the differences".
 * Returns the schema as written (views with the fields inferred from their columns).
 */

const lower = (s: string) => s.toLowerCase();

function byName(list: readonly Collection[]): Map<string, Collection> {
  return new Map(list.map((c) => [lower(c.name), c]));
}

/** Equal apart from timestamps, which say when a change happened, not what it is. */
function sameCollection(a: Collection, b: Collection): boolean {
  return sameJson({ ...a, created: '', updated: '' }, { ...b, created: '', updated: '' });
}

function ftsFor(schema: DatabaseSchema, name: string): FtsConfig | undefined {
  const key = Object.keys(schema.fts).find((k) => lower(k) === lower(name));
  return key === undefined ? undefined : schema.fts[key];
}

const isView = (c: Collection | undefined) => c?.type === 'view';

/** A soft-dropped table keeps its rows but no longer carries the collection's indexes and unique constraints. */
async function dropConstraints(tx: Queryable, c: Collection): Promise<void> {
  const names = [...c.indexes.map((sql) => parseIndex(sql)?.name), ...c.fields.filter((f) => f.unique).map((f) => uniqueIndexName(c.name, f.name))];
  for (const name of names) if (name) await tx.exec(`DROP INDEX IF EXISTS ${quoteIdent(name)}`);
}

export async function realizeDatabase(tx: Queryable, before: DatabaseSchema, after: DatabaseSchema): Promise<DatabaseSchema> {
  const old = byName(before.collections);
  const next = byName(after.collections);

  // 1. What goes away: metadata rows (tables stay), views whose query changes, changed full-text tables.
  const dropsView = (b: Collection | undefined) => {
    const a = b && next.get(lower(b.name));
    return isView(b) && (!isView(a) || a!.options.query !== b!.options.query);
  };
  // PostgreSQL drops no view another reads: the readers go first. One that stays is made again
  // from its definition once a changed view is back; one reading a view that goes away is refused.
  const remake: { name: string; sql: string }[] = [];
  for (const b of before.collections) {
    const a = next.get(lower(b.name));
    if (dropsView(b)) {
      for (const d of (await dependentViews(tx, b.name)).reverse()) {
        if (!dropsView(old.get(lower(d.name))) && !remake.some((r) => r.name === d.name)) {
          if (!isView(a)) throw badRequest(`View "${d.name}" reads "${b.name}", which goes away; remove or change "${d.name}" too.`);
          remake.unshift(d);
        }
        await dropView(tx, d.name);
      }
      await dropView(tx, b.name);
    }
    if (!a || a.id !== b.id) await deleteCollectionRow(tx, b.id);
    if (!isView(b) && (!a || isView(a))) await dropConstraints(tx, b);
  }
  for (const [name, config] of Object.entries(before.fts)) {
    if (!sameJson(config, ftsFor(after, name) ?? null)) await dropFulltext(tx, name);
  }

  // 2. Tables: created or adopted, columns added, unique and user indexes brought in line.
  const written = new Map<string, Collection>();
  for (const a of after.collections) {
    if (isView(a)) continue;
    const b = old.get(lower(a.name));
    const previous = b && !isView(b) ? b : undefined;
    if (!(previous && previous.id === a.id && sameCollection(previous, a))) {
      await syncTable(tx, previous, a);
      if (previous && previous.id === a.id) await updateCollection(tx, a);
      else await insertCollection(tx, a);
    }
    written.set(lower(a.name), a);
  }

  // 3. Views, after the tables they read.
  const keptViews: string[] = [];
  for (const a of after.collections) {
    if (!isView(a)) continue;
    const b = old.get(lower(a.name));
    const kept = isView(b) && b!.options.query === a.options.query;
    if (kept) keptViews.push(a.name);
    const result = kept ? { ...a, fields: b!.fields } : { ...a, fields: await createView(tx, a.name, String(a.options.query)) };
    if (!(kept && b!.id === a.id && sameCollection(b!, result))) {
      if (b && b.id === a.id) await updateCollection(tx, result);
      else await insertCollection(tx, result);
    }
    written.set(lower(a.name), result);
  }

  for (const d of remake) {
    try {
      await tx.transaction((inner) => inner.exec(`CREATE VIEW ${quoteIdent(d.name)} AS ${d.sql.trim().replace(/;$/, '')}`));
    } catch (err) {
      throw badRequest(`View "${d.name}" reads a view whose query changed and no longer works: ${(err as Error).message}`);
    }
  }
  // SQLite lets a view go under another that reads it: a view kept as it was must still answer.
  if (before.collections.some(dropsView)) {
    for (const name of keptViews) {
      try {
        await tx.transaction((inner) => inner.all(`SELECT * FROM ${quoteIdent(name)} LIMIT 0`));
      } catch (err) {
        throw badRequest(`View "${name}" no longer works: ${(err as Error).message}`);
      }
    }
  }

  // 4. Full-text tables, once their columns exist.
  for (const [name, config] of Object.entries(after.fts)) {
    if (!sameJson(config, ftsFor(before, name) ?? null)) await createFulltext(tx, name, config);
  }

  return { collections: after.collections.map((c) => written.get(lower(c.name))!), fts: after.fts };
}
