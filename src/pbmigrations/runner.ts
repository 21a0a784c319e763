import type { CollectionService } from '../collections/service.ts';
import { type Database, DEFAULT_DATABASE, type DatabaseRegistry } from '../storage/index.ts';
import { locate, PbMigrationError, reasonOf } from './errors.ts';
import { type PbMigrationFile, pbMigrationFiles, readMigration } from './files.ts';
import { dropMissing, ensureHistory, type HistoryRow, historyOf, isApplied, newestFirst, recordApplied, recordReverted } from './history.ts';
import type { PbMigrationExecutor } from './types.ts';

export interface PbMigrationRunnerDeps {
  /** The pb_migrations folder; undefined: none (every command finds nothing to do). */
  dir: string | undefined;
  registry: DatabaseRegistry;
  /** Its caches are dropped (on every node) after a file changed a database. */
  collections: CollectionService;
  execute: PbMigrationExecutor;
}

/** One file applied to, or reverted from, one database. */
export interface PbStep {
  db: string;
  file: string;
}

/** A database's `_migrations` rows. */
export interface PbHistory {
  db: string;
  rows: HistoryRow[];
}

/**
 * PocketBase's `pb_migrations` on Cairn (API contract §24), everything but the JavaScript: which files
 * run, in what order, where, and what is recorded. Every database of the instance is one PocketBase
 * app to the folder: each gets every file, in file-name order, and keeps its own history in its own
 * `_migrations` table (history.ts), as PocketBase keeps it.
 *
 * Each file runs in one transaction of the database with its history row, so a file that fails
 * leaves nothing behind, and those before it stay applied. The transaction first takes a lock of the
 * database shared by every node (PostgreSQL) and only then reads whether the file is applied: nodes
 * that start together each run the files in order, and each file runs once; a node that waited finds
 * it applied. On SQLite the write transaction itself keeps another process out.
 */
export class PbMigrationRunner {
  private lastStamp = 0;

  constructor(private readonly deps: PbMigrationRunnerDeps) {}

  get dir(): string | undefined {
    return this.deps.dir;
  }

  /** The folder's migration files, in the order they apply. */
  files(): PbMigrationFile[] {
    return pbMigrationFiles(this.deps.dir);
  }

  /** Names of the databases to run on (`main` first): `only`, else every database of the instance. */
  private databases(only?: readonly string[]): string[] {
    const names = only ?? this.deps.registry.list().map((d) => d.name);
    return [...names].sort((a, b) => (a === DEFAULT_DATABASE ? -1 : b === DEFAULT_DATABASE ? 1 : a < b ? -1 : a > b ? 1 : 0));
  }

  /**
   * Applies every file not yet applied to each database (`only` some of them), in file-name order;
   * answers what it applied. A database whose history already lists every file is not opened (one
   * read through `registry.peek`), so a start with many databases stays quick. Stops at the first
   * file that fails, with a `PbMigrationError` naming it.
   */
  async up(only?: readonly string[]): Promise<PbStep[]> {
    const files = this.files();
    if (files.length === 0) return [];
    const sources = new Map<string, string>();
    const done: PbStep[] = [];
    for (const name of this.databases(only)) {
      const applied = await this.deps.registry.peek(name, async (q) => new Set((await historyOf(q)).map((r) => r.file)), undefined);
      if (applied && files.every((f) => applied.has(f.file))) continue;
      const db = await this.deps.registry.get(name);
      for (const f of files) {
        if (applied?.has(f.file)) continue;
        if (!sources.has(f.file)) sources.set(f.file, readMigration(f));
        if (await this.step(db, f, sources.get(f.file)!, 'up')) done.push({ db: name, file: f.file });
      }
    }
    return done;
  }

  /**
   * Reverts, on each database, the `count` files applied last (PocketBase's `migrate down [N]`): newest
   * first, by when they were applied, then by name. Only files still in the folder count, as on
   * PocketBase (a file's second function is what reverts it).
   */
  async down(count: number, only?: readonly string[]): Promise<PbStep[]> {
    const files = new Map(this.files().map((f) => [f.file, f]));
    const done: PbStep[] = [];
    for (const { db: name, rows } of await this.history(only)) {
      const last = rows.filter((r) => files.has(r.file)).sort(newestFirst).slice(0, Math.max(0, count));
      if (last.length === 0) continue;
      const db = await this.deps.registry.get(name);
      for (const row of last) {
        const f = files.get(row.file)!;
        if (await this.step(db, f, readMigration(f), 'down')) done.push({ db: name, file: f.file });
      }
    }
    return done;
  }

  /** Reverts one file from every database it is applied to. */
  async revert(file: string, only?: readonly string[]): Promise<PbStep[]> {
    const f = this.files().find((m) => m.file === file);
    if (!f) return [];
    const done: PbStep[] = [];
    for (const { db: name, rows } of await this.history(only)) {
      if (!rows.some((r) => r.file === file)) continue;
      if (await this.step(await this.deps.registry.get(name), f, readMigration(f), 'down')) done.push({ db: name, file });
    }
    return done;
  }

  /** Each database's history (rows of files gone from the folder included). */
  async history(only?: readonly string[]): Promise<PbHistory[]> {
    const out: PbHistory[] = [];
    for (const name of this.databases(only)) {
      const rows = await this.deps.registry.peek(name, historyOf, undefined);
      out.push({ db: name, rows: rows ?? (await historyOf(await this.deps.registry.get(name))) });
    }
    return out;
  }

  /** PocketBase's `migrate history-sync`: drops, in every database, the history of files no longer in the folder. */
  async historySync(): Promise<PbStep[]> {
    const keep = new Set(this.files().map((f) => f.file));
    const dropped: PbStep[] = [];
    for (const { db: name, rows } of await this.history()) {
      if (rows.every((r) => keep.has(r.file))) continue;
      const db = await this.deps.registry.get(name);
      const gone = await db.transaction(async (tx) => {
        await this.deps.registry.backend.lockInTransaction?.(tx, lockKey(name));
        return dropMissing(tx, keep);
      });
      dropped.push(...gone.map((file) => ({ db: name, file })));
    }
    return dropped;
  }

  /** Runs one file one way in its own transaction; false when there was nothing to do (another node did it). */
  private async step(db: Database, f: PbMigrationFile, source: string, direction: 'up' | 'down'): Promise<boolean> {
    const changed = await db.transaction(async (tx) => {
      await this.deps.registry.backend.lockInTransaction?.(tx, lockKey(db.name));
      await ensureHistory(tx);
      if ((await isApplied(tx, f.file)) === (direction === 'up')) return false;
      let registered: boolean;
      try {
        ({ registered } = await this.deps.execute({ source, path: f.path, file: f.file, direction, db: db.name, tx }));
      } catch (err) {
        throw new PbMigrationError(reasonOf(err), { path: f.path, file: f.file, db: db.name, direction, ...locate(err, f.path) });
      }
      if (direction === 'down') await recordReverted(tx, f.file);
      else if (registered) await recordApplied(tx, f.file, this.stamp());
      return direction === 'down' || registered;
    });
    if (changed) await this.deps.collections.invalidate(db);
    return changed;
  }

  /** Now in microseconds (PocketBase's `applied`), strictly increasing: files applied within one millisecond keep their order. */
  private stamp(): number {
    this.lastStamp = Math.max(Date.now() * 1000, this.lastStamp + 1);
    return this.lastStamp;
  }
}

function lockKey(db: string): string {
  return `cairn.pb_migrations.${db}`;
}
