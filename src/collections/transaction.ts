import { badRequest, conflict, type FieldError, isApiError, notFound, validationFailed } from '../errors.ts';
import { quoteIdent } from '../lib/identifiers.ts';
import { createView, dropView, renameColumn, replaceView } from '../migrations/views.ts';
import { baseDatabase, type Database, type Transaction } from '../storage/index.ts';
import { typeOf } from './fields/registry.ts';
import { relationTarget } from './fields/relation.ts';
import type { Collection, FieldDef } from './model.ts';
import { checkViewCollectionRules, type NormalizeContext, normalizeCollection } from './normalize.ts';
import { POCKETBASE_SYSTEM_COLLECTIONS, pocketBaseSystemCollection } from './pocketbase-system.ts';
import { pocketBaseViewFields } from './view-sources.ts';
import { type CollectionService, CollectionSet, createCollectionIn } from './service.ts';
import { deleteCollectionRow, loadCollections, updateCollection } from './store.ts';
import { syncTable, uniqueIndexName } from './table-sync.ts';

/** PocketBase's id of the default `users` collection, which its apps' migrations and relations name. */
export const POCKETBASE_USERS_ID = '_pb_users_auth_';

/** The ids PocketBase keeps as given (`pbc_1125843985`, `_pb_users_auth_`, v0.22's 15 characters). */
const KEPT_ID = /^\w{1,100}$/;

/**
 * How a change is made. `pocketBase`: as PocketBase's own save makes it (a pb_migrations file): the
 * fields sent are the collection's fields, matched to the stored ones by id; a field or collection
 * given a new name is renamed (its column or table with it); a field whose type changes, or whose
 * column would change kind, is replaced (its column too); a deleted collection's table is dropped.
 * Without it, the collections API's append-only rules hold (docs/api.md#append-only-schema).
 */
export interface ChangeOptions {
  pocketBase?: boolean;
}

/**
 * The collections of one database, changed inside a transaction the caller holds (a pb_migrations
 * file runs in one; the collections API opens its own per change). Reads see what the transaction
 * has done so far; every change is written through it, so it commits or rolls back with the caller's
 * other writes. While it is open, `CollectionService.all` answers these collections for views of the
 * database bound to that transaction (the records domain's writes and reads inside it see them);
 * other connections keep the committed ones until the caller commits and calls `invalidate`.
 */
export class CollectionTransaction {
  private constructor(
    private readonly service: CollectionService,
    readonly db: Database,
    readonly tx: Transaction,
    private set: CollectionSet,
  ) {}

  /** Takes the database's schema lock, reads the collections through `tx` and makes them what the
   * service answers inside it. */
  static async open(service: CollectionService, db: Database, tx: Transaction): Promise<CollectionTransaction> {
    await service.lockSchema(tx, db);
    const list = await loadCollections(tx);
    const t = new CollectionTransaction(service, baseDatabase(db), tx, new CollectionSet([...list, ...POCKETBASE_SYSTEM_COLLECTIONS]));
    service.track(tx, t.set);
    return t;
  }

  /** Stops answering these collections for the transaction (call once it ended, then `invalidate`). */
  close(): void {
    this.service.track(this.tx, undefined);
  }

  get collections(): CollectionSet {
    return this.set;
  }

  /** By name (case-insensitive) or id; PocketBase's id of the default `users` finds Cairn's `users`. */
  find(nameOrId: string): Collection | undefined {
    const found = this.set.find(nameOrId);
    if (found || nameOrId !== POCKETBASE_USERS_ID) return found;
    const users = this.set.find('users');
    return users?.type === 'auth' ? users : undefined;
  }

  get(nameOrId: string): Collection {
    const c = this.find(nameOrId);
    if (!c) throw notFound(`Collection "${nameOrId}" not found.`);
    return c;
  }

  private context(pocketBase = false): NormalizeContext {
    const validateRule: NormalizeContext['validateRule'] = pocketBase ? (c, rule, others) => this.service.validateRule(c, rule, others, { pocketBase }) : this.service.validateRule;
    return { find: (n) => this.find(n), all: this.set.list, validateRule, validateOptions: this.service.validateOptions };
  }

  private async reload(): Promise<void> {
    this.set = new CollectionSet([...(await loadCollections(this.tx)), ...POCKETBASE_SYSTEM_COLLECTIONS]);
    this.service.track(this.tx, this.set);
  }

  async create(body: unknown, options: ChangeOptions = {}): Promise<Collection> {
    const raw = (body ?? {}) as { id?: unknown; name?: unknown };
    if (typeof raw.name === 'string' && this.set.find(raw.name)?.name.toLowerCase() === raw.name.toLowerCase()) {
      throw conflict(`Collection "${raw.name}" already exists.`, { name: { code: 'validation_collection_name_exists', message: 'Collection name must be unique (case insensitive).' } });
    }
    let collection = normalizeCollection(body, undefined, this.context(options.pocketBase));
    // PocketBase keeps the id given (`pbc_…`): later files and relations name the collection by it.
    if (options.pocketBase && typeof raw.id === 'string' && KEPT_ID.test(raw.id) && raw.id !== collection.id) {
      if (this.set.find(raw.id)) throw conflict(`A collection with the id "${raw.id}" already exists.`);
      collection = { ...collection, id: raw.id };
    }
    if (collection.type === 'view') collection = await this.viewWithFields(collection, false, options.pocketBase);
    else if (options.pocketBase) await this.clearOldTable(collection);
    await createCollectionIn(this.tx, collection);
    await this.reload();
    return collection;
  }

  async update(nameOrId: string, body: unknown, options: ChangeOptions = {}): Promise<Collection> {
    let existing = this.get(nameOrId);
    if (pocketBaseSystemCollection(existing.name) === existing) throw badRequest(`"${existing.name}" is a system collection and cannot be changed.`);
    const stored = existing;
    if (options.pocketBase) ({ existing, body } = await this.asPocketBaseChanges(existing, body));
    let next = normalizeCollection(body, existing, this.context(options.pocketBase));
    if (next.type === 'view') {
      if (next.options.query !== stored.options.query || next.name !== stored.name) {
        const made = next;
        next = await replaceView(this.tx, stored.name, () => this.viewWithFields(made, true, options.pocketBase));
      } else checkViewCollectionRules(next, this.context(options.pocketBase), true);
    } else await syncTable(this.tx, existing, next);
    await updateCollection(this.tx, next);
    await this.reload();
    return next;
  }

  /**
   * Removes a collection: its metadata, and with `pocketBase` its table or view too (PocketBase drops
   * it; the collections API keeps the table, so that re-creating the name adopts its data).
   */
  async remove(nameOrId: string, options: ChangeOptions = {}): Promise<void> {
    const existing = this.get(nameOrId);
    // PocketBase's `users` is an ordinary collection a migration may delete (an app that keeps its
    // users elsewhere, or re-creates them): Cairn's default one is `system` for the collections API only.
    const deletable = options.pocketBase === true && existing.name === 'users';
    if ((existing.system && !deletable) || pocketBaseSystemCollection(existing.name) === existing) throw badRequest(`"${existing.name}" is a system collection and cannot be deleted.`);
    const referrers = this.set.list.filter(
      (c) => c.id !== existing.id && c.fields.some((f) => f.type === 'relation' && relationTarget(f).toLowerCase() === existing.name.toLowerCase()),
    );
    if (referrers.length > 0) {
      throw badRequest(`"${existing.name}" is referenced by relation fields of ${referrers.map((c) => `"${c.name}"`).join(', ')}; remove those fields first.`);
    }
    await deleteCollectionRow(this.tx, existing.id);
    if (options.pocketBase) {
      if (existing.type === 'view') await dropView(this.tx, existing.name);
      else await this.tx.exec(`DROP TABLE IF EXISTS ${quoteIdent(existing.name)}`);
    }
    await this.reload();
  }

  /** A view collection with the fields its query gives (the view created in the transaction). */
  private async viewWithFields(collection: Collection, updating: boolean, pocketBase = false): Promise<Collection> {
    let fields: FieldDef[];
    try {
      fields = await createView(this.tx, collection.name, String(collection.options.query));
    } catch (err) {
      if (!isApiError(err) || err.status !== 400) throw err;
      const viewQuery: FieldError = { code: 'validation_invalid_view_query', message: `Invalid query - ${err.message}` };
      throw validationFailed({ viewQuery }, updating ? 'Failed to update collection.' : 'Failed to create collection.');
    }
    // PocketBase's own save types a view's fields by where each column comes from.
    if (pocketBase) fields = pocketBaseViewFields(String(collection.options.query), fields, (n) => this.find(n));
    const result = { ...collection, fields };
    checkViewCollectionRules(result, this.context(pocketBase), updating);
    return result;
  }

  /** A table left by a collection deleted through the API: PocketBase would create it empty. */
  private async clearOldTable(collection: Collection): Promise<void> {
    if (collection.type === 'view') return;
    if ((await this.tx.dialect.relationKind(this.tx, collection.name)) === 'view') await dropView(this.tx, collection.name);
  }

  /**
   * What PocketBase's save does that Cairn's collections API refuses, done first, so that the body
   * then reads as an ordinary update of the collection as it now is: the collection renamed (its
   * table, and the relations naming it), fields renamed (their columns), fields the body no longer
   * lists dropped from the metadata (their columns stay, as any removed field's), and fields whose
   * type or column changes replaced (the old column dropped, so the new one is created).
   */
  private async asPocketBaseChanges(existing: Collection, sentBody: unknown): Promise<{ existing: Collection; body: unknown }> {
    let body = sentBody;
    const raw = (body ?? {}) as { name?: unknown; fields?: unknown; schema?: unknown; indexes?: unknown };
    let current = existing;
    if (typeof raw.name === 'string' && raw.name !== '' && raw.name !== existing.name) current = await this.renameCollection(current, raw.name);
    const sent = Array.isArray(raw.fields) ? raw.fields : Array.isArray(raw.schema) ? raw.schema : undefined;
    if (!sent || current.type === 'view') return { existing: current, body };
    // Two fields of one name: the one added last replaces the other (a file adding PocketBase's own
    // `users.avatar` beside Cairn's default one of that name, say).
    const named = sent.filter((f): f is Record<string, unknown> => typeof f === 'object' && f !== null && typeof (f as { name?: unknown }).name === 'string');
    const last = new Map(named.map((f, i) => [String(f.name).toLowerCase(), i]));
    const given = named.filter((f, i) => last.get(String(f.name).toLowerCase()) === i);
    if (given.length !== sent.length) body = { ...(raw as object), [Array.isArray(raw.fields) ? 'fields' : 'schema']: given };
    const byId = new Map(given.filter((f) => typeof f.id === 'string' && f.id !== '').map((f) => [f.id as string, f]));
    const byName = new Map(given.filter((f) => typeof f.id !== 'string' || f.id === '').map((f) => [String(f.name).toLowerCase(), f]));
    const table = current.name;
    const kept: FieldDef[] = [];
    const renamed = new Map<string, string>();
    // A field renamed to the name another field still has (two fields swapping names) goes through a
    // name of its own first, and takes its new name once every column moved or was dropped.
    const parked: Array<{ column: string; name: string }> = [];
    const taken = (name: string, self: FieldDef) => current.fields.some((f) => f !== self && f.name.toLowerCase() === name.toLowerCase());
    for (const field of current.fields) {
      const match = byId.get(field.id) ?? byName.get(field.name.toLowerCase());
      if (!match) {
        // PocketBase drops a removed field's column (a field added later under its name starts empty).
        await this.dropColumn(table, field.name);
        continue;
      }
      const name = String(match.name);
      const type = typeof match.type === 'string' ? match.type : field.type;
      let next = field;
      if (name !== field.name) {
        await this.tx.exec(`DROP INDEX IF EXISTS ${quoteIdent(uniqueIndexName(table, field.name))}`);
        const column = taken(name, field) ? `${field.id}_renaming` : name;
        await renameColumn(this.tx, table, field.name, column);
        next = { ...field, name };
        renamed.set(field.name, name);
        if (type !== field.type || this.becomesSingle(field, match)) {
          await this.dropColumn(table, column);
          continue;
        }
        if (column !== name) parked.push({ column, name });
      }
      if (type !== field.type || this.becomesSingle(field, match)) {
        await this.dropColumn(table, next.name);
        continue;
      }
      kept.push(next);
    }
    for (const p of parked) {
      if ((await this.tx.dialect.tableColumns(this.tx, table)).some((c) => c.name.toLowerCase() === p.name.toLowerCase())) await this.dropColumn(table, p.name);
      await renameColumn(this.tx, table, p.column, p.name);
    }
    // A new field (an id not stored) under the name of a column of another kind replaces that column.
    const keptNames = new Set(kept.map((f) => f.name.toLowerCase()));
    for (const f of given) {
      const name = String(f.name);
      if (keptNames.has(name.toLowerCase()) || typeof f.type !== 'string') continue;
      const old = current.fields.find((x) => x.name.toLowerCase() === name.toLowerCase());
      if (old && old.type !== f.type) await this.dropColumn(table, old.name);
    }
    // Indexes name the columns: PocketBase renames them there too (in the stored ones and those sent back).
    const reindex = (list: unknown) => (Array.isArray(list) ? list.map((i) => (typeof i === 'string' ? renameInIndex(i, renamed) : i)) : list);
    const out = renamed.size > 0 && Array.isArray(raw.indexes) ? { ...(body as object), indexes: reindex(raw.indexes) } : body;
    return { existing: { ...current, fields: kept, indexes: reindex(current.indexes) as string[] }, body: out };
  }

  /** Whether a multiple-value field is sent as single-value (`maxSelect` 1): Cairn re-creates its column. */
  private becomesSingle(field: FieldDef, sent: Record<string, unknown>): boolean {
    const type = typeOf(field);
    if (!type.multiple(field)) return false;
    const options = (typeof sent.options === 'object' && sent.options !== null ? sent.options : sent) as Record<string, unknown>;
    const max = options.maxSelect;
    return max !== undefined && max !== null && Number(max) <= 1 && !type.multiple({ ...field, options: { ...field.options, maxSelect: Number(max) } });
  }

  /** Drops a column; one the database will not drop (an index of the app's uses it) is left, in a savepoint. */
  private async dropColumn(table: string, column: string): Promise<void> {
    if (!(await this.tx.dialect.tableColumns(this.tx, table)).some((c) => c.name.toLowerCase() === column.toLowerCase())) return;
    await this.tx.exec(`DROP INDEX IF EXISTS ${quoteIdent(uniqueIndexName(table, column))}`);
    try {
      await this.tx.transaction((inner) => inner.exec(`ALTER TABLE ${quoteIdent(table)} DROP COLUMN ${quoteIdent(column)}`));
    } catch {
      // Kept, as the collections API keeps a removed field's column.
    }
  }

  /** Renames a collection's table and its stored name, and the relations of other collections that name it. */
  private async renameCollection(existing: Collection, name: string): Promise<Collection> {
    const taken = this.set.find(name);
    if (taken && taken.id !== existing.id) {
      throw validationFailed({ name: { code: 'validation_collection_name_exists', message: 'Collection name must be unique (case insensitive).' } }, 'Failed to update collection.');
    }
    if (existing.type === 'view') await dropView(this.tx, existing.name);
    else if (existing.name.toLowerCase() === name.toLowerCase()) {
      // Table names are case-insensitive on SQLite: a change of case goes through another name.
      const step = `${name}_renaming_${Date.now()}`;
      await this.tx.exec(`ALTER TABLE ${quoteIdent(existing.name)} RENAME TO ${quoteIdent(step)}`);
      await this.tx.exec(`ALTER TABLE ${quoteIdent(step)} RENAME TO ${quoteIdent(name)}`);
    } else await this.tx.exec(`ALTER TABLE ${quoteIdent(existing.name)} RENAME TO ${quoteIdent(name)}`);
    const renamed = { ...existing, name };
    await updateCollection(this.tx, renamed);
    for (const other of this.set.list) {
      if (other.id === existing.id || pocketBaseSystemCollection(other.name) === other) continue;
      let changed = false;
      const fields = other.fields.map((f) => {
        if (f.type !== 'relation' || relationTarget(f).toLowerCase() !== existing.name.toLowerCase()) return f;
        changed = true;
        return { ...f, options: { ...f.options, toCollection: name } };
      });
      if (changed) await updateCollection(this.tx, { ...other, fields });
    }
    await this.reload();
    return this.get(existing.id);
  }
}

/** An index statement with renamed columns renamed in its column list (`ON t (a, b)`), quoted or not. */
function renameInIndex(statement: string, renamed: ReadonlyMap<string, string>): string {
  if (renamed.size === 0) return statement;
  const open = statement.indexOf('(');
  if (open < 0) return statement;
  let columns = statement.slice(open);
  for (const [from, to] of renamed) {
    const escaped = from.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    columns = columns.replace(new RegExp(`([\\s(,\`"\\[])${escaped}(?=[\\s),\`"\\]])`, 'gi'), `$1${to}`);
  }
  return statement.slice(0, open) + columns;
}
