import { ApiError, badRequest, conflict, isApiError, notFound } from '../errors.ts';
import type { Database } from '../storage/index.ts';
import { type MigrationDeps, messageOf, transformContext } from './deps.ts';
import { checksum } from './files.ts';
import { appliedAfter, journalEntries, journalEntry, markApplied, markFailed, markPending, rollbackData } from './journal.ts';
import type { DatabaseSchema, InstanceSchema, Migration } from './model.ts';
import { realizeDatabase } from './realize.ts';
import { parseMigrationText } from './schema-file.ts';
import { readDatabaseSchema } from './snapshot.ts';
import { inAllTransactions } from './transactions.ts';
import { checkViewRules, transformDatabase } from './transform.ts';

/**
 * Applying and rolling back. Callers hold the apply lock. Every database a migration touches (and
 * system.db, for `_migrations`) has its transaction open for the whole run, so the databases commit
 * together or not at all (see transactions.ts).
 */

/** Brings a database back to `schema` in a transaction of its own (undoing an already committed part). */
async function restore(deps: MigrationDeps, db: Database | undefined, schema: DatabaseSchema | undefined): Promise<void> {
  if (!db || !schema) return;
  await db.transaction(async (tx) => {
    await deps.collections.lockSchema(tx, db);
    await realizeDatabase(tx, await readDatabaseSchema(tx), schema);
  });
  await deps.collections.invalidate(db);
}

export async function applyMigration(deps: MigrationDeps, version: string): Promise<void> {
  const { registry, files, collections } = deps;
  const system = registry.system;
  const file = (await files.read(version));
  if (!file) throw notFound(`Migration "${version}" not found.`);
  const entry = await journalEntry(system, version);
  if (entry?.status === 'applied') throw conflict(`Migration "${version}" is already applied.`);

  let migration: Migration;
  try {
    migration = parseMigrationText(file.text, { field: 'file' }).migration;
    if (migration.version !== '' && migration.version !== version) {
      throw badRequest(`The file of version ${version} says version ${migration.version}.`);
    }
  } catch (err) {
    await markFailed(system, version, file.ref.fileName.slice(version.length + 1, -'.yaml'.length), messageOf(err));
    throw err;
  }

  const names = Object.keys(migration.databases).filter((n) => Object.keys(migration.databases[n].collections).length > 0);
  const created: string[] = [];
  const dbs: Database[] = [];
  const before: InstanceSchema = {};
  const context = transformContext(collections);
  try {
    for (const name of names) {
      if (registry.has(name)) {
        dbs.push(await registry.get(name));
      } else {
        // Served only once the migration has committed: a request writing into it meanwhile would
        // be answered, then lost with the database if the migration fails.
        dbs.push(await registry.begin(name));
        created.push(name);
      }
    }
    const untouched: InstanceSchema = {};
    for (const { name } of registry.list()) {
      if (!names.includes(name)) untouched[name] = await readDatabaseSchema(await registry.get(name));
    }
    await inAllTransactions(
      registry.backend,
      [system, ...dbs],
      async ([systemTx, ...txs]) => {
        const after: InstanceSchema = {};
        for (let i = 0; i < names.length; i++) {
          const name = names[i];
          await collections.lockSchema(txs[i], dbs[i]);
          before[name] = await readDatabaseSchema(txs[i]);
          const target = transformDatabase(name, before[name], migration.databases[name].collections, context);
          after[name] = await realizeDatabase(txs[i], before[name], target);
          checkViewRules(name, after[name], context);
        }
        for (const name of created) await registry.register(systemTx, name);
        await markApplied(systemTx, {
          version,
          name: migration.name,
          checksum: checksum(file.text),
          rollback: { databases: before, created },
          schemaAfter: { ...untouched, ...after },
        });
      },
      (i) => restore(deps, dbs[i - 1], before[names[i - 1]]),
    );
  } catch (err) {
    const message = messageOf(err);
    for (const name of created) await registry.discard(name);
    await markFailed(system, version, migration.name, message);
    throw badRequest(`Migration "${version}" failed: ${message}`, isApiError(err) ? err.data : {});
  } finally {
    for (const db of dbs) await collections.invalidate(db);
  }
  for (const name of created) await registry.publish(name);
}

/** Applies every pending migration in version order; stops at the first failure. */
export async function applyPending(deps: MigrationDeps): Promise<string[]> {
  const entries = new Map((await journalEntries(deps.registry.system)).map((e) => [e.version, e]));
  const applied: string[] = [];
  for (const ref of (await deps.files.list())) {
    if ((entries.get(ref.version)?.status ?? 'pending') !== 'pending' || applied.includes(ref.version)) continue;
    try {
      await applyMigration(deps, ref.version);
    } catch (err) {
      if (isApiError(err) && applied.length > 0) throw new ApiError(err.status, `${err.message} Applied before it: ${applied.join(', ')}.`, err.data);
      throw err;
    }
    applied.push(ref.version);
  }
  return applied;
}

/**
 * Rolls back the latest applied migration: every database it touched is brought back to the
 * snapshot taken before it ran (differences reverted; soft-dropped tables and columns return with
 * their data), and the migration is pending again.
 */
export async function rollbackMigration(deps: MigrationDeps, version: string): Promise<void> {
  const { registry, files, collections } = deps;
  const system = registry.system;
  const entry = await journalEntry(system, version);
  const file = (await files.read(version));
  if (!entry && !file) throw notFound(`Migration "${version}" not found.`);
  if (entry?.status !== 'applied') throw conflict(`Migration "${version}" is not applied (it is ${entry?.status ?? 'pending'}).`);
  const later = await appliedAfter(system, entry.seq ?? 0);
  if (later.length > 0) throw conflict(`Only the latest applied migration can be rolled back: roll back ${later.join(', ')} first.`);
  if (!file) throw conflict(`The file of migration "${version}" is missing; restore it before rolling it back.`);
  if (checksum(file.text) !== entry.checksum) {
    throw conflict(`Migration "${version}" was modified after it was applied (its checksum differs); restore the applied file before rolling it back.`);
  }
  const snapshot = await rollbackData(system, version);
  if (!snapshot) throw conflict(`Migration "${version}" has no pre-migration snapshot to return to.`);

  const names = Object.keys(snapshot.databases).filter((n) => registry.has(n));
  const dbs = await Promise.all(names.map((n) => registry.get(n)));
  const current: InstanceSchema = {};
  try {
    await inAllTransactions(
      registry.backend,
      [system, ...dbs],
      async ([systemTx, ...txs]) => {
        for (let i = 0; i < names.length; i++) {
          await collections.lockSchema(txs[i], dbs[i]);
          current[names[i]] = await readDatabaseSchema(txs[i]);
          await realizeDatabase(txs[i], current[names[i]], snapshot.databases[names[i]]);
        }
        await markPending(systemTx, version, entry.name);
      },
      (i) => restore(deps, dbs[i - 1], current[names[i - 1]]),
    );
  } catch (err) {
    throw badRequest(`Rollback of migration "${version}" failed: ${messageOf(err)}`, isApiError(err) ? err.data : {});
  } finally {
    for (const db of dbs) await collections.invalidate(db);
  }
}
