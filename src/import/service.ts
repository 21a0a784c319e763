import path from 'node:path';
import { newTokenKey } from '../records/auth-fields.ts';
import type { Collection } from '../collections/model.ts';
import type { CollectionService } from '../collections/service.ts';
import { insertCollection } from '../collections/store.ts';
import { badRequest } from '../errors.ts';
import type { FileStorage } from '../files/storage/types.ts';
import { randomId } from '../lib/ids.ts';
import { isValidDatabaseName, quoteIdent } from '../lib/identifiers.ts';
import { inAllTransactions } from '../migrations/transactions.ts';
import type { Database, DatabaseRegistry, Queryable, Transaction } from '../storage/index.ts';
import { copyFiles, removeFiles, scanFiles } from './files.ts';
import { type ImportPlan, planImport, type PlanTarget } from './plan.ts';
import type { CollectionReport, ImportReport } from './report.ts';
import type { Note } from './schema.ts';
import { type PbAdmin, PocketBaseSource } from './source.ts';
import { toDate } from './values.ts';
import { addIndexes, copyLinks, copyRecords, createTable, createViewCollection } from './write.ts';

/**
 * `cairn import pocketbase`: a PocketBase instance into a Cairn database, with the server stopped
 * (API contract §18). Order: read and plan (refusals happen here, before anything changes), copy the
 * files, then one transaction over the target database and the system database (administrators) in
 * which tables, records, indexes, views and OAuth2 links are written. A failure anywhere undoes it all:
 * the transaction rolls back, the copied files are removed, and a database made for the import is
 * discarded.
 */

export interface ImportDeps {
  registry: DatabaseRegistry;
  collections: CollectionService;
  storage: FileStorage;
  /** A directory for file copies on their way into `storage` (inside the data directory). */
  stagingDir: string;
  checkRule: PlanTarget['checkRule'];
}

export interface ImportOptions {
  /** A `pb_data` directory or its `data.db`. */
  path: string;
  database: string;
  dryRun: boolean;
}

/** PocketBase 0.23+ makes this superuser for its first-run installer link; it is nobody's account. */
const INSTALLER_EMAIL = '__pbinstaller@example.com';

/** What no import carries. */
const GENERAL_NOTES: Note[] = [
  { what: 'settings', why: "PocketBase's settings (_params: application, SMTP, S3, backups, OAuth2 providers before 0.23) are not carried; set Cairn's own" },
  { what: 'tokens', why: 'tokens PocketBase issued are not valid on Cairn: users and administrators sign in again (with the same passwords)' },
];

const BCRYPT = /^\$2[abxy]\$\d{2}\$/;

interface AdminPlan {
  carry: PbAdmin[];
  skipped: Note[];
}

async function planAdmins(system: Queryable, admins: readonly PbAdmin[]): Promise<AdminPlan> {
  const existing = await system.all<{ id: string; email: string }>('SELECT id, email FROM _admins');
  const emails = new Set(existing.map((a) => a.email.toLowerCase()));
  const ids = new Set(existing.map((a) => a.id));
  const plan: AdminPlan = { carry: [], skipped: [] };
  for (const admin of admins) {
    if (admin.email === INSTALLER_EMAIL) continue;
    if (emails.has(admin.email.toLowerCase())) {
      plan.skipped.push({ what: 'administrator', why: 'one administrator is not carried: Cairn already has an administrator with that email (Cairn’s keeps its password)' });
      continue;
    }
    if (!BCRYPT.test(admin.passwordHash)) {
      plan.skipped.push({ what: 'administrator', why: 'one administrator is not carried: its password hash is not bcrypt' });
      continue;
    }
    emails.add(admin.email.toLowerCase());
    plan.carry.push(ids.has(admin.id) ? { ...admin, id: randomId() } : admin);
  }
  return plan;
}

async function insertAdmins(tx: Queryable, admins: readonly PbAdmin[]): Promise<void> {
  for (const a of admins) {
    const now = new Date().toISOString();
    await tx.run('INSERT INTO _admins (id, email, avatar, passwordHash, tokenKey, created, updated) VALUES (?, ?, ?, ?, ?, ?, ?)', [
      a.id,
      a.email,
      Number(a.avatar) || 0,
      a.passwordHash,
      newTokenKey(),
      toDate(a.created) || now,
      toDate(a.updated) || now,
    ]);
  }
}

/** A stand-in for the default `users` of a database the dry run does not create. */
function defaultUsers(): Collection {
  return { id: '', name: 'users', type: 'auth', system: true, fields: [], options: {}, listRule: null, viewRule: null, createRule: null, updateRule: null, deleteRule: null, indexes: [], created: '', updated: '' };
}

async function usersRecords(db: Queryable, collections: readonly Collection[]): Promise<number> {
  const users = collections.find((c) => c.name.toLowerCase() === 'users');
  if (!users || users.type === 'view') return 0;
  return Number((await db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${quoteIdent(users.name)}`))?.n ?? 0);
}

function fieldList(c: Collection): string[] {
  return c.fields.map((f) => `${f.name} ${f.type}`);
}

/** Imports (or, with `dryRun`, reports what would be imported). Refusals are 4xx ApiErrors. */
export async function importPocketBase(deps: ImportDeps, options: ImportOptions): Promise<ImportReport> {
  const started = Date.now();
  const source = PocketBaseSource.open(options.path);
  try {
    return await run(deps, options, source, started);
  } finally {
    source.close();
  }
}

async function run(deps: ImportDeps, options: ImportOptions, source: PocketBaseSource, started: number): Promise<ImportReport> {
  const { registry } = deps;
  if (!isValidDatabaseName(options.database)) throw badRequest(`"${options.database}" is not a database name: use 1-63 lower-case letters, digits and underscores, starting with a letter.`);
  await registry.reload();
  const exists = registry.has(options.database);
  // A database made for the import (not for a dry run) is planned against as it is, default users
  // included, and discarded again if the import fails.
  const created = !exists && !options.dryRun;
  if (created) await registry.create(options.database);
  try {
    return await importInto(deps, options, source, started, exists, created);
  } catch (err) {
    if (created) await registry.discard(options.database).catch(() => undefined);
    throw err;
  }
}

async function importInto(deps: ImportDeps, options: ImportOptions, source: PocketBaseSource, started: number, exists: boolean, created: boolean): Promise<ImportReport> {
  const { registry } = deps;
  const db = exists || created ? await registry.get(options.database) : undefined;
  const existing = db ? (await deps.collections.all(db)).list : [defaultUsers()];
  const plan = await planImport(source.collections(), source.generation, {
    collections: existing,
    relationExists: async (name) => (db ? (await db.dialect.relationKind(db, name)) !== undefined : false),
    usersRecords: db ? await usersRecords(db, existing) : 0,
    checkRule: deps.checkRule,
  });
  const admins = await planAdmins(registry.system, source.admins());
  const links = source.externalAuths();
  const scan = scanFiles(source, plan.collections);
  const notes: Note[] = [...plan.notes];
  for (const [name, n] of scan.missing) notes.push({ what: name, why: `${n} file${n === 1 ? '' : 's'} its records name ${n === 1 ? 'is' : 'are'} not in ${path.join(path.basename(path.dirname(source.storageDir)), 'storage')}/ (PocketBase may keep them in S3): the names are kept, the files are not there` });

  const report: ImportReport = {
    source: source.dataFile,
    generation: source.generation,
    database: options.database,
    driver: registry.dialect.name,
    dryRun: options.dryRun,
    createsDatabase: !exists,
    collections: [],
    administrators: { carried: admins.carry.length, skipped: admins.skipped },
    oauth2Links: { carried: 0, skipped: 0 },
    notCarried: notes,
  };
  const describe = (p: ImportPlan['collections'][number], records: number): CollectionReport => ({
    name: p.collection.name,
    type: p.collection.type,
    fields: fieldList(p.collection),
    records,
    files: scan.present.get(p.collection.name)?.length ?? 0,
    indexes: p.collection.type === 'view' ? 0 : p.collection.indexes.length,
    merged: p.replaces !== undefined,
  });

  if (options.dryRun) {
    for (const p of plan.collections) {
      report.collections.push({ ...describe(p, p.collection.type === 'view' ? 0 : source.count(p.draft.pb.name)), indexes: p.draft.indexes.length });
    }
    const authIds = new Set(plan.collections.filter((p) => p.collection.type === 'auth').map((p) => p.draft.pb.id));
    report.oauth2Links.carried = links.filter((l) => authIds.has(l.collectionId)).length;
    report.oauth2Links.skipped = links.length - report.oauth2Links.carried;
    notes.push(...GENERAL_NOTES);
    return report;
  }

  const target = db!;
  try {
    await copyFiles(deps.storage, options.database, scan, path.join(deps.stagingDir, `import-${randomId(8)}`));
    const results = new Map<string, number>();
    const adminIds = admins.carry.map((a) => a.id);
    await inAllTransactions(
      registry.backend,
      [target, registry.system],
      async ([tx, systemTx]) => {
        await writeAll(tx, source, plan, existing, deps, notes, results, links, report);
        await insertAdmins(systemTx, admins.carry);
      },
      // Only a COMMIT failing after the system database's went through gets here (SQLite files).
      async (i) => {
        if (i === 1) for (const id of adminIds) await registry.system.run('DELETE FROM _admins WHERE id = ?', [id]);
      },
    );
    for (const p of plan.collections) if (results.has(p.collection.name)) report.collections.push(describe(p, results.get(p.collection.name)!));
  } catch (err) {
    await removeFiles(deps.storage, options.database, scan, created);
    throw err;
  } finally {
    await deps.collections.invalidate(target);
  }
  notes.push(...GENERAL_NOTES);
  report.ms = Date.now() - started;
  return report;
}

async function writeAll(
  tx: Transaction,
  source: PocketBaseSource,
  plan: ImportPlan,
  existing: readonly Collection[],
  deps: ImportDeps,
  notes: Note[],
  results: Map<string, number>,
  links: ReturnType<PocketBaseSource['externalAuths']>,
  report: ImportReport,
): Promise<void> {
  const tables = plan.collections.filter((p) => p.collection.type !== 'view');
  for (const p of tables) await createTable(tx, p);
  const carried = new Map<string, { collectionId: string; ids: Set<string> }>();
  for (const p of tables) {
    const copy = await copyRecords(tx, source, p);
    results.set(p.collection.name, copy.records);
    if (copy.ids) carried.set(p.draft.pb.id, { collectionId: p.collection.id, ids: copy.ids });
    if (copy.withoutEmail > 0) {
      notes.push({ what: p.collection.name, why: `${copy.withoutEmail} account(s) have no email: they are carried, but cannot sign in with a password on Cairn until they get one` });
    }
    if (copy.skipped.length > 0) {
      notes.push({ what: p.collection.name, why: `${copy.skipped.length} record(s) not carried: their ids (${copy.skipped.slice(0, 3).map((id) => JSON.stringify(id)).join(', ')}${copy.skipped.length > 3 ? ', …' : ''}) are not 15 lower-case letters and digits, which Cairn's record ids are` });
    }
  }
  for (const p of tables) {
    await addIndexes(tx, p, notes);
    await insertCollection(tx, p.collection);
  }
  const replaced = new Set(plan.collections.map((p) => p.replaces));
  const all = () => [...existing.filter((c) => !replaced.has(c)), ...plan.collections.map((p) => p.collection)];
  for (const p of plan.collections) {
    if (p.collection.type !== 'view') continue;
    if (await createViewCollection(tx, p, all, deps, notes)) results.set(p.collection.name, 0);
  }
  report.oauth2Links = await copyLinks(tx, links, carried);
}
