/**
 * A migration's saves of PocketBase collections (`$app.save(collection)`, `importCollections`), in
 * the file's transaction, and the PocketBase body turned into what Cairn's collections API takes.
 */
import { authSettingsOf } from '../collections/auth-settings.ts';
import type { Collection } from '../collections/model.ts';
import { pocketBaseSystemCollection } from '../collections/pocketbase-system.ts';
import { isSuperusers, SUPERUSERS_COLLECTION } from '../collections/superusers.ts';
import type { CollectionTransaction } from '../collections/transaction.ts';
import { badRequest } from '../errors.ts';
import { isPlainObject } from '../lib/objects.ts';
import { pocketBaseCollectionId, pocketBaseFieldId } from '../lib/ids.ts';

/** Saves read PocketBase's shapes (its field ids, its options). */
const POCKETBASE = { pocketBase: true };

/** PocketBase's own collections (`_superusers`, `_otps`, …): in every database already, never imported. */
export const isPocketBaseSystemCollection = (name: string) => isSuperusers(name) || pocketBaseSystemCollection(name) !== undefined;

/** The collections of one file's run, changed through its transaction. */
export class MigrationCollections {
  constructor(private readonly tx: CollectionTransaction) {}

  /** A PocketBase save of a collection: a found one is changed, a new one created (a name taken refuses it). */
  async save(sent: unknown, stored: boolean): Promise<Collection> {
    if (!isPlainObject(sent)) throw badRequest('A collection is an object.');
    // `_superusers` is Cairn's administrators, whose fields are fixed: a file that adds a field to it
    // (an avatar, a name) saves nothing, as the collection shows no such field (docs/pocketbase.md).
    if (isSuperusers(String(sent.id ?? '')) || isSuperusers(String(sent.name ?? ''))) return SUPERUSERS_COLLECTION;
    const found = stored && typeof sent.id === 'string' && sent.id !== '' ? this.tx.find(sent.id) : undefined;
    const body = unsetMissingMappedFields(asCairnBody(sent), found);
    if (found) return this.tx.update(found.id, body, POCKETBASE);
    if ((body.id ?? '') === '' && typeof body.name === 'string') {
      const id = pocketBaseCollectionId(String(body.type ?? 'base'), body.name);
      // Taken by a collection renamed since (PocketBase would refuse the save): Cairn's own id then.
      if (!this.tx.find(id)) body.id = id;
    }
    return this.tx.create(body, POCKETBASE);
  }

  /**
   * PocketBase's `importCollections(list, deleteMissing)` (a snapshot migration): each collection
   * matched by id, else by name, and created or changed; the others removed with `deleteMissing`.
   * Relations and rules may name collections and fields later in the list (`@request.auth.households`
   * before `users` has that relation), so a first pass saves each table without its rules and without
   * the relation fields whose target does not exist yet (nor, then, its indexes), and a second one
   * saves each in full; views
   * come after both (their queries read the tables, relation fields included).
   */
  async import(list: unknown, deleteMissing: boolean): Promise<void> {
    if (!Array.isArray(list)) throw badRequest('importCollections takes a list of collections.');
    const items = this.sameTargets(list.filter(isPlainObject).filter((c) => !isPocketBaseSystemCollection(String(c.name ?? ''))));
    const tables = items.filter((c) => c.type !== 'view');
    const target = (f: any): string | undefined => (f?.type === 'relation' ? String(f.collectionId ?? f.options?.collectionId ?? '') || undefined : undefined);
    const ids = new Map<Record<string, any>, string>();
    const placed = (c: Record<string, any>) => (typeof c.id === 'string' && this.tx.find(c.id)) || (typeof c.name === 'string' && this.tx.find(c.name)) || undefined;
    const save = async (item: Record<string, any>, body: Record<string, any>) => {
      const existing = placed(item);
      const saved = existing ? await this.tx.update(existing.id, body, POCKETBASE) : await this.tx.create(body, POCKETBASE);
      ids.set(item, saved.id);
    };
    for (const item of tables) {
      const fieldsKey = Array.isArray(item.fields) ? 'fields' : 'schema';
      const fields: any[] = Array.isArray(item[fieldsKey]) ? item[fieldsKey] : [];
      const ready = fields.filter((f) => {
        const to = target(f);
        // A relation to the collection itself waits too when the collection is new (nothing to find yet).
        return to === undefined || this.tx.find(to) !== undefined;
      });
      // The indexes too, when a field waits: one may be on its column.
      const first = ready.length === fields.length ? { ...item } : { ...item, [fieldsKey]: ready, indexes: [] };
      await save(item, unsetMissingMappedFields(asCairnBody(withoutRules(first)), placed(item)));
    }
    for (const item of tables) await this.tx.update(ids.get(item)!, unsetMissingMappedFields(asCairnBody(item), placed(item)), POCKETBASE);
    // Views once every table has all its fields: a view may read a relation field saved in the second pass.
    for (const item of items.filter((c) => c.type === 'view')) await save(item, asCairnBody(item));
    if (deleteMissing) {
      const keep = new Set(ids.values());
      // Dependents first: a collection others relate to is removed after them.
      const gone = this.tx.collections.list.filter((c) => !keep.has(c.id) && !c.system && !isPocketBaseSystemCollection(c.name));
      for (const c of gone.filter((c) => c.type === 'view')) await this.tx.remove(c.id, POCKETBASE);
      for (const c of gone.filter((c) => c.type !== 'view')) {
        const fields = c.fields.filter((f) => f.type !== 'relation');
        if (fields.length !== c.fields.length) await this.tx.update(c.id, { fields: fields.map((f) => ({ ...f })) }, POCKETBASE);
      }
      for (const c of gone.filter((c) => c.type !== 'view')) await this.tx.remove(c.id, POCKETBASE);
    }
  }

  /**
   * A listed collection matched by name to one of another id (the snapshot's `users` is
   * `systemprofiles0`, the database's has its own id): relations of the list naming the listed id
   * name the database's.
   */
  private sameTargets(items: Record<string, any>[]): Record<string, any>[] {
    const ids = new Map<string, string>();
    for (const c of items) {
      if (typeof c.id !== 'string' || c.id === '' || this.tx.find(c.id)) continue;
      const byName = typeof c.name === 'string' ? this.tx.find(c.name) : undefined;
      if (byName && byName.id !== c.id) ids.set(c.id, byName.id);
    }
    if (ids.size === 0) return items;
    const retarget = (f: any) => {
      if (!isPlainObject(f) || f.type !== 'relation') return f;
      const out: Record<string, any> = { ...f };
      if (typeof out.collectionId === 'string' && ids.has(out.collectionId)) out.collectionId = ids.get(out.collectionId);
      if (isPlainObject(out.options) && typeof out.options.collectionId === 'string' && ids.has(out.options.collectionId)) out.options = { ...out.options, collectionId: ids.get(out.options.collectionId) };
      return out;
    };
    return items.map((c) => ({ ...c, ...(Array.isArray(c.fields) ? { fields: c.fields.map(retarget) } : {}), ...(Array.isArray(c.schema) ? { schema: c.schema.map(retarget) } : {}) }));
  }
}

/**
 * A collection as PocketBase ≥ 0.23 writes it, in the values Cairn's collections API takes: a field
 * without an id gets PocketBase's (its type and the CRC-32 of its name), `0` for
 * "the default" in `maxSize`, `maxSelect` (one value) and the like is left out, and the indexes
 * PocketBase makes itself (named `_…`, on `created` and the like; Cairn has its own) are not carried.
 */
export function asCairnBody(body: Record<string, any>): Record<string, any> {
  const out: Record<string, any> = { ...body };
  const key = Array.isArray(body.fields) ? 'fields' : Array.isArray(body.schema) ? 'schema' : undefined;
  if (key) {
    out[key] = body[key].map((f: any) => {
      if (!isPlainObject(f)) return f;
      const field = { ...f };
      // PocketBase's id for a field given none: later files find the field by it (`fields.getById`).
      if ((field.id === undefined || field.id === '') && typeof f.name === 'string' && f.name !== '' && typeof f.type === 'string') field.id = pocketBaseFieldId(f.type, f.name);
      const options = isPlainObject(f.options) ? (field.options = { ...f.options }) : undefined;
      for (const target of [field, options]) {
        if (!target) continue;
        for (const k of ['maxSize', 'maxSelect', 'minSelect', 'max', 'min']) {
          if (target[k] === 0 && (k !== 'max' && k !== 'min' ? true : f.type === 'text' || f.type === 'editor' || f.type === 'password' || f.type === 'json')) delete target[k];
        }
      }
      return field;
    });
  }
  if (Array.isArray(body.indexes)) out.indexes = body.indexes.filter((i: unknown) => typeof i !== 'string' || !/INDEX\s+(?:IF\s+NOT\s+EXISTS\s+)?[`"\[]?_/i.test(i));
  return out;
}

const RULES = ['listRule', 'viewRule', 'createRule', 'updateRule', 'deleteRule', 'authRule', 'manageRule'];

/** A collection with every rule closed (null), for a first save before the fields its rules name exist. */
function withoutRules(body: Record<string, any>): Record<string, any> {
  const out: Record<string, any> = { ...body };
  for (const k of RULES) if (k in out) out[k] = null;
  if (isPlainObject(out.options) && 'manageRule' in out.options) out.options = { ...out.options, manageRule: null };
  return out;
}

/**
 * As PocketBase's save does, an OAuth2 mapping to a field the collection no longer lists is emptied
 * (a file that removes the default `name` of `users` leaves `oauth2.mappedFields.name` behind).
 */
function unsetMissingMappedFields(body: Record<string, any>, existing?: Collection): Record<string, any> {
  const list = Array.isArray(body.fields) ? body.fields : Array.isArray(body.schema) ? body.schema : undefined;
  if ((body.type ?? existing?.type) !== 'auth' || !list) return body;
  // A body without OAuth2 settings (v0.22's shape) keeps the stored ones, the mapping included.
  if (body.oauth2 === undefined && !(isPlainObject(body.options) && body.options.oauth2 !== undefined) && existing?.type === 'auth') {
    body = { ...body, oauth2: { mappedFields: { ...authSettingsOf(existing).oauth2.mappedFields } } };
  }
  const names = new Set(list.filter(isPlainObject).map((f: any) => f.name));
  const fix = (oauth2: unknown) => {
    if (!isPlainObject(oauth2) || !isPlainObject(oauth2.mappedFields)) return oauth2;
    const mapped = { ...oauth2.mappedFields };
    for (const [k, v] of Object.entries(mapped)) if (typeof v === 'string' && v !== '' && !names.has(v)) mapped[k] = '';
    return { ...oauth2, mappedFields: mapped };
  };
  const out = { ...body };
  if (out.oauth2 !== undefined) out.oauth2 = fix(out.oauth2);
  if (isPlainObject(out.options) && out.options.oauth2 !== undefined) out.options = { ...out.options, oauth2: fix(out.options.oauth2) };
  return out;
}
