import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Queryable, SchemaStep } from '../storage/index.ts';

/**
 * The migrations directory, `<dir>/migrations/<version>_<name>.yaml`. Other files there are ignored.
 * Writes go through a temporary file and a rename, so a reader never sees half a file.
 */

const FILE_NAME = /^(\d{8}_\d{6}_\d{3})_([A-Za-z0-9_-]{1,100})\.yaml$/;

/** The SHA-256 recorded for an applied file, to notice later edits. */
export function checksum(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export interface MigrationFileRef {
  version: string;
  fileName: string;
}

/** The file-name form of a migration name: lower case, runs of other characters as one "_". */
export function slug(name: string): string {
  return (
    name
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '_')
      .replace(/^_+|_+$/g, '')
      .slice(0, 80) || 'migration'
  );
}

export function parseFileName(fileName: string): MigrationFileRef | undefined {
  const m = FILE_NAME.exec(fileName);
  return m ? { version: m[1], fileName } : undefined;
}

/** Where migration files are kept; every process of an instance sees the same ones. */
export interface MigrationFiles {
  /** Every migration file, by version. */
  list(): Promise<MigrationFileRef[]>;
  find(version: string): Promise<MigrationFileRef | undefined>;
  read(version: string): Promise<{ ref: MigrationFileRef; text: string } | undefined>;
  /**
   * Writes the file of a version that has none; undefined, writing nothing, when that version has a
   * file by then (another save of it at the same moment): the caller decides as if it had come second.
   */
  create(version: string, name: string, text: string): Promise<MigrationFileRef | undefined>;
  remove(version: string): Promise<void>;
}

function byVersion(a: MigrationFileRef, b: MigrationFileRef): number {
  return a.version < b.version ? -1 : a.version > b.version ? 1 : a.fileName.localeCompare(b.fileName);
}

/** The files of a migrations directory: the store itself on SQLite, a mirror on PostgreSQL. */
export class MigrationDirectory implements MigrationFiles {
  constructor(readonly dir: string) {}

  async list(): Promise<MigrationFileRef[]> {
    return this.listSync();
  }

  private listSync(): MigrationFileRef[] {
    if (!existsSync(this.dir)) return [];
    return readdirSync(this.dir)
      .flatMap((f) => parseFileName(f) ?? [])
      .sort(byVersion);
  }

  async find(version: string): Promise<MigrationFileRef | undefined> {
    return this.listSync().find((r) => r.version === version);
  }

  async read(version: string): Promise<{ ref: MigrationFileRef; text: string } | undefined> {
    const ref = await this.find(version);
    return ref ? { ref, text: readFileSync(path.join(this.dir, ref.fileName), 'utf8') } : undefined;
  }

  async create(version: string, name: string, text: string): Promise<MigrationFileRef | undefined> {
    // Synchronous from the check to the rename: two saves of one version in this process cannot both
    // find it free.
    if (this.listSync().some((r) => r.version === version)) return undefined;
    return this.writeSync(version, name, text);
  }

  /** Writes the file of a version, replacing any file of that version (the mirror of the database's). */
  async write(version: string, name: string, text: string): Promise<MigrationFileRef> {
    return this.writeSync(version, name, text);
  }

  private writeSync(version: string, name: string, text: string): MigrationFileRef {
    mkdirSync(this.dir, { recursive: true });
    const fileName = `${version}_${slug(name)}.yaml`;
    const tmp = path.join(this.dir, `.${fileName}.${process.pid}.tmp`);
    writeFileSync(tmp, text, { mode: 0o644 });
    const previous = this.listSync().find((r) => r.version === version);
    renameSync(tmp, path.join(this.dir, fileName));
    if (previous && previous.fileName !== fileName) rmSync(path.join(this.dir, previous.fileName), { force: true });
    return { version, fileName };
  }

  async remove(version: string): Promise<void> {
    const ref = await this.find(version);
    if (ref) rmSync(path.join(this.dir, ref.fileName), { force: true });
  }
}

/** `_migration_files` in the system database: the files' text where several nodes share one database. */
export const migrationFilesTableStep: SchemaStep = {
  id: 'migrations.files',
  async up(tx) {
    // `removed`: a deleted migration stays as a tombstone, so a node whose directory still has the
    // file does not take it in again.
    await tx.exec('CREATE TABLE _migration_files (version TEXT PRIMARY KEY NOT NULL, fileName TEXT NOT NULL, text TEXT NOT NULL, removed INTEGER DEFAULT 0 NOT NULL, updated TEXT NOT NULL)');
  },
};

/**
 * Migration files kept in the system database, so that every node of an instance lists the same
 * ones. The migrations directory mirrors them: each write goes to both, and every listing brings the
 * two together (see `sync`), so files deployed into the directory of any node are taken in. The
 * database is the truth for a version it has: an edit made only in the mirror does not count.
 */
export class DatabaseMigrationFiles implements MigrationFiles {
  readonly mirror: MigrationDirectory;

  constructor(
    private readonly system: Queryable,
    dir: string,
  ) {
    this.mirror = new MigrationDirectory(dir);
  }

  async list(): Promise<MigrationFileRef[]> {
    return (await this.sync()).map(({ version, fileName }) => ({ version, fileName }));
  }

  async find(version: string): Promise<MigrationFileRef | undefined> {
    const found = await this.system.get<MigrationFileRef>('SELECT version, fileName FROM _migration_files WHERE version = ? AND removed = 0', [version]);
    if (found) return found;
    return (await this.list()).find((r) => r.version === version);
  }

  async read(version: string): Promise<{ ref: MigrationFileRef; text: string } | undefined> {
    const row = await this.system.get<MigrationFileRef & { text: string }>('SELECT version, fileName, text FROM _migration_files WHERE version = ? AND removed = 0', [version]);
    if (row) return { ref: { version: row.version, fileName: row.fileName }, text: row.text };
    const synced = (await this.sync()).find((r) => r.version === version);
    return synced ? { ref: { version: synced.version, fileName: synced.fileName }, text: synced.text } : undefined;
  }

  /**
   * Brings the database and the directory together: a file of a version the database does not have
   * (put there by hand or by a deploy) is taken in, as an upload would be; a version the directory
   * lacks is written to it. For a version both have, the database's text wins.
   */
  private async sync(): Promise<Array<MigrationFileRef & { text: string }>> {
    const rows = await this.system.all<MigrationFileRef & { text: string; removed: number }>('SELECT version, fileName, text, removed FROM _migration_files ORDER BY version');
    const stored = new Map(rows.filter((r) => r.removed === 0).map((r) => [r.version, r]));
    const removed = new Set(rows.filter((r) => r.removed !== 0).map((r) => r.version));
    const mirrored = await this.mirror.list();
    for (const ref of mirrored) {
      if (removed.has(ref.version)) {
        await this.mirror.remove(ref.version).catch(() => undefined);
        continue;
      }
      if (stored.has(ref.version)) continue;
      const file = await this.mirror.read(ref.version);
      if (!file) continue;
      await this.system.run('INSERT INTO _migration_files (version, fileName, text, updated) VALUES (?, ?, ?, ?) ON CONFLICT (version) DO NOTHING', [
        ref.version,
        ref.fileName,
        file.text,
        new Date().toISOString(),
      ]);
      stored.set(ref.version, { ...ref, text: file.text, removed: 0 });
    }
    const inDirectory = new Set(mirrored.map((r) => r.fileName));
    for (const row of stored.values()) {
      if (inDirectory.has(row.fileName)) continue;
      // The mirror is a convenience: an unwritable directory does not stop the API.
      await this.mirror.write(row.version, row.fileName.slice(row.version.length + 1, -'.yaml'.length), row.text).catch(() => undefined);
    }
    return [...stored.values()].sort(byVersion);
  }

  async create(version: string, name: string, text: string): Promise<MigrationFileRef | undefined> {
    const fileName = `${version}_${slug(name)}.yaml`;
    // The primary key decides between saves of one version at once, on any node; a deleted version's
    // tombstone is taken over.
    const { changes } = await this.system.run(
      `INSERT INTO _migration_files (version, fileName, text, updated) VALUES (?, ?, ?, ?)
        ON CONFLICT (version) DO UPDATE SET fileName = excluded.fileName, text = excluded.text, removed = 0, updated = excluded.updated
        WHERE _migration_files.removed <> 0`,
      [version, fileName, text, new Date().toISOString()],
    );
    if (changes === 0) return undefined;
    await this.mirror.write(version, name, text).catch(() => undefined);
    return { version, fileName };
  }

  async remove(version: string): Promise<void> {
    await this.system.run("UPDATE _migration_files SET removed = 1, text = '', updated = ? WHERE version = ?", [new Date().toISOString(), version]);
    await this.mirror.remove(version).catch(() => undefined);
  }
}
