import { collectionJson } from '../collections/pocketbase-shapes.ts';
import type { Collection } from '../collections/model.ts';
import { isSuperusers, SUPERUSERS_COLLECTION } from '../collections/superusers.ts';
import type { AdminService } from '../auth/admins.ts';
import { CollectionTransaction } from '../collections/transaction.ts';
import type { HookServices } from '../hooks/facade.ts';
import { HookRecords } from '../hooks/records-api.ts';
import { withFiles } from '../pbhooks/ops.ts';
import type { Transaction } from '../storage/index.ts';
import { isPlainObject } from '../lib/objects.ts';
import { isPocketBaseSystemCollection, MigrationCollections } from './collections.ts';
import { PendingSettings, PendingSuperusers } from './pending.ts';

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
  /** Saves what the file changed outside its database (superusers, settings: pending.ts); call when it ran to its end. */
  finish(): Promise<void>;
  /** Ends the file's view of the collections (call whatever happened, before the runner invalidates them). */
  close(): void;
}

/** `authToken.duration` shown for a collection that keeps Cairn's default (PocketBase's 14 days). */
const TOKEN_TTL = 1_209_600;

function json(c: Collection): Record<string, unknown> {
  return collectionJson(c, { tokenTtl: TOKEN_TTL });
}

/** The host of one run of one file: `ops` answers its `$app` calls (collections: collections.ts). */
export async function migrationHost(services: MigrationServices, run: { db: string; tx: Transaction }): Promise<MigrationHost> {
  const database = await services.registry.get(run.db);
  const collections = await CollectionTransaction.open(services.collections, database, run.tx);
  const saves = new MigrationCollections(collections);
  const records = new HookRecords(() => services, run.db, { db: run.db, tx: run.tx });
  const slot = { current: services };
  const superusers = new PendingSuperusers(services.admins);
  const settings = new PendingSettings(services.settings);

  const ops: MigrationOps = async (op, args) => {
    if (['create', 'update', 'findFirst', 'delete'].includes(op) && typeof args[0] === 'string' && isSuperusers(args[0])) {
      if (op === 'create') return superusers.save(args[1]);
      if (op === 'update') return superusers.save({ ...(isPlainObject(args[2]) ? args[2] : {}), email: (isPlainObject(args[2]) && args[2].email) || (await superusers.emailOf(String(args[1]))) });
      if (op === 'delete') {
        superusers.delete(await superusers.emailOf(String(args[1])));
        return null;
      }
      const params = isPlainObject(args[2]) ? args[2] : {};
      return superusers.find(String(params.email ?? Object.values(params)[0] ?? ''));
    }
    switch (op) {
      case 'saveAdmin':
        return superusers.save(args[0]);
      case 'findAdminByEmail':
        return superusers.find(String(args[0]));
      case 'deleteAdmin':
        superusers.delete(String(isPlainObject(args[0]) ? args[0].email : args[0]));
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
        return json(await saves.save(args[0], args[1] === true));
      case 'deleteCollection':
        await collections.remove(String(args[0]), { pocketBase: true });
        return null;
      case 'importCollections':
        await saves.import(args[0], args[1] === true);
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
        return settings.view();
      case 'saveSettings':
        return settings.save(args[0], args[1] !== false);
      case 'dataDir':
        return process.cwd();
      default:
        throw new Error(`${op} is not available in Cairn's pb_migrations`);
    }
  };

  return {
    ops,
    async finish() {
      await superusers.write();
      await settings.write();
    },
    close: () => collections.close(),
  };
}

/** PocketBase's save sets a password without its confirmation (a form asks for that, not the model). */
function withConfirm(data: unknown): Record<string, unknown> {
  const d = isPlainObject(data) ? { ...data } : {};
  if (typeof d.password === 'string' && d.passwordConfirm === undefined) d.passwordConfirm = d.password;
  return d;
}

function clean(options: any): any {
  const out: any = {};
  for (const [k, v] of Object.entries(options ?? {})) if (v !== undefined && v !== null && v !== '') out[k] = v;
  return out;
}
