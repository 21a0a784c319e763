import path from 'node:path';
import type { CollectionService } from '../collections/service.ts';
import { badRequest, conflict, isApiError, notFound } from '../errors.ts';
import { zipEntries } from '../lib/zip.ts';
import type { DatabaseRegistry } from '../storage/index.ts';
import { applyMigration, applyPending, rollbackMigration } from './apply.ts';
import { type MigrationDeps, messageOf } from './deps.ts';
import { checksum, DatabaseMigrationFiles, MigrationDirectory, type MigrationFiles } from './files.ts';
import { type JournalEntry, journalEntries, journalEntry, latestApplied, removeEntry } from './journal.ts';
import { acquireApplyLock } from './lock.ts';
import type { InstanceSchema, Migration, MigrationStatus } from './model.ts';
import { generate, importArchive, type MigrationDocument, saveBody, saveUpload } from './save.ts';
import { parseMigrationText } from './schema-file.ts';
import { readInstanceSchema } from './snapshot.ts';
import { isVersion } from './versions.ts';

export type { MigrationDocument } from './save.ts';

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

function versionParam(version: unknown): string {
  if (!isVersion(version)) {
    throw badRequest('The version must have the form YYYYMMDD_HHMMSS_mmm.', {
      version: { code: 'validation_invalid_version', message: 'Must have the form YYYYMMDD_HHMMSS_mmm.' },
    });
  }
  return version;
}

/** How long a delete waits for the apply lock another node holds (a delete holds it for milliseconds). */
const DELETE_LOCK_WAIT_MS = 2000;

/**
 * Schema migrations of the whole instance: the files in the migrations directory, their state in
 * `_migrations`, and generate, apply and rollback across every database. Used by the HTTP routes and
 * the CLI alike. Applies, rollbacks and deletes run under the apply lock.
 */

export class MigrationService {
  readonly files: MigrationFiles;
  private readonly deps: MigrationDeps;
  /** The last delete of this process (see `delete`). */
  private deleting: Promise<unknown> = Promise.resolve();

  constructor(private readonly options: MigrationServiceOptions) {
    const dir = path.join(options.dir, 'migrations');
    // Where several processes share one PostgreSQL database, the files live in it (the directory mirrors them).
    this.files = options.registry.backend.shared ? new DatabaseMigrationFiles(options.registry.system, dir) : new MigrationDirectory(dir);
    this.deps = { registry: options.registry, collections: options.collections, files: this.files };
  }

  /** The live schema of every database. */
  schema(): Promise<InstanceSchema> {
    return readInstanceSchema(this.options.registry);
  }

  private async locked<T>(fn: () => Promise<T>): Promise<T> {
    const release = await acquireApplyLock(this.options.registry);
    try {
      return await fn();
    } finally {
      await release();
    }
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
      modified: status === 'applied' && (!file || checksum(file.text) !== entry!.checksum),
      error: entry?.error ?? problem ?? null,
    };
  }

  async list(): Promise<{ items: MigrationItem[] }> {
    const entries = new Map((await journalEntries(this.options.registry.system)).map((e) => [e.version, e]));
    const items: MigrationItem[] = [];
    const seen = new Set<string>();
    for (const ref of (await this.files.list())) {
      if (seen.has(ref.version)) continue;
      seen.add(ref.version);
      items.push(this.item(ref.version, (await this.files.read(ref.version)), entries.get(ref.version)));
    }
    for (const entry of entries.values()) if (!seen.has(entry.version)) items.push(this.item(entry.version, undefined, entry));
    items.sort((a, b) => (a.version < b.version ? -1 : a.version > b.version ? 1 : 0));
    return { items };
  }

  async get(version: string): Promise<MigrationItem> {
    const file = (await this.files.read(version));
    const entry = await journalEntry(this.options.registry.system, version);
    if (!file && !entry) throw notFound(`Migration "${version}" not found.`);
    return this.item(version, file, entry);
  }

  async status(): Promise<MigrationStatusSummary> {
    const { items } = await this.list();
    return {
      appliedCount: items.filter((i) => i.status === 'applied').length,
      pendingCount: items.filter((i) => i.status === 'pending').length,
      failedCount: items.filter((i) => i.status === 'failed').length,
      lastAppliedVersion: (await latestApplied(this.options.registry.system))?.version ?? null,
    };
  }

  async load(versionIn: unknown): Promise<MigrationDocument> {
    const version = versionParam(versionIn);
    const file = (await this.files.read(version));
    if (!file) throw notFound(`Migration "${version}" not found.`);
    const { migration } = parseMigrationText(file.text, { field: 'file' });
    return { version, name: migration.name, yaml: file.text, migration };
  }

  async download(versionIn: unknown): Promise<{ fileName: string; text: string }> {
    const version = versionParam(versionIn);
    const file = (await this.files.read(version));
    if (!file) throw notFound(`Migration "${version}" not found.`);
    return { fileName: file.ref.fileName, text: file.text };
  }

  /** Every migration file as one ZIP archive. */
  async exportArchive(): Promise<Buffer> {
    const entries = [];
    for (const ref of await this.files.list()) entries.push({ name: ref.fileName, data: Buffer.from((await this.files.read(ref.version))!.text) });
    return zipEntries(entries);
  }

  // ---- producing files (pending migrations) -------------------------------------------------

  generate(input: { name?: unknown; description?: unknown } = {}): Promise<MigrationDocument | { changes: false }> {
    return generate(this.deps, input);
  }

  save(body: unknown): Promise<MigrationDocument> {
    return saveBody(this.deps, body);
  }

  /** One uploaded YAML file, which must carry its version and name. */
  upload(text: string): Promise<MigrationDocument> {
    return saveUpload(this.deps, text);
  }

  importArchive(buffer: Buffer): Promise<{ imported: string[]; skipped: string[] }> {
    return importArchive(this.deps, buffer);
  }

  // ---- applying and rolling back ------------------------------------------------------------

  apply(versionIn: unknown): Promise<MigrationItem> {
    const version = versionParam(versionIn);
    return this.locked(async () => {
      await applyMigration(this.deps, version);
      return this.get(version);
    });
  }

  async applyPending(): Promise<{ applied: string[] }> {
    return { applied: await this.locked(() => applyPending(this.deps)) };
  }

  rollback(versionIn: unknown): Promise<MigrationItem> {
    const version = versionParam(versionIn);
    return this.locked(async () => {
      await rollbackMigration(this.deps, version);
      return this.get(version);
    });
  }

  /** Rolls back the most recently applied migration (`cairn migrate down`). */
  rollbackLatest(): Promise<MigrationItem | undefined> {
    return this.locked(async () => {
      const latest = await latestApplied(this.options.registry.system);
      if (!latest) return undefined;
      await rollbackMigration(this.deps, latest.version);
      return this.get(latest.version);
    });
  }

  /**
   * Deletes a pending or failed migration: its file and its `_migrations` row. The deletes of this
   * process run one after the other: the same delete sent twice at once then answers as it does
   * twice in a row (204, then 404) rather than a 409 for the lock the first one holds.
   */
  delete(versionIn: unknown): Promise<void> {
    const version = versionParam(versionIn);
    const run = this.deleting.then(async () => {
      const release = await this.lockForDelete(version);
      try {
        const { entry } = await this.stored(version);
        if (entry?.status === 'applied') throw conflict(`Migration "${version}" is applied; roll it back before deleting it.`);
        await this.files.remove(version);
        await removeEntry(this.options.registry.system, version);
      } finally {
        await release();
      }
    });
    this.deleting = run.catch(() => undefined);
    return run;
  }

  /** The journal entry of a migration that has an entry or a file; 404 for one that has neither. */
  private async stored(version: string): Promise<{ entry?: JournalEntry }> {
    const entry = await journalEntry(this.options.registry.system, version);
    if (!entry && !(await this.files.find(version))) throw notFound(`Migration "${version}" not found.`);
    return { entry };
  }

  /**
   * The apply lock for a delete. Held by another node's delete (PostgreSQL), it is waited for a
   * little, as this process's deletes wait for each other, and a migration that delete removed
   * meanwhile answers 404; an apply or rollback holding it past that answers its 409.
   */
  private async lockForDelete(version: string): Promise<() => Promise<void>> {
    const deadline = Date.now() + DELETE_LOCK_WAIT_MS;
    for (;;) {
      try {
        return await acquireApplyLock(this.options.registry);
      } catch (err) {
        if (!isApiError(err) || err.status !== 409) throw err;
        await this.stored(version);
        if (Date.now() >= deadline) throw err;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
    }
  }
}
