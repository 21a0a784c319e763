import type { Collection } from '../collections/model.ts';
import { checkViewCollectionRules, normalizeCollection } from '../collections/normalize.ts';
import type { CollectionService } from '../collections/service.ts';
import { isApiError, validationFailed } from '../errors.ts';
import type { Database } from '../storage/index.ts';
import type { DatabaseSchema } from './model.ts';
import { realizeDatabase } from './realize.ts';
import { readDatabaseSchema } from './snapshot.ts';

const failure = (message: string) =>
  validationFailed({ collections: { code: 'validation_collections_import_failure', message } }, 'Failed to import collections.');

const lower = (s: string) => s.toLowerCase();

/**
 * PocketBase's `PUT /api/collections/import {collections, deleteMissing}`: the database's collections
 * become the given ones, in one transaction. Each is matched to an existing collection by id, else
 * by name, and validated as the collections API validates a create or an update (so Cairn's
 * append-only rules hold: no renames, no type changes); `deleteMissing` removes the others that are
 * not system collections, as the collections API does (the soft drop: their tables stay). The change
 * is made as a migration makes one (`realizeDatabase`), so tables, indexes and views follow.
 */
export async function importCollections(db: Database, service: CollectionService, body: unknown): Promise<void> {
  const input = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : {};
  const items = input.collections;
  if (!Array.isArray(items) || items.length === 0) {
    throw validationFailed({ collections: { code: 'validation_required', message: 'Cannot be blank.' } }, 'Failed to import collections.');
  }
  const deleteMissing = input.deleteMissing === true;
  try {
    await db.transaction(async (tx) => {
      const before: DatabaseSchema = await readDatabaseSchema(tx);
      const imported: Collection[] = [];
      const find = (nameOrId: string) =>
        imported.find((c) => c.id === nameOrId || lower(c.name) === lower(nameOrId)) ??
        before.collections.find((c) => c.id === nameOrId || lower(c.name) === lower(nameOrId));
      for (const [index, item] of items.entries()) {
        const raw = (typeof item === 'object' && item !== null ? item : {}) as Record<string, unknown>;
        const label = typeof raw.name === 'string' && raw.name !== '' ? raw.name : `#${index}`;
        const existing =
          before.collections.find((c) => typeof raw.id === 'string' && c.id === raw.id) ??
          before.collections.find((c) => typeof raw.name === 'string' && lower(c.name) === lower(raw.name));
        if (imported.some((c) => existing && c.id === existing.id)) throw failure(`Collection "${label}" is given twice.`);
        try {
          imported.push(
            normalizeCollection(item, existing, {
              find,
              all: [...imported, ...before.collections],
              validateRule: service.validateRule,
              validateOptions: service.validateOptions,
            }),
          );
        } catch (err) {
          if (isApiError(err) && err.status === 400) throw failure(`Collection "${label}": ${err.message} ${JSON.stringify(err.data)}`);
          throw err;
        }
      }
      const kept = before.collections.filter((c) => !imported.some((i) => i.id === c.id) && (!deleteMissing || c.system));
      const after: DatabaseSchema = { collections: [...kept, ...imported], fts: {} };
      for (const [name, config] of Object.entries(before.fts)) {
        if (after.collections.some((c) => lower(c.name) === lower(name))) after.fts[name] = config;
      }
      let written: DatabaseSchema;
      try {
        written = await realizeDatabase(tx, before, after);
      } catch (err) {
        if (isApiError(err) && err.status === 400) throw failure(`${err.message} ${JSON.stringify(err.data)}`);
        throw err;
      }
      // A view's rules are checked once its query gave it fields.
      const ctx = { find, all: written.collections, validateRule: service.validateRule, validateOptions: service.validateOptions };
      for (const view of written.collections.filter((c) => c.type === 'view' && imported.some((i) => i.id === c.id))) {
        try {
          checkViewCollectionRules(view, ctx, true);
        } catch (err) {
          if (isApiError(err) && err.status === 400) throw failure(`Collection "${view.name}": ${err.message} ${JSON.stringify(err.data)}`);
          throw err;
        }
      }
    });
  } finally {
    await service.invalidate(db);
  }
}
