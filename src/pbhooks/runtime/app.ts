/**
 * `$app` (≥ 0.23) and v0.22's `$app.dao()`: record and collection reads, `save`/`delete` of records
 * and collections, `RecordUpsertForm`, settings, mail, logger. Every read and write is a host call;
 * Cairn's writes always validate (docs/hooks.md, Differences).
 */
import { brokerApi } from './broker.ts';
import { Collection, collectionOf } from './collection.ts';
import { $dbx } from './dbx.ts';
import { PbFile } from './file.ts';
import { DynamicModel } from './models.ts';
import type { Realm } from './realm.ts';
import type { RecordClass } from './record.ts';

export function appApi(rt: Realm, Record: RecordClass, db: any, RecordQuery: any, logger: any) {
  const call = rt.call;
  const inner = rt.inner;
  const collectionCache = new Map<string, any>();
  const asRecord = (json: any) => (json ? Record.__from(json) : json);
  function findRecordsByFilter(coll: any, filter = '', sort = '', limit = 0, offset = 0, params?: any) {
    const rows = call('find', collectionOf(coll).name, { filter, sort, limit: limit > 0 ? limit : undefined, offset: offset > 0 ? offset : undefined, params: params ?? undefined });
    return rows.map(asRecord);
  }
  const reads: any = {
    findRecordById: (coll: any, id: string) => asRecord(call('findById', collectionOf(coll).name, id)),
    findFirstRecordByFilter: (coll: any, filter: string, params?: any) => asRecord(call('findFirst', collectionOf(coll).name, filter, params ?? undefined)),
    findRecordsByFilter,
    findFirstRecordByData: (coll: any, key: string, value: any) => asRecord(call('findFirst', collectionOf(coll).name, `${key} = {:value}`, { value })),
    findRecordsByIds: (coll: any, ids: string[]) => (ids.length ? findRecordsByFilter(coll, ids.map((_: any, i: number) => `id = {:id${i}}`).join(' || '), '', 0, 0, Object.fromEntries(ids.map((id: string, i: number) => [`id${i}`, id]))) : []),
    findAllRecords: (coll: any) => findRecordsByFilter(coll),
    /** Records matching dbx expressions (`$dbx.hashExp`…), in insertion order. */
    findRecordsByExpr: (coll: any, ...exprs: any[]) => {
      const list = exprs.flat().filter((x) => x !== null && x !== undefined);
      if (list.length === 0) return findRecordsByFilter(coll);
      const ids = db.select('id').from(collectionOf(coll).name).where($dbx.and(...list)).column() as any[];
      const found = reads.findRecordsByIds(coll, ids.map(String));
      const at = new Map(ids.map((id: any, i: number) => [String(id), i]));
      return found.sort((a: any, b: any) => (at.get(a.id) ?? 0) - (at.get(b.id) ?? 0));
    },
    findAuthRecordByEmail: (coll: any, email: string) => asRecord(call('findFirst', collectionOf(coll).name, 'email = {:email}', { email })),
    findAuthRecordByUsername: (coll: any, username: string) => asRecord(call('findFirst', collectionOf(coll).name, 'username = {:username}', { username })),
    countRecords: (coll: any, ...exprs: any[]) => {
      const list = exprs.flat().filter((x) => x !== null && x !== undefined);
      if (list.length === 0) return call('count', collectionOf(coll).name);
      const row = new DynamicModel({ n: 0 });
      db.select('COUNT(*) AS n').from(collectionOf(coll).name).where($dbx.and(...list)).one(row);
      return (row as any).n;
    },
    findCollectionByNameOrId: (name: string) => {
      let c = collectionCache.get(name);
      if (!c) collectionCache.set(name, (c = call('collection', name)));
      // A copy: what the caller changes on it stays out of the next one found.
      return Collection.__found(inner(c));
    },
    /** The collections of a type (`auth`, `base`, `view`), as Collection objects (v0.22 had no `_` system ones). */
    findCollectionsByType: (type: string) =>
      (call('collectionsByType', String(type)) as any[]).filter((c) => rt.runningGen !== 22 || !String(c.name).startsWith('_')).map((c) => Collection.__found(c)),
    recordQuery: (coll: any) => new RecordQuery(coll),
    expandRecord: (record: any, expands: string[]) => {
      const got = call('expand', record._c.name, record.id, (expands ?? []).join(','));
      record.setExpand(got?.expand ?? {});
      return {};
    },
    expandRecords: (records: any[], expands: string[]) => {
      for (const r of records) reads.expandRecord(r, expands);
      return {};
    },
  };
  function save(model: any) {
    // `$app.settings()`, changed and saved (written once the migration or handler ends well).
    if (model && model.__settings === true) {
      call('saveSettings', model);
      return;
    }
    if (model instanceof Collection) {
      // A new one is created (its name taken is an error, as in PocketBase); one the app found is changed.
      const saved = inner(call('saveCollection', model.__body(), model.__stored));
      collectionCache.clear();
      model.__load(saved);
      model.__stored = true;
      // What a later save leaves out is what is stored now.
      if (model.type === 'auth') model.__withTemplates();
      return;
    }
    if (!(model instanceof Record)) throw new Error('$app.save: only records and collections can be saved from pb_hooks in Cairn');
    const json = model.isNew() ? call('create', model._c.name, model.__changes()) : call('update', model._c.name, model.id || model._o?.id, model.__changes());
    model.__refresh(json);
  }
  /**
   * v0.22's `forms.RecordUpsert` (and ≥ 0.23's `RecordUpsertForm`): data loaded onto the record, then
   * saved as `$app.save` saves it (validation and record hooks run). `submit`'s interceptors wrap
   * the save (`(next) => (record) => next(record)`), as PocketBase's.
   */
  class RecordUpsertForm {
    _record: any;
    constructor(_app: any, record: any) {
      if (!(record instanceof Record)) throw new TypeError('RecordUpsertForm: a record is required');
      this._record = record;
    }
    loadData(data: any) {
      this._record.load(data ?? {});
    }
    load(data: any) {
      this.loadData(data);
    }
    // The dao, context and access levels are the handler's anyway: a save from pb_hooks is a system write.
    setDao() {}
    setContext() {}
    setFullManageAccess() {}
    grantManagerAccess() {}
    grantSuperuserAccess() {}
    addFiles(key: string, ...files: any[]) {
      this._record.set(`${key}+`, files.flat());
    }
    removeFiles(key: string, ...names: any[]) {
      this._record.set(`${key}-`, names.flat().map((n: any) => (n instanceof PbFile ? n.name : String(n))));
    }
    submit(...interceptors: any[]) {
      const chain = interceptors.flat().filter((f) => typeof f === 'function').reduceRight((next: any, wrap: any) => wrap(next), (r: any) => save(r));
      const err = chain(this._record);
      // An interceptor may return its error rather than throw it (Go's `return err`).
      if (err !== undefined && err !== null) throw err;
    }
  }
  function del(model: any) {
    if (model instanceof Collection) {
      call('deleteCollection', model.id || model.name);
      collectionCache.clear();
      return;
    }
    if (!(model instanceof Record)) throw new Error('$app.delete: only records and collections can be deleted from pb_hooks in Cairn');
    call('delete', model._c.name, model.id);
  }
  const mailClient = { send: (m: any) => call('mail', m) };
  /**
   * `runInTransaction(fn)`: the host opens a transaction of the handler's database (`txBegin`), every
   * `$app` call until `txEnd` runs in it, and it commits when `fn` returns or rolls back when `fn`
   * throws (the error goes on). A call inside one joins it, as PocketBase's txApp does.
   */
  let transactionDepth = 0;
  function runInTransaction(app: any, fn: any) {
    if (transactionDepth > 0) return fn(app);
    call('txBegin');
    transactionDepth++;
    let result: any;
    try {
      result = fn(app);
    } catch (err) {
      try {
        call('txEnd', false);
      } catch {
        // The rollback's own failure: the handler's error is what it answers with.
      }
      throw err;
    } finally {
      transactionDepth--;
    }
    call('txEnd', true);
    return result;
  }
  const dao: any = {
    ...reads,
    db: () => db,
    // v0.22's dao.saveRecord did not validate; Cairn's save validates (docs/hooks.md, Differences).
    saveRecord: save,
    deleteRecord: del,
    saveCollection: save,
    deleteCollection: del,
    save,
    saveNoValidate: save,
    delete: del,
    runInTransaction: (fn: any) => runInTransaction(dao, fn),
    findAdminByEmail: (email: string) => asRecord(call('findFirst', '_superusers', 'email = {:email}', { email })),
    findAdminById: (id: string) => asRecord(call('findById', '_superusers', id)),
    saveAdmin: save,
    deleteAdmin: del,
  };
  const broker = brokerApi(rt, (collection, id) => asRecord(call('findById', collection, id)));
  const $app: any = {
    ...reads,
    db: () => db,
    dao: () => dao,
    save,
    // Cairn's writes always validate (docs/hooks.md, Differences): these are `save`.
    saveNoValidate: save,
    saveWithContext: save,
    saveNoValidateWithContext: save,
    delete: del,
    deleteWithContext: del,
    runInTransaction: (fn: any) => runInTransaction($app, fn),
    logger: () => logger,
    settings: () => Object.defineProperty(inner(call('settings')), '__settings', { value: true, enumerable: false }),
    /** A snapshot migration's import: each collection created or changed, the others removed with `deleteMissing`. */
    importCollections: (list: any[], deleteMissing = false) => {
      call('importCollections', (list ?? []).map((c: any) => (c instanceof Collection ? c.__body() : c)), deleteMissing === true);
      collectionCache.clear();
    },
    importCollectionsByMarshaledJSON: (json: any, deleteMissing = false) => $app.importCollections(typeof json === 'string' ? JSON.parse(json) : json, deleteMissing),
    findAllCollections: () => (call('collections') as any[]).map((c) => Collection.__found(c)),
    newMailClient: () => mailClient,
    isDev: () => false,
    dataDir: () => call('dataDir'),
    isBootstrapped: () => true,
    subscriptionsBroker: () => broker,
    // The CLI of a PocketBase binary: commands a file adds are accepted and never run.
    rootCmd: { addCommand: () => undefined },
  };
  
  return { $app, dao, reads, save, del, RecordUpsertForm, mailClient };
}
