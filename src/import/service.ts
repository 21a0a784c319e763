import path from 'node:path';
import type { Collection } from '../collections/model.ts';
import type { CollectionService } from '../collections/service.ts';
import { deleteCollectionRow, insertCollection } from '../collections/store.ts';
import { parseIndex } from '../collections/table-sync.ts';
import { badRequest, type FieldError } from '../errors.ts';
import type { FileStorage } from '../files/storage/types.ts';
import { randomId } from '../lib/ids.ts';
import { isValidDatabaseName, quoteIdent } from '../lib/identifiers.ts';
import { inAllTransactions } from '../migrations/transactions.ts';
import { newTokenKey } from '../records/auth-fields.ts';
import type { DatabaseRegistry, Queryable, Transaction } from '../storage/index.ts';
import { s3Options } from '../files/storage/switch.ts';
import type { StoredS3 } from '../files/storage/check.ts';
import { copyFiles, type PocketBaseBucket, removeFiles, scanFiles } from './files.ts';
import { type ImportPlan, type PlannedCollection, planImport, type PlanTarget } from './plan.ts';
import type { CollectionReport, ImportReport } from './report.ts';
import type { Note } from './schema.ts';
import { planSettings } from './settings.ts';
import { type PbAdmin, PocketBaseSource } from './source.ts';
import { toDate } from './values.ts';
import { TOKEN_KINDS, type TokenKind } from '../collections/auth-settings.ts';
import { SUPERUSERS_ID } from '../collections/superusers.ts';
import { carryHistory } from '../pbmigrations/history.ts';
import { addIndexes, copyLinks, copyOrigins, copyRecords, createTable, createViewCollection } from './write.ts';

/**
 * `cairn import pocketbase`: a PocketBase instance into a Cairn database, with the server stopped
 * (API contract §18). Order: read and plan (refusals happen here, before anything changes), copy the
 * files, then one transaction over the target database and the system database (administrators,
 * settings) in which tables, records, indexes, views, OAuth2 links and sign-in origins are written. A failure anywhere
 * undoes it all: the transaction rolls back, the copied files are removed, and a database made for the
 * import is discarded.
 *
 * A dry run does all of it except copying files, and rolls the transaction back: its report is the
 * real run's, down to each index or view Cairn refuses.
 */

export interface ImportDeps {
  registry: DatabaseRegistry;
  collections: CollectionService;
  storage: FileStorage;
  /** A directory for file copies on their way into `storage` (inside the data directory). */
  stagingDir: string;
  checkRule: PlanTarget['checkRule'];
  /** The instance settings, whose sections validate what PocketBase's settings become. */
  settings: {
    mergeInto(tx: Transaction, values: ReadonlyMap<string, unknown>): Promise<{ stored: string[]; errors: Map<string, Record<string, FieldError>> }>;
    forget(): Promise<void>;
  };
  /** PB_ENCRYPTION_KEY: decrypts settings PocketBase keeps encrypted. */
  encryptionKey?: string;
}

export interface ImportOptions {
  /** A `pb_data` directory or its `data.db`. */
  path: string;
  database: string;
  dryRun: boolean;
}

/** PocketBase 0.23+ makes this superuser for its first-run installer link; it is nobody's account. */
const INSTALLER_EMAIL = '__pbinstaller@example.com';

const BCRYPT = /^\$2[abxy]\$\d{2}\$/;

/** Thrown inside the transaction of a dry run, to roll it back once the report is complete. */
class DryRunDone extends Error {}

interface AdminPlan {
  /** `pbId`: the id PocketBase gave the account (`id` differs when Cairn already had it). */
  carry: Array<PbAdmin & { pbId: string; tokenSecret: string; tokenSecrets: string }>;
  skipped: Note[];
}

/** The secrets PocketBase signed administrators' tokens with, by kind (PocketBase's option names). */
type AdminSecrets = Partial<Record<TokenKind, string>>;

async function planAdmins(system: Queryable, admins: readonly PbAdmin[], secrets: AdminSecrets): Promise<AdminPlan> {
  const existing = await system.all<{ id: string; email: string }>('SELECT id, email FROM _admins');
  const emails = new Set(existing.map((a) => a.email.toLowerCase()));
  const ids = new Set(existing.map((a) => a.id));
  const plan: AdminPlan = { carry: [], skipped: [] };
  for (const admin of admins) {
    if (admin.email === INSTALLER_EMAIL) continue;
    if (emails.has(admin.email.toLowerCase())) {
      plan.skipped.push({ what: 'administrator', why: 'one administrator is not carried: Cairn already has an administrator with that email (Cairn’s keeps its password)', kind: 'not-carried' });
      continue;
    }
    if (!BCRYPT.test(admin.passwordHash)) {
      plan.skipped.push({ what: 'administrator', why: 'one administrator is not carried: its password hash is not bcrypt', kind: 'not-carried' });
      continue;
    }
    emails.add(admin.email.toLowerCase());
    // The id and tokenKey are PocketBase's, so the tokens it issued stay valid; an id Cairn already
    // gave another administrator cannot be kept, and those tokens then end.
    if (ids.has(admin.id)) {
      const id = randomId();
      plan.skipped.push({ what: 'administrator', why: `an administrator's id "${admin.id}" renamed "${id}": Cairn already has an administrator with that id (PocketBase's tokens for it stop working)`, kind: 'renamed' });
      plan.carry.push({ ...admin, pbId: admin.id, id, tokenKey: newTokenKey(), tokenSecret: '', tokenSecrets: '' });
    } else {
      const { authToken, ...others } = admin.tokenKey ? secrets : {};
      plan.carry.push({
        ...admin,
        pbId: admin.id,
        tokenKey: admin.tokenKey || newTokenKey(),
        tokenSecret: authToken ?? '',
        tokenSecrets: Object.keys(others).length > 0 ? JSON.stringify(others) : '',
      });
    }
  }
  return plan;
}

async function insertAdmins(tx: Queryable, admins: AdminPlan['carry']): Promise<void> {
  for (const a of admins) {
    const now = new Date().toISOString();
    await tx.run('INSERT INTO _admins (id, email, avatar, passwordHash, tokenKey, "tokenSecret", "tokenSecrets", created, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)', [
      a.id,
      a.email,
      Number(a.avatar) || 0,
      a.passwordHash,
      a.tokenKey,
      a.tokenSecret,
      a.tokenSecrets,
      toDate(a.created) || now,
      toDate(a.updated) || now,
    ]);
  }
}

async function usersRecords(db: Queryable, collections: readonly Collection[]): Promise<number> {
  const users = collections.find((c) => c.name.toLowerCase() === 'users');
  if (!users || users.type === 'view') return 0;
  return Number((await db.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${quoteIdent(users.name)}`))?.n ?? 0);
}

function fieldList(c: Collection): string[] {
  return c.fields.map((f) => `${f.name} ${f.type}`);
}


/** PocketBase's settings before 0.23: the instance-wide secrets of administrators' tokens, by kind. */
const LEGACY_ADMIN_TOKENS: Array<[TokenKind, string]> = [
  ['authToken', 'adminAuthToken'],
  ['passwordResetToken', 'adminPasswordResetToken'],
  ['fileToken', 'adminFileToken'],
];

/**
 * The secrets PocketBase signed administrators' tokens with, of every kind: `_superusers`' options
 * since 0.23 (`authToken`, `fileToken`, `passwordResetToken`, `emailChangeToken`,
 * `verificationToken`), the instance's `adminAuthToken`, `adminPasswordResetToken` and
 * `adminFileToken` before.
 */
function adminTokenSecrets(source: PocketBaseSource, settings: Record<string, unknown> | undefined): AdminSecrets {
  const secretOf = (config: unknown) => {
    const secret = (config as { secret?: unknown } | undefined)?.secret;
    return typeof secret === 'string' && secret !== '' ? secret : undefined;
  };
  const out: AdminSecrets = {};
  if (source.generation === 'current') {
    const superusers = source.collections().find((c) => c.name === '_superusers');
    for (const kind of TOKEN_KINDS) {
      const secret = secretOf(superusers?.options[kind]);
      if (secret) out[kind] = secret;
    }
  } else {
    for (const [kind, key] of LEGACY_ADMIN_TOKENS) {
      const secret = secretOf(settings?.[key]);
      if (secret) out[kind] = secret;
    }
  }
  return out;
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
  // A database made for the import (a dry run's too, which plans against it as the real run would)
  // is discarded again if the import fails or only pretended. It is listed in the import's own
  // transaction and served only once that has committed: a request writing into it meanwhile would be
  // answered, then lost with the database.
  const created = !exists;
  if (created) await registry.begin(options.database);
  let keep = false;
  try {
    const report = await importInto(deps, options, source, started, exists);
    keep = !options.dryRun;
    if (created && keep) await registry.publish(options.database);
    return report;
  } finally {
    if (created && !keep) await registry.discard(options.database).catch(() => undefined);
  }
}

/** Which sessions of the PocketBase app survive the move: those of auth collections (and administrators) whose token secret the file holds. */
function sessionNotes(plan: ImportPlan, carried: readonly { tokenSecret: string }[], generation: ImportPlan['generation']): Note[] {
  const notes: Note[] = [];
  const signed = plan.collections.filter((p) => p.collection.type === 'auth' && (p.collection.options.authToken as { secret?: unknown } | undefined)?.secret);
  const unsigned = plan.collections.filter((p) => p.collection.type === 'auth' && !signed.includes(p));
  const signedAdmins = carried.filter((a) => a.tokenSecret !== '').length;
  if (signed.length > 0 || signedAdmins > 0) notes.push({ what: 'tokens', why: `tokens PocketBase issued stay valid until they expire or the password changes (${[signed.map((p) => p.collection.name).join(', '), signedAdmins > 0 ? `${signedAdmins} administrator(s)` : ''].filter(Boolean).join('; ')})` });
  if (unsigned.length > 0 || signedAdmins < carried.length) {
    notes.push({ what: 'tokens', why: `PocketBase's file holds no token secret for ${[unsigned.map((p) => p.collection.name).join(', '), carried.length - signedAdmins > 0 ? `${carried.length - signedAdmins} administrator(s)` : ''].filter(Boolean).join('; ')}${generation === 'legacy' ? ' (before 0.23 they are in its settings)' : ''}: their PocketBase tokens are not accepted, they sign in again with the same passwords`, kind: 'not-carried' });
  }
  return notes;
}

async function importInto(deps: ImportDeps, options: ImportOptions, source: PocketBaseSource, started: number, exists: boolean): Promise<ImportReport> {
  const { registry } = deps;
  const db = await registry.get(options.database);
  const existing = (await deps.collections.all(db)).list;
  const settingsPlan = planSettings(source.settings(), source.generation, deps.encryptionKey);
  const plan = await planImport(source.collections(), source.generation, {
    collections: existing,
    relationExists: async (name) => (await db.dialect.relationKind(db, name)) !== undefined,
    usersRecords: await usersRecords(db, existing),
    checkRule: deps.checkRule,
    indexNames: async () => existing.flatMap((c) => c.indexes.map((i) => parseIndex(i)?.name.toLowerCase() ?? '')).filter((n) => n !== ''),
    settings: settingsPlan.document,
  });
  const admins = await planAdmins(registry.system, source.admins(), adminTokenSecrets(source, settingsPlan.document));
  const notes: Note[] = [...plan.notes, ...settingsPlan.notes];
  const bucket = await pocketBaseBucket(settingsPlan.document, plan.collections, notes);
  try {
    return await importWith(deps, options, source, started, exists, { db, existing, settingsPlan, plan, admins, notes, bucket });
  } finally {
    bucket?.storage.close?.();
  }
}

/**
 * PocketBase's bucket when its `s3` settings are on (it kept uploads there, under the keys of its
 * `storage/`), with the keys of the planned collections' objects; a bucket that cannot be listed
 * is the report's note, and its files are missing ones.
 */
async function pocketBaseBucket(document: Record<string, unknown> | undefined, planned: readonly PlannedCollection[], notes: Note[]): Promise<PocketBaseBucket | undefined> {
  const s3 = document?.s3 as StoredS3 | undefined;
  if (s3?.enabled !== true || typeof s3.bucket !== 'string' || s3.bucket === '') return undefined;
  const { S3FileStorage } = await import('../files/storage/s3.ts');
  const storage = new S3FileStorage(s3Options(s3));
  const keys = new Set<string>();
  try {
    for (const p of planned) {
      if (p.files.length === 0) continue;
      for (const object of await storage.list(`${p.draft.pb.id}/`)) keys.add(object.key);
    }
  } catch (err) {
    const cause = (err as Error).cause instanceof Error ? ((err as Error).cause as Error).message : (err as Error).message;
    notes.push({ what: 'files', why: `PocketBase's S3 bucket "${s3.bucket}" could not be listed (${cause}): files kept there are not carried`, kind: 'not-carried' });
  }
  return { storage, keys };
}

/** What `importInto` planned, for `importWith`. */
interface Planned {
  db: Awaited<ReturnType<DatabaseRegistry['get']>>;
  existing: readonly Collection[];
  settingsPlan: ReturnType<typeof planSettings>;
  plan: ImportPlan;
  admins: Awaited<ReturnType<typeof planAdmins>>;
  notes: Note[];
  bucket: PocketBaseBucket | undefined;
}

async function importWith(deps: ImportDeps, options: ImportOptions, source: PocketBaseSource, started: number, exists: boolean, planned: Planned): Promise<ImportReport> {
  const { registry } = deps;
  const { db, existing, settingsPlan, plan, admins, notes, bucket } = planned;
  const links = source.externalAuths();
  const origins = source.authOrigins();
  const superusersId = source.collections().find((c) => c.name === '_superusers')?.id;
  const scan = scanFiles(source, plan.collections, bucket);
  const where = `${path.join(path.basename(path.dirname(source.storageDir)), 'storage')}/${bucket ? " nor in PocketBase's S3 bucket" : ' (PocketBase may keep them in S3)'}`;
  for (const [name, n] of scan.missing) notes.push({ what: name, why: `${n} file${n === 1 ? '' : 's'} its records name ${n === 1 ? 'is' : 'are'} not in ${where}: the names are kept, the files are not there`, kind: 'not-carried' });
  // Files go where Cairn reads them once the import's settings are saved: PocketBase's bucket when
  // its `s3` section is carried (new uploads go there too), else the storage in use now.
  const storage = settingsPlan.sections.has('s3') && bucket ? bucket.storage : deps.storage;
  notes.push(...sessionNotes(plan, admins.carry, source.generation));

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
    authOrigins: { carried: 0, skipped: 0 },
    migrations: 0,
    settings: [],
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

  const target = db;
  try {
    if (!options.dryRun) await copyFiles(storage, options.database, scan, path.join(deps.stagingDir, `import-${randomId(8)}`));
    const results = new Map<string, number>();
    const adminIds = admins.carry.map((a) => a.id);
    await inAllTransactions(
      registry.backend,
      [target, registry.system],
      async ([tx, systemTx]) => {
        const carried = await writeAll(tx, source, plan, existing, deps, notes, results, links, report);
        const adminOf = new Map(admins.carry.map((a) => [a.pbId, a.id]));
        report.authOrigins = await copyOrigins(tx, origins, (collectionId, recordId) => {
          if (collectionId === superusersId) {
            const id = adminOf.get(recordId);
            return id ? { collectionRef: SUPERUSERS_ID, recordRef: id } : undefined;
          }
          return carried.get(collectionId)?.ids.has(recordId) ? { collectionRef: carried.get(collectionId)!.collectionId, recordRef: recordId } : undefined;
        });
        // The app's pb_migrations that PocketBase applied stay applied: serving the app's folder
        // afterwards must not run them again on the imported schema.
        report.migrations = await carryHistory(tx, source.migrationHistory());
        if (!exists && !options.dryRun) await registry.register(systemTx, options.database);
        await insertAdmins(systemTx, admins.carry);
        const settings = await deps.settings.mergeInto(systemTx, settingsPlan.sections);
        report.settings = settings.stored;
        for (const [section, problems] of settings.errors) {
          notes.push({ what: `settings.${section}`, why: `not carried: ${Object.entries(problems).map(([k, p]) => `${k}: ${p.message}`).join('; ')}`, kind: 'not-carried' });
        }
        for (const p of plan.collections) if (results.has(p.collection.name)) report.collections.push(describe(p, results.get(p.collection.name)!));
        if (options.dryRun) throw new DryRunDone();
      },
      // Only a COMMIT failing after the system database's went through gets here (SQLite files).
      async (i) => {
        if (i === 1) for (const id of adminIds) await registry.system.run('DELETE FROM _admins WHERE id = ?', [id]);
      },
    );
  } catch (err) {
    if (err instanceof DryRunDone) return report;
    if (!options.dryRun) await removeFiles(storage, options.database, scan, !exists);
    throw err;
  } finally {
    await deps.collections.invalidate(target);
    if (!options.dryRun) await deps.settings.forget();
  }
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
): Promise<Map<string, { collectionId: string; ids: Set<string> }>> {
  const tables = plan.collections.filter((p) => p.collection.type !== 'view');
  if (plan.dropsUsers) await deleteCollectionRow(tx, plan.dropsUsers.id);
  for (const p of tables) await createTable(tx, p);
  const carried = new Map<string, { collectionId: string; ids: Set<string> }>();
  const copying = performance.now();
  for (const p of tables) {
    const copy = await copyRecords(tx, source, p);
    results.set(p.collection.name, copy.records);
    if (copy.ids) carried.set(p.draft.pb.id, { collectionId: p.collection.id, ids: copy.ids });
    if (copy.withoutEmail > 0) {
      notes.push({ what: p.collection.name, why: `${copy.withoutEmail} account(s) have no email: they are carried, and sign in with another identity field, OAuth2 or not at all, as on PocketBase` });
    }
    if (copy.skipped.length > 0) {
      notes.push({ what: p.collection.name, why: `${copy.skipped.length} record(s) not carried: their ids (${copy.skipped.slice(0, 3).map((id) => JSON.stringify(id)).join(', ')}${copy.skipped.length > 3 ? ', …' : ''}) are not 15 lower-case letters and digits, which Cairn's record ids are`, kind: 'not-carried' });
    }
  }
  if (!report.dryRun) report.recordsMs = Math.round(performance.now() - copying);
  for (const p of tables) {
    await addIndexes(tx, p, notes);
    await insertCollection(tx, p.collection);
  }
  const replaced = new Set<Collection | undefined>([...plan.collections.map((p) => p.replaces), plan.dropsUsers]);
  const all = () => [...existing.filter((c) => !replaced.has(c)), ...plan.collections.map((p) => p.collection)];
  for (const p of plan.collections) {
    if (p.collection.type !== 'view') continue;
    if (await createViewCollection(tx, p, all, deps, notes)) results.set(p.collection.name, 0);
  }
  report.oauth2Links = await copyLinks(tx, links, carried);
  return carried;
}
