import { isPlainObject } from '../lib/objects.ts';
import { badRequest, conflict, type FieldError, isApiError, notFound, validationFailed } from '../errors.ts';
import { createView, replaceView } from '../migrations/views.ts';
import type { Database, Queryable, SchemaStep, Transaction, TransactionLock } from '../storage/index.ts';
import { baseDatabase, transactionOf } from '../storage/within.ts';
import type { Invalidations } from '../storage/invalidations.ts';
import { relationTarget } from './fields/relation.ts';
import { quoteIdent } from '../lib/identifiers.ts';
import type { Collection } from './model.ts';
import { POCKETBASE_SYSTEM_COLLECTIONS, pocketBaseSystemCollection } from './pocketbase-system.ts';
import { checkViewCollectionRules, type NormalizeContext, normalizeCollection, type OptionsValidator, type RuleValidator } from './normalize.ts';
import { deleteCollectionRow, insertCollection, loadCollections, updateCollection } from './store.ts';
import { syncTable } from './table-sync.ts';

/** All collections of one database, indexed for the lookups every request makes. */
export class CollectionSet {
  private readonly byName = new Map<string, Collection>();
  private readonly byId = new Map<string, Collection>();

  constructor(readonly list: readonly Collection[]) {
    for (const c of list) {
      this.byName.set(c.name.toLowerCase(), c);
      this.byId.set(c.id, c);
    }
  }

  /** By name (case-insensitive, as table names are) or by id. */
  find(nameOrId: string): Collection | undefined {
    return this.byName.get(nameOrId.toLowerCase()) ?? this.byId.get(nameOrId);
  }
}

export interface CollectionServiceOptions {
  validateRule?: RuleValidator;
  validateOptions?: OptionsValidator[];
  /** Tells the other nodes of an instance that a database's collections changed. */
  invalidations?: Invalidations;
  /** Serializes changes of a database's collections across processes (`lockSchema`). */
  lock?: TransactionLock;
}

/** Creates a collection's table (or adopts an existing one) and stores its metadata. */
export async function createCollectionIn(db: Queryable, collection: Collection): Promise<void> {
  await syncTable(db, undefined, collection);
  await insertCollection(db, collection);
}

/**
 * Collections of each database, cached until one of them changes. Cached objects are immutable and
 * replaced on change, so other caches can key on them (compiled rules, record shapes).
 */
export class CollectionService {
  private readonly cache = new WeakMap<Database, Promise<CollectionSet>>();
  /** The sets of `cache` that have loaded, for `peek`. */
  private readonly loaded = new WeakMap<Database, CollectionSet>();
  validateRule: RuleValidator;
  readonly validateOptions: OptionsValidator[];

  private readonly invalidations?: Invalidations;
  private readonly lock?: TransactionLock;
  /** Collections as a transaction under way has changed them (transaction.ts), answered inside it. */
  private readonly changing = new WeakMap<Transaction, CollectionSet>();

  constructor(options: CollectionServiceOptions = {}) {
    this.validateRule = options.validateRule ?? (() => undefined);
    this.validateOptions = options.validateOptions ?? [];
    this.invalidations = options.invalidations;
    this.lock = options.lock;
  }

  /** All collections of the database (cached). */
  all(view: Database): Promise<CollectionSet> {
    const changing = this.changingIn(view);
    if (changing) return Promise.resolve(changing);
    // A transaction's view of a database shares its cache (and reads committed metadata).
    const db = baseDatabase(view);
    let set = this.cache.get(db);
    if (!set) {
      // PocketBase's system collections of auth data are in every database, defined in code.
      const loading = loadCollections(db).then((list) => new CollectionSet([...list, ...POCKETBASE_SYSTEM_COLLECTIONS]));
      this.cache.set(db, loading);
      loading.then(
        (loadedSet) => {
          if (this.cache.get(db) === loading) this.loaded.set(db, loadedSet);
        },
        () => this.cache.delete(db),
      );
      set = loading;
    }
    return set;
  }

  /** All collections of the database, synchronously, when they are loaded and current. */
  peekAll(view: Database): CollectionSet | undefined {
    return this.changingIn(view) ?? this.loaded.get(baseDatabase(view));
  }

  private changingIn(view: Database): CollectionSet | undefined {
    const tx = transactionOf(view);
    return tx && this.changing.get(tx);
  }

  /**
   * Makes `set` what `all` answers for views bound to `tx` (a `CollectionTransaction` changing the
   * collections inside it), or stops that (undefined).
   */
  track(tx: Transaction, set: CollectionSet | undefined): void {
    if (set) this.changing.set(tx, set);
    else this.changing.delete(tx);
  }

  /**
   * Forgets the cached collections of a database, here and on every other node; call after changing
   * `_collections` directly. Resolves once the other nodes have been told.
   */
  invalidate(db: Database): Promise<void> {
    this.cache.delete(baseDatabase(db));
    this.loaded.delete(baseDatabase(db));
    return this.invalidations?.publish('collections', db.name) ?? Promise.resolve();
  }

  /** Forgets the cached collections of a database in this process only (another node changed them). */
  forget(db: Database): void {
    this.cache.delete(baseDatabase(db));
    this.loaded.delete(baseDatabase(db));
  }

  async find(db: Database, nameOrId: string): Promise<Collection | undefined> {
    return (await this.all(db)).find(nameOrId);
  }

  async get(db: Database, nameOrId: string): Promise<Collection> {
    const c = await this.find(db, nameOrId);
    if (!c) throw notFound(`Collection "${nameOrId}" not found.`);
    return c;
  }

  private normalizeContext(set: CollectionSet): NormalizeContext {
    return { find: (n) => set.find(n), all: set.list, validateRule: this.validateRule, validateOptions: this.validateOptions };
  }

  /**
   * Holds the schema lock of `db` until `tx` ends, for every node (PostgreSQL's transaction advisory
   * lock); nothing on SQLite, whose write transactions already come one at a time. Whatever changes a
   * database's collections takes it before it reads them.
   */
  async lockSchema(tx: Transaction, db: Database): Promise<void> {
    await this.lock?.(tx, `cairn.collections.${baseDatabase(db).name}`);
  }

  /**
   * Runs a change of a database's collections in a transaction, given its collections as they are
   * once every earlier change has committed: on SQLite the write transaction comes after theirs, on
   * PostgreSQL the transaction first takes the database's schema lock (every node's). So the same
   * change sent several times at once is decided as if the requests came one after the other, never
   * on a cached set another request has just made stale. The cache is dropped after, here and on
   * every node.
   */
  async changeSchema<T>(db: Database, fn: (tx: Transaction, set: CollectionSet) => Promise<T>): Promise<T> {
    try {
      return await db.transaction(async (tx) => {
        await this.lockSchema(tx, db);
        return fn(tx, new CollectionSet([...(await loadCollections(tx)), ...POCKETBASE_SYSTEM_COLLECTIONS]));
      });
    } finally {
      await this.invalidate(db);
    }
  }

  async create(db: Database, body: unknown): Promise<Collection> {
    try {
      return await this.changeSchema(db, async (tx, set) => {
        const name = (body as { name?: unknown } | null)?.name;
        const exists = typeof name === 'string' && set.find(name)?.name.toLowerCase() === name.toLowerCase();
        const nameTaken = { name: { code: 'validation_collection_name_exists', message: 'Collection name must be unique (case insensitive).' } };
        let collection: Collection;
        try {
          collection = normalizeCollection(body, undefined, this.normalizeContext(set));
        } catch (err) {
          // A taken name is PocketBase's 400 (API contract §3), with whatever else is wrong beside it.
          if (exists && isApiError(err) && err.status === 400) throw validationFailed({ ...err.data, ...nameTaken }, 'Failed to create collection.');
          throw err;
        }
        if (exists) throw validationFailed(nameTaken, 'Failed to create collection.');
        // A view left by a collection deleted through this API may still be read by others.
        const made = collection.type === 'view' ? await replaceView(tx, collection.name, () => this.viewWithFields(tx, collection, set, false)) : collection;
        await createCollectionIn(tx, made);
        return made;
      });
    } catch (err) {
      // Only where no schema lock is taken: two creates of one name meet at the metadata's unique key.
      if (db.dialect.classifyError(err).kind === 'unique') throw conflict(`Collection "${(body as { name?: unknown } | null)?.name}" already exists.`);
      throw err;
    }
  }

  /**
   * A view collection with the fields its query gives: the view is (re)created in the caller's
   * transaction, and the rules are checked against those fields. A query the database refuses is
   * the 400 PocketBase answers (`viewQuery: validation_invalid_view_query`).
   */
  private async viewWithFields(tx: Queryable, collection: Collection, set: CollectionSet, updating: boolean): Promise<Collection> {
    let fields;
    try {
      fields = await createView(tx, collection.name, String(collection.options.query));
    } catch (err) {
      if (!isApiError(err) || err.status !== 400) throw err;
      const viewQuery: FieldError = { code: 'validation_invalid_view_query', message: `Invalid query - ${err.message}` };
      throw validationFailed({ viewQuery }, updating ? 'Failed to update collection.' : 'Failed to create collection.');
    }
    const result = { ...collection, fields };
    checkViewCollectionRules(result, this.normalizeContext(set), updating);
    return result;
  }

  async update(db: Database, nameOrId: string, body: unknown): Promise<Collection> {
    return this.changeSchema(db, async (tx, set) => {
      const existing = set.find(nameOrId);
      if (!existing) throw notFound(`Collection "${nameOrId}" not found.`);
      if (pocketBaseSystemCollection(existing.name) === existing) throw badRequest(`"${existing.name}" is a system collection and cannot be changed.`);
      const next = normalizeCollection(body, existing, this.normalizeContext(set));
      await refuseRetypingValues(tx, existing, next);
      let saved = next;
      if (next.type === 'view') {
        // A view holds no data: a new query replaces it (as migrations' drop_views and create_views do).
        if (next.options.query !== existing.options.query) {
          saved = await replaceView(tx, existing.name, () => this.viewWithFields(tx, next, set, true));
        } else checkViewCollectionRules(next, this.normalizeContext(set), true);
      } else await syncTable(tx, existing, next);
      await updateCollection(tx, saved);
      return saved;
    });
  }

  /** The soft drop: metadata goes, the table and its data stay (re-creating the name adopts them). */
  async remove(db: Database, nameOrId: string): Promise<void> {
    await this.changeSchema(db, async (tx, set) => {
      const existing = set.find(nameOrId);
      if (!existing) throw notFound(`Collection "${nameOrId}" not found.`);
      if (existing.system) throw badRequest(`"${existing.name}" is a system collection and cannot be deleted.`);
      const referrers = set.list.filter(
        (c) => c.id !== existing.id && c.fields.some((f) => f.type === 'relation' && relationTarget(f).toLowerCase() === existing.name.toLowerCase()),
      );
      if (referrers.length > 0) {
        throw badRequest(
          `"${existing.name}" is referenced by relation fields of ${referrers.map((c) => `"${c.name}"`).join(', ')}; remove those fields first.`,
        );
      }
      await deleteCollectionRow(tx, existing.id);
    });
  }
}

/** A field whose type changes (url → file only) must hold no values: they would not be files. */
export async function refuseRetypingValues(tx: Queryable, existing: Collection, next: Collection): Promise<void> {
  for (const field of next.fields) {
    const old = existing.fields.find((f) => f.id === field.id);
    if (!old || old.type === field.type) continue;
    const col = quoteIdent(field.name);
    const held = await tx.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${quoteIdent(existing.name)} WHERE ${col} IS NOT NULL AND ${col} <> ''`);
    if (Number(held?.n ?? 0) > 0) {
      throw validationFailed(
        { fields: { code: 'validation_field_type_change', message: `The type of "${old.name}" cannot change from ${old.type} to ${field.type} while records hold values in it.` } },
        'Failed to update collection.',
      );
    }
  }
}

/**
 * The default rule of `users` for list, view and update: a user reaches their own record only. The
 * collection name is checked too, because ids are unique per collection only (a record of another
 * auth collection could carry the same id).
 */
export const USERS_OWN_RECORD_RULE = 'id = @request.auth.id && @request.auth.collectionName = "users"';

/** Internal schema step creating the default `users` auth collection of every database. */
export const usersCollectionStep: SchemaStep = {
  id: 'collections.users',
  async up(tx) {
    const now = new Date().toISOString();
    const collection = normalizeCollection(
      {
        // PocketBase's default `users` (its fields and rules), plus the specification's `role`. Not
        // its id `_pb_users_auth_`: an imported PocketBase auth collection of another name keeps that.
        name: 'users',
        type: 'auth',
        system: true,
        schema: [
          // PocketBase's ids of its default fields (its type and the CRC-32 of its name), so that a
          // migration's `users.fields.getById("text1579384326")` finds them.
          { id: 'text1579384326', name: 'name', type: 'text', options: { max: 255 } },
          { id: 'file376926767', name: 'avatar', type: 'file', options: { maxSelect: 1, maxSize: 0, mimeTypes: ['image/jpeg', 'image/png', 'image/svg+xml', 'image/gif', 'image/webp'] } },
          { name: 'role', type: 'text', options: { max: 255 } },
        ],
        // A user sees, edits and deletes their own record; `role` and `verified` stay admin-only (records layer).
        listRule: USERS_OWN_RECORD_RULE,
        viewRule: USERS_OWN_RECORD_RULE,
        createRule: '',
        updateRule: USERS_OWN_RECORD_RULE,
        deleteRule: USERS_OWN_RECORD_RULE,
        oauth2: { mappedFields: { id: '', name: 'name', username: '', avatarURL: 'avatar' } },
      },
      undefined,
      { find: () => undefined, validateRule: () => undefined, validateOptions: [] },
    );
    await createCollectionIn(tx, { ...collection, created: now, updated: now });
  },
};

/**
 * OAuth2 sign-ups fill the fields `oauth2.mappedFields` names; the default `users` of databases made
 * before it had them in its settings got its name and avatar filled all the same: it maps them now.
 */
export const usersMappedFieldsStep: SchemaStep = {
  id: 'collections.users.oauth2-mapped-fields',
  async up(tx) {
    const row = await tx.get<{ id: string; options: unknown }>("SELECT id, options FROM _collections WHERE name = 'users' AND type = 'auth' AND system = ?", [true]);
    if (!row) return;
    const options = (typeof row.options === 'string' ? JSON.parse(row.options) : (row.options ?? {})) as Record<string, unknown>;
    const oauth2 = isPlainObject(options.oauth2) ? options.oauth2 : {};
    if (oauth2.mappedFields !== undefined) return;
    const next = { ...options, oauth2: { ...oauth2, mappedFields: { id: '', name: 'name', username: '', avatarURL: 'avatar' } } };
    await tx.run('UPDATE _collections SET options = ? WHERE id = ?', [JSON.stringify(next), row.id]);
  },
};

/** Databases created with the first default rules of `users` get the current ones (unless changed). */
export const usersRulesStep: SchemaStep = {
  id: 'collections.users.own-record-rules',
  async up(tx) {
    for (const rule of ['listRule', 'viewRule', 'updateRule']) {
      await tx.run(`UPDATE _collections SET ${rule} = ? WHERE name = 'users' AND ${rule} = ?`, [USERS_OWN_RECORD_RULE, 'id = @request.auth.id']);
    }
  },
};
