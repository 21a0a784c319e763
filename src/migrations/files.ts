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
  /** Writes the file of a version (replacing any file of that version). */
  write(version: string, name: string, text: string): Promise<MigrationFileRef>;
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

  async write(version: string, name: string, text: string): Promise<MigrationFileRef> {
    mkdirSync(this.dir, { recursive: true });
    const fileName = `${version}_${slug(name)}.yaml`;
    const tmp = path.join(this.dir, `.${fileName}.${process.pid}.tmp`);
    writeFileSync(tmp, text, { mode: 0o644 });
    const previous = await this.find(version);
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
    await tx.exec('CREATE TABLE _migration_files (version TEXT PRIMARY KEY NOT NULL, fileName TEXT NOT NULL, text TEXT NOT NULL, updated TEXT NOT NULL)');
  },
};

/**
 * Migration files kept in the system database, so that every node of an instance lists the same
 * ones; each write is mirrored to the migrations directory (and the mirror brought up to date at
 * every listing), where an operator can read them. The database is the truth: an edit made only in
 * the mirror is overwritten.
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
    const rows = await this.system.all<MigrationFileRef & { text: string }>('SELECT version, fileName, text FROM _migration_files ORDER BY version');
    const mirrored = new Set((await this.mirror.list()).map((r) => r.fileName));
    for (const row of rows) {
      if (mirrored.has(row.fileName)) continue;
      try {
        await this.mirror.write(row.version, row.fileName.slice(row.version.length + 1, -'.yaml'.length), row.text);
      } catch {
        // The mirror is a convenience: an unwritable directory does not stop the API.
      }
    }
    return rows.map(({ version, fileName }) => ({ version, fileName })).sort(byVersion);
  }

  async find(version: string): Promise<MigrationFileRef | undefined> {
    return this.system.get<MigrationFileRef>('SELECT version, fileName FROM _migration_files WHERE version = ?', [version]);
  }

  async read(version: string): Promise<{ ref: MigrationFileRef; text: string } | undefined> {
    const row = await this.system.get<MigrationFileRef & { text: string }>('SELECT version, fileName, text FROM _migration_files WHERE version = ?', [version]);
    return row ? { ref: { version: row.version, fileName: row.fileName }, text: row.text } : undefined;
  }

  async write(version: string, name: string, text: string): Promise<MigrationFileRef> {
    const fileName = `${version}_${slug(name)}.yaml`;
    await this.system.run(
      `INSERT INTO _migration_files (version, fileName, text, updated) VALUES (?, ?, ?, ?)
        ON CONFLICT (version) DO UPDATE SET fileName = excluded.fileName, text = excluded.text, updated = excluded.updated`,
      [version, fileName, text, new Date().toISOString()],
    );
    await this.mirror.write(version, name, text).catch(() => undefined);
    return { version, fileName };
  }

  async remove(version: string): Promise<void> {
    await this.system.run('DELETE FROM _migration_files WHERE version = ?', [version]);
    await this.mirror.remove(version).catch(() => undefined);
  }
}
