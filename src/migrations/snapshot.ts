import { loadCollections } from '../collections/store.ts';
import type { DatabaseRegistry, Queryable } from '../storage/index.ts';
import { readFulltext } from './fts.ts';
import type { DatabaseSchema, InstanceSchema } from './model.ts';

/** The live schema of one database: collections (tables and views) and full-text indexes. */
export async function readDatabaseSchema(db: Queryable): Promise<DatabaseSchema> {
  return { collections: await loadCollections(db), fts: await readFulltext(db) };
}

/** The live schema of every database of the instance. */
export async function readInstanceSchema(registry: DatabaseRegistry): Promise<InstanceSchema> {
  const out: InstanceSchema = {};
  for (const { name } of registry.list()) out[name] = await readDatabaseSchema(await registry.get(name));
  return out;
}
