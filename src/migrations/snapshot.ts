import { loadCollections } from '../collections/store.ts';
import type { DatabaseRegistry, Queryable } from '../storage/index.ts';
import { readFulltext } from './fts.ts';
import type { DatabaseSchema, InstanceSchema } from './model.ts';

/** The live schema of one database: collections (tables and views) and full-text indexes. */
export async function readDatabaseSchema(db: Queryable): Promise<DatabaseSchema> {
  const collections = await loadCollections(db);
  const tables = new Set(collections.filter((c) => c.type !== 'view').map((c) => c.name.toLowerCase()));
  // A full-text index outlives a collection deleted through the collections API (it is dropped with
  // the table's metadata only by migrations); it is part of the schema only while its collection is.
  const fts = Object.fromEntries(Object.entries(await readFulltext(db)).filter(([name]) => tables.has(name.toLowerCase())));
  return { collections, fts };
}

/** The live schema of every database of the instance. */
export async function readInstanceSchema(registry: DatabaseRegistry): Promise<InstanceSchema> {
  const out: InstanceSchema = {};
  for (const { name } of registry.list()) out[name] = await readDatabaseSchema(await registry.get(name));
  return out;
}
