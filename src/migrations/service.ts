import { createHash } from 'node:crypto';
import path from 'node:path';
import type { CollectionService } from '../collections/service.ts';
import { ApiError, badRequest, conflict, isApiError, notFound } from '../errors.ts';
import { sameJson } from '../lib/canonical-json.ts';
import { nowIso } from '../lib/time.ts';
import { unzipEntries, zipEntries } from '../lib/zip.ts';
import type { Database, DatabaseRegistry } from '../storage/index.ts';
import { MigrationFiles, parseFileName } from './files.ts';
import {
  appliedAfter,
  type JournalEntry,
  journalEntries,
  journalEntry,
  latestApplied,
  markApplied,
  markFailed,
  markPending,
  recordedSchema,
  removeEntry,
  rollbackData,
} from './journal.ts';
import { acquireApplyLock } from './lock.ts';
import type { DatabaseSchema, InstanceSchema, Migration, MigrationStatus } from './model.ts';
import { planMigration } from './plan.ts';
import { realizeDatabase } from './realize.ts';
import { migrationToYaml, type ParsedFile, parseMigrationData, parseMigrationText, withVersion } from './schema-file.ts';
import { readDatabaseSchema, readInstanceSchema } from './snapshot.ts';
import { inAllTransactions } from './transactions.ts';
import { checkViewRules, type TransformContext, transformDatabase } from './transform.ts';
import { isVersion, nextVersion } from './versions.ts';

/** A migration as `GET /api/migrations` lists it (API contract §8). */
export interface MigrationItem {
  version: string;
  name: string;
  description: string;
  created_at: string | null;
  status: MigrationStatus;
  applied_at: string | null;
  databases: Migration['databases'];
  /** An applied migration whose file changed (or went missing) since it was applied. */
  modified: boolean;
  error: string | null;
}

/** `{version, name, yaml, migration}`: the answer of generate, save, load and upload. */
export interface MigrationDocument {
  version: string;
  name: string;
  yaml: string;
  migration: Migration;
}

export interface MigrationStatusSummary {
  appliedCount: number;
  pendingCount: number;
  failedCount: number;
  lastAppliedVersion: string | null;
}

export interface MigrationServiceOptions {
  /** The data directory; files live in `<dir>/migrations`. */
  dir: string;
  registry: DatabaseRegistry;
  collections: CollectionService;
}

const ARCHIVE_LIMITS = { maxEntries: 1000, maxEntrySize: 1024 * 1024, maxTotalSize: 20 * 1024 * 1024 };
const MAX_NAME = 100;

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');

function versionParam(version: unknown): string {
  if (!isVersion(version)) {
    throw badRequest('The version must have the form YYYYMMDD_HHMMSS_mmm.', {
      version: { code: 'validation_invalid_version', message: 'Must have the form YYYYMMDD_HHMMSS_mmm.' },
    });
  }
  return version;
}

function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * Schema migrations of the whole instance: the files in the migrations directory, their state in
 * `_migrations`, and generate, apply and rollback across every database. Used by the HTTP routes and
 * the CLI alike.
 */
export class MigrationService {
  readonly files: MigrationFiles;

  constructor(private readonly options: MigrationServiceOptions) {
    this.files = new MigrationFiles(path.join(options.dir, 'migrations'));
  }

  private get system(): Database {
    return this.options.registry.system;
  }

  private get transformContext(): TransformContext {
    const collections = this.options.collections;
    // Late-bound: the rules domain replaces validateRule after start-up.
    return { validateRule: (c, rule) => collections.validateRule(c, rule), validateOptions: collections.validateOptions };
  }

  /** The live schema of every database. */
  schema(): Promise<InstanceSchema> {
    return readInstanceSchema(this.options.registry);
  }

  // ---- reading ------------------------------------------------------------------------------

  private item(version: string, file: { ref: { fileName: string }; text: string } | undefined, entry: JournalEntry | undefined): MigrationItem {
    let migration: Migration | undefined;
    let problem: string | undefined;
    if (file) {
      try {
        migration = parseMigrationText(file.text).migration;
      } catch (err) {
        problem = messageOf(err);
      }
    }
    const status = entry?.status ?? 'pending';
    return {
      version,
      name: migration?.name ?? entry?.name ?? file?.ref.fileName.slice(version.length + 1, -'.yaml'.length) ?? '',
      description: migration?.description ?? '',
      created_at: migration?.created_at || null,
      status,
      applied_at: status === 'applied' ? entry!.applied_at : null,
      databases: migration?.databases ?? {},
      modified: status === 'applied' && (!file || sha256(file.text) !== entry!.checksum),
      error: entry?.error ?? problem ?? null,
    };
  }

  async list(): Promise<{ items: MigrationItem[] }> {
    const entries = new Map((await journalEntries(this.system)).map((e) => [e.version, e]));
    const items: MigrationItem[] = [];
    const seen = new Set<string>();
    for (const ref of this.files.list()) {
      if (seen.has(ref.version)) continue;
      seen.add(ref.version);
      items.push(this.item(ref.version, this.files.read(ref.version), entries.get(ref.version)));
    }
    for (const entry of entries.values()) if (!seen.has(entry.version)) items.push(this.item(entry.version, undefined, entry));
    items.sort((a, b) => (a.version < b.version ? -1 : a.version > b.version ? 1 : 0));
    return { items };
  }

  async get(version: string): Promise<MigrationItem> {
    const file = this.files.read(version);
    const entry = await journalEntry(this.system, version);
    if (!file && !entry) throw notFound(`Migration "${version}" not found.`);
    return this.item(version, file, entry);
  }

  async status(): Promise<MigrationStatusSummary> {
    const { items } = await this.list();
    return {
      appliedCount: items.filter((i) => i.status === 'applied').length,
      pendingCount: items.filter((i) => i.status === 'pending').length,
      failedCount: items.filter((i) => i.status === 'failed').length,
      lastAppliedVersion: (await latestApplied(this.system))?.version ?? null,
    };
  }

  load(versionIn: unknown): MigrationDocument {
    const version = versionParam(versionIn);
    const file = this.files.read(version);
    if (!file) throw notFound(`Migration "${version}" not found.`);
    const { migration } = parseMigrationText(file.text, { field: 'file' });
    return { version, name: migration.name, yaml: file.text, migration };
  }

  download(versionIn: unknown): { fileName: string; text: string } {
    const version = versionParam(versionIn);
    const file = this.files.read(version);
    if (!file) throw notFound(`Migration "${version}" not found.`);
    return { fileName: file.ref.fileName, text: file.text };
  }

  /** Every migration file as one ZIP archive. */
  async exportArchive(): Promise<Buffer> {
    const entries = this.files.list().map((ref) => ({ name: ref.fileName, data: Buffer.from(this.files.read(ref.version)!.text) }));
    return zipEntries(entries);
  }

  // ---- producing files ----------------------------------------------------------------------

  private async versionTaken(): Promise<(version: string) => boolean> {
    const known = new Set((await journalEntries(this.system)).map((e) => e.version));
    return (version) => known.has(version) || this.files.find(version) !== undefined;
  }

  /** Saves a migration under a fresh version (the next free millisecond). */
  private async saveNew(name: string, render: (version: string) => { text: string; migration: Migration }): Promise<MigrationDocument> {
    const taken = await this.versionTaken();
    // Allocation and write happen without an await between them, so two saves in this process never
    // pick the same version.
    const version = nextVersion(taken);
    const { text, migration } = render(version);
    this.files.write(version, name, text);
    return { version, name, yaml: text, migration: { ...migration, version } };
  }

  /**
   * Checks a file that carries its own version against what is there: the same content again is
   * `false` (nothing to write), different content under a version in use is a 409.
   */
  private async checkVersioned(version: string, text: string, migration: Migration): Promise<boolean> {
    const existing = this.files.read(version);
    if (existing) {
      if (existing.text === text || this.sameContent(existing.text, migration)) return false;
      throw conflict(`Migration version ${version} already exists with different content.`, {
        version: { code: 'validation_version_exists', message: 'A different migration has this version.' },
      });
    }
    const entry = await journalEntry(this.system, version);
    if (entry?.status === 'applied' && entry.checksum !== sha256(text)) {
      throw conflict(`Migration version ${version} was applied from a different file.`, {
        version: { code: 'validation_version_exists', message: 'A different migration has this version.' },
      });
    }
    return true;
  }

  private sameContent(text: string, migration: Migration): boolean {
    try {
      return sameJson(parseMigrationText(text).migration, migration);
    } catch {
      return false;
    }
  }

  /** Saves YAML text (save `{yaml}`, upload): as is when it has a version, else under a new one. */
  async saveText(text: string, field = 'yaml'): Promise<MigrationDocument> {
    const parsed = parseMigrationText(text, { field });
    return this.saveParsed(parsed, text);
  }

  private async saveParsed(parsed: ParsedFile, text: string): Promise<MigrationDocument> {
    const { migration } = parsed;
    if (migration.version === '') {
      return this.saveNew(migration.name, (version) => ({ text: withVersion(parsed, version), migration }));
    }
    if (await this.checkVersioned(migration.version, text, migration)) this.files.write(migration.version, migration.name, text);
    const stored = this.files.read(migration.version)!;
    return { version: migration.version, name: migration.name, yaml: stored.text, migration: parseMigrationText(stored.text).migration };
  }

  /** `POST /api/migrations/save`: `{yaml}`, or `{name, description?, databases}` (optionally `version`). */
  async save(body: unknown): Promise<MigrationDocument> {
    const input = (body ?? {}) as Record<string, unknown>;
    if (typeof input.yaml === 'string') return this.saveText(input.yaml, 'yaml');
    if (input.yaml !== undefined) throw badRequest('yaml must be a string.', { yaml: { code: 'validation_invalid_value', message: 'Must be a string.' } });
    const migration = parseMigrationData(input);
    migration.created_at ||= nowIso();
    if (migration.version === '') {
      return this.saveNew(migration.name, (version) => {
        const m = { ...migration, version };
        return { text: migrationToYaml(m), migration: m };
      });
    }
    const text = migrationToYaml(migration);
    if (await this.checkVersioned(migration.version, text, migration)) this.files.write(migration.version, migration.name, text);
    return { version: migration.version, name: migration.name, yaml: this.files.read(migration.version)!.text, migration };
  }

  /**
   * Diffs the schema recorded after the latest applied migration (empty before the first) with the
   * live schema of every database and saves the difference as a pending migration.
   */
  async generate(input: { name?: unknown; description?: unknown } = {}): Promise<MigrationDocument | { changes: false }> {
    const name = typeof input.name === 'string' && input.name.trim() !== '' ? input.name.trim() : 'schema_changes';
    if (name.length > MAX_NAME) throw badRequest(`The name must be at most ${MAX_NAME} characters.`, { name: { code: 'validation_max_text_constraint', message: `At most ${MAX_NAME} characters.` } });
    if (input.description !== undefined && typeof input.description !== 'string') {
      throw badRequest('The description must be a string.', { description: { code: 'validation_invalid_value', message: 'Must be a string.' } });
    }
    const databases = planMigration(await recordedSchema(this.system), await this.schema());
    if (Object.keys(databases).length === 0) return { changes: false };
    const description = typeof input.description === 'string' && input.description !== '' ? input.description : undefined;
    return this.saveNew(name, (version) => {
      const migration: Migration = { version, name, created_at: nowIso(), ...(description ? { description } : {}), databases };
      return { text: migrationToYaml(migration), migration };
    });
  }

  /**
   * `POST /api/migrations/import`: every migration file of a ZIP archive, all or nothing. Files
   * identical to ones present are skipped; a different file under a version in use is a 409 and
   * nothing of the archive is saved.
   */
  async importArchive(buffer: Buffer): Promise<{ imported: string[]; skipped: string[] }> {
    const entries = await unzipEntries(buffer, ARCHIVE_LIMITS);
    if (entries.length === 0) throw badRequest('The archive holds no migration files.');
    const candidates: { version: string; name: string; text: string }[] = [];
    const versions = new Set<string>();
    for (const entry of entries) {
      const base = entry.name.split('/').pop()!;
      const ref = parseFileName(base);
      if (!ref) throw badRequest(`"${entry.name}" is not a migration file (<version>_<name>.yaml).`, { file: { code: 'validation_invalid_archive', message: `Unexpected entry "${entry.name}".` } });
      if (versions.has(ref.version)) throw badRequest(`The archive holds two migrations with version ${ref.version}.`);
      versions.add(ref.version);
      let parsed: ParsedFile;
      const raw = entry.data.toString('utf8');
      try {
        parsed = parseMigrationText(raw, { field: 'file' });
      } catch (err) {
        if (isApiError(err)) throw new ApiError(err.status, `${entry.name}: ${err.message}`, err.data);
        throw err;
      }
      const { migration } = parsed;
      if (migration.version !== '' && migration.version !== ref.version) {
        throw badRequest(`${entry.name}: the file says version ${migration.version}, its name says ${ref.version}.`);
      }
      const text = migration.version === '' ? withVersion(parsed, ref.version) : raw;
      candidates.push({ version: ref.version, name: migration.name, text });
    }
    const imported: string[] = [];
    const skipped: string[] = [];
    const toWrite: typeof candidates = [];
    for (const c of candidates) {
      if (await this.checkVersioned(c.version, c.text, parseMigrationText(c.text).migration)) toWrite.push(c);
      else skipped.push(c.version);
    }
    try {
      for (const c of toWrite) {
        this.files.write(c.version, c.name, c.text);
        imported.push(c.version);
      }
    } catch (err) {
      for (const v of imported) this.files.remove(v);
      throw err;
    }
    return { imported: imported.sort(), skipped: skipped.sort() };
  }

  // ---- applying -----------------------------------------------------------------------------

  private async locked<T>(fn: () => Promise<T>): Promise<T> {
    const release = await acquireApplyLock(this.system);
    try {
      return await fn();
    } finally {
      await release();
    }
  }

  apply(versionIn: unknown): Promise<MigrationItem> {
    const version = versionParam(versionIn);
    return this.locked(async () => {
      await this.applyLocked(version);
      return this.get(version);
    });
  }

  /** Applies every pending migration in version order; stops at the first failure. */
  applyPending(): Promise<{ applied: string[] }> {
    return this.locked(async () => {
      const entries = new Map((await journalEntries(this.system)).map((e) => [e.version, e]));
      const applied: string[] = [];
      for (const ref of this.files.list()) {
        const status = entries.get(ref.version)?.status ?? 'pending';
        if (status !== 'pending' || applied.includes(ref.version)) continue;
        try {
          await this.applyLocked(ref.version);
        } catch (err) {
          if (isApiError(err) && applied.length > 0) throw new ApiError(err.status, `${err.message} Applied before it: ${applied.join(', ')}.`, err.data);
          throw err;
        }
        applied.push(ref.version);
      }
      return { applied };
    });
  }

  private async applyLocked(version: string): Promise<void> {
    const file = this.files.read(version);
    if (!file) throw notFound(`Migration "${version}" not found.`);
    const entry = await journalEntry(this.system, version);
    if (entry?.status === 'applied') throw conflict(`Migration "${version}" is already applied.`);
    const fallbackName = file.ref.fileName.slice(version.length + 1, -'.yaml'.length);

    let migration: Migration;
    try {
      migration = parseMigrationText(file.text, { field: 'file' }).migration;
      if (migration.version !== '' && migration.version !== version) {
        throw badRequest(`The file of version ${version} says version ${migration.version}.`);
      }
    } catch (err) {
      await markFailed(this.system, version, fallbackName, messageOf(err));
      throw err;
    }

    const registry = this.options.registry;
    const names = Object.keys(migration.databases).filter((n) => Object.keys(migration.databases[n].collections).length > 0);
    const created: string[] = [];
    const dbs: Database[] = [];
    const before: InstanceSchema = {};
    try {
      for (const name of names) {
        if (!registry.has(name)) {
          await registry.create(name);
          created.push(name);
        }
        dbs.push(await registry.get(name));
      }
      const untouched: InstanceSchema = {};
      for (const { name } of registry.list()) {
        if (!names.includes(name)) untouched[name] = await readDatabaseSchema(await registry.get(name));
      }
      await inAllTransactions(
        [this.system, ...dbs],
        async ([systemTx, ...txs]) => {
          const after: InstanceSchema = {};
          for (let i = 0; i < names.length; i++) {
            const name = names[i];
            before[name] = await readDatabaseSchema(txs[i]);
            const target = transformDatabase(name, before[name], migration.databases[name].collections, this.transformContext);
            after[name] = await realizeDatabase(txs[i], before[name], target);
            checkViewRules(name, after[name], this.transformContext);
          }
          await markApplied(systemTx, {
            version,
            name: migration.name,
            checksum: sha256(file.text),
            rollback: { databases: before, created },
            schemaAfter: { ...untouched, ...after },
          });
        },
        (i) => this.restore(dbs[i - 1], before[names[i - 1]]),
      );
    } catch (err) {
      const message = messageOf(err);
      for (const name of created) await registry.discard(name);
      await markFailed(this.system, version, migration.name, message);
      throw badRequest(`Migration "${version}" failed: ${message}`, isApiError(err) ? err.data : {});
    } finally {
      for (const db of dbs) this.options.collections.invalidate(db);
    }
  }

  /** Brings a database back to `schema` in a transaction of its own. */
  private async restore(db: Database | undefined, schema: DatabaseSchema | undefined): Promise<void> {
    if (!db || !schema) return;
    await db.transaction(async (tx) => {
      await realizeDatabase(tx, await readDatabaseSchema(tx), schema);
    });
    this.options.collections.invalidate(db);
  }

  // ---- rolling back -------------------------------------------------------------------------

  rollback(versionIn: unknown): Promise<MigrationItem> {
    const version = versionParam(versionIn);
    return this.locked(async () => {
      await this.rollbackLocked(version);
      return this.get(version);
    });
  }

  /** Rolls back the most recently applied migration (`cairn migrate down`). */
  rollbackLatest(): Promise<MigrationItem | undefined> {
    return this.locked(async () => {
      const latest = await latestApplied(this.system);
      if (!latest) return undefined;
      await this.rollbackLocked(latest.version);
      return this.get(latest.version);
    });
  }

  private async rollbackLocked(version: string): Promise<void> {
    const entry = await journalEntry(this.system, version);
    const file = this.files.read(version);
    if (!entry && !file) throw notFound(`Migration "${version}" not found.`);
    if (entry?.status !== 'applied') throw conflict(`Migration "${version}" is not applied (it is ${entry?.status ?? 'pending'}).`);
    const later = await appliedAfter(this.system, entry.seq ?? 0);
    if (later.length > 0) {
      throw conflict(`Only the latest applied migration can be rolled back: roll back ${later.join(', ')} first.`);
    }
    if (!file) throw conflict(`The file of migration "${version}" is missing; restore it before rolling it back.`);
    if (sha256(file.text) !== entry.checksum) {
      throw conflict(`Migration "${version}" was modified after it was applied (its checksum differs); restore the applied file before rolling it back.`);
    }
    const snapshot = await rollbackData(this.system, version);
    if (!snapshot) throw conflict(`Migration "${version}" has no pre-migration snapshot to return to.`);

    const registry = this.options.registry;
    const names = Object.keys(snapshot.databases).filter((n) => registry.has(n));
    const dbs = await Promise.all(names.map((n) => registry.get(n)));
    const current: InstanceSchema = {};
    try {
      await inAllTransactions(
        [this.system, ...dbs],
        async ([systemTx, ...txs]) => {
          for (let i = 0; i < names.length; i++) {
            current[names[i]] = await readDatabaseSchema(txs[i]);
            await realizeDatabase(txs[i], current[names[i]], snapshot.databases[names[i]]);
          }
          await markPending(systemTx, version, entry.name);
        },
        (i) => this.restore(dbs[i - 1], current[names[i - 1]]),
      );
    } catch (err) {
      throw badRequest(`Rollback of migration "${version}" failed: ${messageOf(err)}`, isApiError(err) ? err.data : {});
    } finally {
      for (const db of dbs) this.options.collections.invalidate(db);
    }
  }

  /** Deletes a pending or failed migration: its file and its `_migrations` row. */
  delete(versionIn: unknown): Promise<void> {
    const version = versionParam(versionIn);
    return this.locked(async () => {
      const entry = await journalEntry(this.system, version);
      const file = this.files.find(version);
      if (!entry && !file) throw notFound(`Migration "${version}" not found.`);
      if (entry?.status === 'applied') throw conflict(`Migration "${version}" is applied; roll it back before deleting it.`);
      this.files.remove(version);
      await removeEntry(this.system, version);
    });
  }
}
