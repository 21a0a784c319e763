import { authSettingsOf } from '../collections/auth-settings.ts';
import { collectionJson } from '../collections/pocketbase-shapes.ts';
import type { Collection } from '../collections/model.ts';
import { pocketBaseSystemCollection } from '../collections/pocketbase-system.ts';
import { isSuperusers, SUPERUSERS_COLLECTION } from '../collections/superusers.ts';
import type { AdminService } from '../auth/admins.ts';
import { superuserJson } from '../auth/superusers.ts';
import { CollectionTransaction } from '../collections/transaction.ts';
import { badRequest, isApiError } from '../errors.ts';
import { pocketBaseCollectionId, pocketBaseFieldId } from '../lib/ids.ts';
import type { HookServices } from '../hooks/facade.ts';
import { NotFoundError } from '../hooks/errors.ts';
import { HookRecords } from '../hooks/records-api.ts';
import { withFiles } from '../pbhooks/ops.ts';
import type { Transaction } from '../storage/index.ts';

/**
 * What migrations reach of the instance: the hooks' services, and the administrators (PocketBase's
 * superusers, which migrations create: `dao.saveAdmin`, a `_superusers` record).
 */
export type MigrationServices = HookServices & { admins?: AdminService };

/** An `$app` operation of a migration, answered by the host (the names are the pb_hooks runtime's). */
export type MigrationOps = (op: string, args: any[]) => Promise<unknown>;

/**
 * What one run of one file reaches on the host: its database's collections, records and raw SQL,
 * all through the file's transaction, and the instance's settings (written once the file ran to its
 * end, so that a file that fails leaves them as they were).
 */
export interface MigrationHost {
  ops: MigrationOps;
  /** Saves what the file changed outside its database (the settings); call when it ran to its end. */
  finish(): Promise<void>;
  /** Ends the file's view of the collections (call whatever happened, before the runner invalidates them). */
  close(): void;
}

/** `authToken.duration` shown for a collection that keeps Cairn's default (PocketBase's 14 days). */
const TOKEN_TTL = 1_209_600;

function json(c: Collection): Record<string, unknown> {
  return collectionJson(c, { tokenTtl: TOKEN_TTL });
}

/** PocketBase's own collections (`_superusers`, `_otps`, …): in every database already, never imported. */
const isPocketBaseSystemCollection = (name: string) => isSuperusers(name) || pocketBaseSystemCollection(name) !== undefined;

const isObject = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v);

export async function migrationHost(services: MigrationServices, run: { db: string; tx: Transaction }): Promise<MigrationHost> {
  const database = await services.registry.get(run.db);
  const collections = await CollectionTransaction.open(services.collections, database, run.tx);
  const records = new HookRecords(() => services, run.db, { db: run.db, tx: run.tx });
  const pocketBase = { pocketBase: true };
  const slot = { current: services };
  let settings: Record<string, unknown> | undefined;
  let settingsChecked = true;
  /** Superusers saved or deleted by the file, by email (null: deleted), written when it ran to its end. */
  const superusers = new Map<string, { email: string; password?: string } | null>();

  /** A superuser by email: one the file saved, else a stored one. */
  async function superuser(email: string): Promise<Record<string, unknown>> {
    const key = email.toLowerCase();
    if (superusers.has(key)) {
      const pending = superusers.get(key);
      if (pending) return { id: '', email: pending.email, collectionId: SUPERUSERS_COLLECTION.id, collectionName: SUPERUSERS_COLLECTION.name };
    } else {
      const row = await services.admins?.findByEmail(email);
      if (row) return superuserJson(row);
    }
    throw new NotFoundError(`No superuser "${email}".`);
  }

  function saveSuperuser(data: unknown): Record<string, unknown> {
    const d = (isObject(data) ? data : {}) as { email?: unknown; password?: unknown };
    if (typeof d.email !== 'string' || d.email === '') throw badRequest('Failed to create record.', { email: { code: 'validation_required', message: 'Cannot be blank.' } });
    superusers.set(d.email.toLowerCase(), { email: d.email, password: typeof d.password === 'string' && d.password !== '' ? d.password : undefined });
    return { id: '', email: d.email, collectionId: SUPERUSERS_COLLECTION.id, collectionName: SUPERUSERS_COLLECTION.name };
  }

  /** A PocketBase save of a collection: a found one is changed, a new one created (a name taken refuses it). */
  async function saveCollection(sent: unknown, stored: boolean): Promise<Collection> {
    if (!isObject(sent)) throw badRequest('A collection is an object.');
    // `_superusers` is Cairn's administrators, whose fields are fixed: a file that adds a field to it
    // (an avatar, a name) saves nothing, as the collection shows no such field (docs/pocketbase.md).
    if (isSuperusers(String(sent.id ?? '')) || isSuperusers(String(sent.name ?? ''))) return SUPERUSERS_COLLECTION;
    const found = stored && typeof sent.id === 'string' && sent.id !== '' ? collections.find(sent.id) : undefined;
    const body = unsetMissingMappedFields(asCairnBody(sent), found);
    const existing = found;
    if (existing) return collections.update(existing.id, body, pocketBase);
    if ((body.id ?? '') === '' && typeof body.name === 'string') {
      const id = pocketBaseCollectionId(String(body.type ?? 'base'), body.name);
      // Taken by a collection renamed since (PocketBase would refuse the save): Cairn's own id then.
      if (!collections.find(id)) body.id = id;
    }
    return collections.create(body, pocketBase);
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
  async function importCollections(list: unknown, deleteMissing: boolean): Promise<void> {
    if (!Array.isArray(list)) throw badRequest('importCollections takes a list of collections.');
    const items = sameTargets(list.filter(isObject).filter((c) => !isPocketBaseSystemCollection(String(c.name ?? ''))));
    const tables = items.filter((c) => c.type !== 'view');
    const target = (f: any): string | undefined => (f?.type === 'relation' ? String(f.collectionId ?? f.options?.collectionId ?? '') || undefined : undefined);
    const ids = new Map<Record<string, any>, string>();
    const placed = (c: Record<string, any>) => (typeof c.id === 'string' && collections.find(c.id)) || (typeof c.name === 'string' && collections.find(c.name)) || undefined;
    const save = async (item: Record<string, any>, body: Record<string, any>) => {
      const existing = placed(item);
      const saved = existing ? await collections.update(existing.id, body, pocketBase) : await collections.create(body, pocketBase);
      ids.set(item, saved.id);
    };
    for (const item of tables) {
      const fieldsKey = Array.isArray(item.fields) ? 'fields' : 'schema';
      const fields: any[] = Array.isArray(item[fieldsKey]) ? item[fieldsKey] : [];
      const ready = fields.filter((f) => {
        const to = target(f);
        // A relation to the collection itself waits too when the collection is new (nothing to find yet).
        return to === undefined || collections.find(to) !== undefined;
      });
      // The indexes too, when a field waits: one may be on its column.
      const first = ready.length === fields.length ? { ...item } : { ...item, [fieldsKey]: ready, indexes: [] };
      await save(item, unsetMissingMappedFields(asCairnBody(withoutRules(first)), placed(item)));
    }
    for (const item of tables) await collections.update(ids.get(item)!, unsetMissingMappedFields(asCairnBody(item), placed(item)), pocketBase);
    // Views once every table has all its fields: a view may read a relation field saved in the second pass.
    for (const item of items.filter((c) => c.type === 'view')) await save(item, asCairnBody(item));
    if (deleteMissing) {
      const keep = new Set(ids.values());
      // Dependents first: a collection others relate to is removed after them.
      const gone = collections.collections.list.filter((c) => !keep.has(c.id) && !c.system && !isPocketBaseSystemCollection(c.name));
      for (const c of gone.filter((c) => c.type === 'view')) await collections.remove(c.id, pocketBase);
      for (const c of gone.filter((c) => c.type !== 'view')) {
        const fields = c.fields.filter((f) => f.type !== 'relation');
        if (fields.length !== c.fields.length) await collections.update(c.id, { fields: fields.map((f) => ({ ...f })) }, pocketBase);
      }
      for (const c of gone.filter((c) => c.type !== 'view')) await collections.remove(c.id, pocketBase);
    }
  }

  /**
   * A listed collection matched by name to one of another id (the snapshot's `users` is
   * `systemprofiles0`, the database's has its own id): relations of the list naming the listed id
   * name the database's.
   */
  function sameTargets(items: Record<string, any>[]): Record<string, any>[] {
    const ids = new Map<string, string>();
    for (const c of items) {
      if (typeof c.id !== 'string' || c.id === '' || collections.find(c.id)) continue;
      const byName = typeof c.name === 'string' ? collections.find(c.name) : undefined;
      if (byName && byName.id !== c.id) ids.set(c.id, byName.id);
    }
    if (ids.size === 0) return items;
    const retarget = (f: any) => {
      if (!isObject(f) || f.type !== 'relation') return f;
      const out: Record<string, any> = { ...f };
      if (typeof out.collectionId === 'string' && ids.has(out.collectionId)) out.collectionId = ids.get(out.collectionId);
      if (isObject(out.options) && ids.has(out.options.collectionId)) out.options = { ...out.options, collectionId: ids.get(out.options.collectionId) };
      return out;
    };
    return items.map((c) => ({ ...c, ...(Array.isArray(c.fields) ? { fields: c.fields.map(retarget) } : {}), ...(Array.isArray(c.schema) ? { schema: c.schema.map(retarget) } : {}) }));
  }

  const adminEmail = (id: string) => emailOf(services, id);

  const ops: MigrationOps = async (op, args) => {
    if (['create', 'update', 'findFirst', 'delete'].includes(op) && typeof args[0] === 'string' && isSuperusers(args[0])) {
      if (op === 'create') return saveSuperuser(args[1]);
      if (op === 'update') return saveSuperuser({ ...(isObject(args[2]) ? args[2] : {}), email: (isObject(args[2]) && args[2].email) || (await adminEmail(String(args[1]))) });
      if (op === 'delete') {
        superusers.set((await adminEmail(String(args[1]))).toLowerCase(), null);
        return null;
      }
      const params = isObject(args[2]) ? args[2] : {};
      return superuser(String(params.email ?? Object.values(params)[0] ?? ''));
    }
    switch (op) {
      case 'saveAdmin':
        return saveSuperuser(args[0]);
      case 'findAdminByEmail':
        return superuser(String(args[0]));
      case 'deleteAdmin':
        superusers.set(String(isObject(args[0]) ? args[0].email : args[0]).toLowerCase(), null);
        return null;
      case 'collection': {
        if (isSuperusers(String(args[0]))) return json(SUPERUSERS_COLLECTION);
        const found = collections.find(String(args[0]));
        return found ? json(found) : records.collection(args[0]);
      }
      case 'collections':
        return collections.collections.list.filter((c) => !isPocketBaseSystemCollection(c.name)).map(json);
      case 'collectionsByType':
        return collections.collections.list.filter((c) => c.type === String(args[0])).map(json);
      case 'saveCollection':
        return json(await saveCollection(args[0], args[1] === true));
      case 'deleteCollection':
        await collections.remove(String(args[0]), pocketBase);
        return null;
      case 'importCollections':
        await importCollections(args[0], args[1] === true);
        return null;
      case 'findById':
        return records.findById(args[0], args[1]);
      case 'findFirst':
        return records.findFirst(args[0], args[1], args[2] ?? undefined);
      case 'find':
        return records.find(args[0], clean(args[1]));
      case 'count':
        return records.count(args[0], args[1] ?? undefined, args[2] ?? undefined);
      // Files a file made (`$filesystem.fileFromPath` of an asset beside it) are stored as uploads are.
      case 'create':
        return withFiles(slot, withConfirm(args[1]), (data) => records.create(args[0], data ?? {}));
      case 'update':
        return withFiles(slot, withConfirm(args[2]), (data) => records.update(args[0], args[1], data ?? {}));
      case 'delete':
        await records.delete(args[0], args[1]);
        return null;
      case 'recordsBySql':
        return records.byQuery(args[0], args[1], args[2] ?? {});
      case 'expand':
        return records.expanded(args[0], args[1], args[2]);
      case 'sql':
        return records.sql(args[0], args[1] ?? {}, args[2]);
      case 'settings':
        return settings ?? (await services.settings.view());
      case 'saveSettings':
        if (!isObject(args[0])) throw badRequest('The settings are an object.');
        settings = args[0];
        // v0.22's `dao.saveSettings` writes the settings as they are, unvalidated (its forms check them).
        settingsChecked = args[1] !== false;
        return settings;
      case 'dataDir':
        return process.cwd();
      default:
        throw new Error(`${op} is not available in Cairn's pb_migrations`);
    }
  };

  return {
    ops,
    async finish() {
      for (const [email, pending] of superusers) {
        const admins = services.admins;
        if (!admins) throw new Error('superusers cannot be saved from pb_migrations here');
        const row = await admins.findByEmail(email);
        if (pending === null) {
          if (row) await admins.delete(row.id);
        } else if (row) {
          if (pending.password) await admins.update(row.id, { password: pending.password, passwordConfirm: pending.password });
        } else await admins.create({ email: pending.email, password: pending.password, passwordConfirm: pending.password });
      }
      if (!settings) return;
      // Only the sections this instance has (a PocketBase settings object carries others, e.g. `batch`).
      const known = await services.settings.view();
      const changed = Object.fromEntries(Object.entries(settings).filter(([k, v]) => k in known && JSON.stringify(v) !== JSON.stringify(known[k])));
      if (Object.keys(changed).length === 0) return;
      if (settingsChecked) {
        await services.settings.patch(changed);
        return;
      }
      // Unvalidated (v0.22's dao): Cairn's settings are always valid, so a value it refuses (a blank
      // `meta.appName`, an `appUrl` without its scheme) stays as it was and the rest is saved.
      for (const [section, value] of Object.entries(changed)) {
        try {
          await services.settings.patch({ [section]: value });
        } catch (err) {
          const refused = isApiError(err) && isObject(err.data) && isObject(err.data[section]) ? Object.keys(err.data[section]) : [];
          if (!isObject(value) || refused.length === 0) continue;
          const rest = Object.fromEntries(Object.entries(value).filter(([k]) => !refused.includes(k)));
          await services.settings.patch({ [section]: rest }).catch(() => undefined);
        }
      }
    },
    close: () => collections.close(),
  };
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
      if (!isObject(f)) return f;
      const field = { ...f };
      // PocketBase's id for a field given none: later files find the field by it (`fields.getById`).
      if ((field.id === undefined || field.id === '') && typeof f.name === 'string' && f.name !== '' && typeof f.type === 'string') field.id = pocketBaseFieldId(f.type, f.name);
      const options = isObject(f.options) ? (field.options = { ...f.options }) : undefined;
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
  if (isObject(out.options) && 'manageRule' in out.options) out.options = { ...out.options, manageRule: null };
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
  if (body.oauth2 === undefined && !(isObject(body.options) && body.options.oauth2 !== undefined) && existing?.type === 'auth') {
    body = { ...body, oauth2: { mappedFields: { ...authSettingsOf(existing).oauth2.mappedFields } } };
  }
  const names = new Set(list.filter(isObject).map((f: any) => f.name));
  const fix = (oauth2: unknown) => {
    if (!isObject(oauth2) || !isObject(oauth2.mappedFields)) return oauth2;
    const mapped = { ...oauth2.mappedFields };
    for (const [k, v] of Object.entries(mapped)) if (typeof v === 'string' && v !== '' && !names.has(v)) mapped[k] = '';
    return { ...oauth2, mappedFields: mapped };
  };
  const out = { ...body };
  if (out.oauth2 !== undefined) out.oauth2 = fix(out.oauth2);
  if (isObject(out.options) && out.options.oauth2 !== undefined) out.options = { ...out.options, oauth2: fix(out.options.oauth2) };
  return out;
}

/** The email of a stored superuser by id (a record a file found and then changes or deletes). */
async function emailOf(services: MigrationServices, id: string): Promise<string> {
  const row = await services.admins?.get(id).catch(() => undefined);
  if (!row) throw new NotFoundError(`No superuser "${id}".`);
  return row.email;
}

/** PocketBase's save sets a password without its confirmation (a form asks for that, not the model). */
function withConfirm(data: unknown): Record<string, unknown> {
  const d = isObject(data) ? { ...data } : {};
  if (typeof d.password === 'string' && d.passwordConfirm === undefined) d.passwordConfirm = d.password;
  return d;
}

function clean(options: any): any {
  const out: any = {};
  for (const [k, v] of Object.entries(options ?? {})) if (v !== undefined && v !== null && v !== '') out[k] = v;
  return out;
}
