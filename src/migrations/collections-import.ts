import type { Collection } from '../collections/model.ts';
import { checkViewCollectionRules, normalizeCollection } from '../collections/normalize.ts';
import { type CollectionService, refuseRetypingValues } from '../collections/service.ts';
import { pocketBaseSystemCollection } from '../collections/pocketbase-system.ts';
import { isSuperusers, SUPERUSERS_COLLECTION } from '../collections/superusers.ts';
import { isApiError, validationFailed } from '../errors.ts';
import type { Database } from '../storage/index.ts';
import type { DatabaseSchema } from './model.ts';
import { realizeDatabase } from './realize.ts';
import { readDatabaseSchema } from './snapshot.ts';

const failure = (message: string) =>
  validationFailed({ collections: { code: 'validation_collections_import_failure', message } }, 'Failed to import collections.');

const lower = (s: string) => s.toLowerCase();

/** Cairn's own collection standing for PocketBase's system collection of that name, if it is one. */
function systemCollectionNamed(name: string): Collection | undefined {
  return isSuperusers(name) && lower(name) === '_superusers' ? SUPERUSERS_COLLECTION : pocketBaseSystemCollection(name);
}

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
  await service.changeSchema(db, async (tx) => {
    const before: DatabaseSchema = await readDatabaseSchema(tx);
    const imported: Collection[] = [];
    // An export's id for a collection matched by name under another id (PocketBase's own
    // `_superusers`, `_pb_users_auth_` over an older Cairn `users`): relations naming it resolve.
    const aliases = new Map<string, Collection>();
    const find = (nameOrId: string) =>
      imported.find((c) => c.id === nameOrId || lower(c.name) === lower(nameOrId)) ??
      before.collections.find((c) => c.id === nameOrId || lower(c.name) === lower(nameOrId)) ??
      aliases.get(nameOrId);
    for (const [index, item] of items.entries()) {
      const raw = (typeof item === 'object' && item !== null ? item : {}) as Record<string, unknown>;
      const label = typeof raw.name === 'string' && raw.name !== '' ? raw.name : `#${index}`;
      // PocketBase's system collections are Cairn's own: matched, never changed by an import.
      const own = typeof raw.name === 'string' ? systemCollectionNamed(raw.name) : undefined;
      if (own) {
        if (typeof raw.id === 'string' && raw.id !== own.id) aliases.set(raw.id, own);
        continue;
      }
      const existing =
        before.collections.find((c) => typeof raw.id === 'string' && c.id === raw.id) ??
        before.collections.find((c) => typeof raw.name === 'string' && lower(c.name) === lower(raw.name));
      if (existing && typeof raw.id === 'string' && raw.id !== existing.id) aliases.set(raw.id, existing);
      if (imported.some((c) => existing && c.id === existing.id)) throw failure(`Collection "${label}" is given twice.`);
      let next: Collection;
      try {
        next = normalizeCollection(item, existing, {
          find,
          all: [...imported, ...before.collections],
          validateRule: service.validateRule,
          validateOptions: service.validateOptions,
        });
      } catch (err) {
        if (isApiError(err) && err.status === 400) throw failure(`Collection "${label}": ${err.message} ${JSON.stringify(err.data)}`);
        throw err;
      }
      // Two new collections of one name (or id) would meet only at the metadata table's unique key.
      if (imported.some((c) => c.id === next.id || lower(c.name) === lower(next.name))) throw failure(`Collection "${label}" is given twice.`);
      imported.push(next);
    }
    for (const next of imported) {
      const previous = before.collections.find((c) => c.id === next.id);
      if (previous) await refuseRetypingValues(tx, previous, next);
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
}
