import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';

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

export class MigrationFiles {
  constructor(readonly dir: string) {}

  /** Every migration file, by version. */
  list(): MigrationFileRef[] {
    if (!existsSync(this.dir)) return [];
    const refs = readdirSync(this.dir).flatMap((f) => parseFileName(f) ?? []);
    return refs.sort((a, b) => (a.version < b.version ? -1 : a.version > b.version ? 1 : a.fileName.localeCompare(b.fileName)));
  }

  find(version: string): MigrationFileRef | undefined {
    return this.list().find((r) => r.version === version);
  }

  read(version: string): { ref: MigrationFileRef; text: string } | undefined {
    const ref = this.find(version);
    return ref ? { ref, text: readFileSync(path.join(this.dir, ref.fileName), 'utf8') } : undefined;
  }

  /** Writes the file of a version (replacing any file of that version). */
  write(version: string, name: string, text: string): MigrationFileRef {
    mkdirSync(this.dir, { recursive: true });
    const fileName = `${version}_${slug(name)}.yaml`;
    const tmp = path.join(this.dir, `.${fileName}.${process.pid}.tmp`);
    writeFileSync(tmp, text, { mode: 0o644 });
    const previous = this.find(version);
    renameSync(tmp, path.join(this.dir, fileName));
    if (previous && previous.fileName !== fileName) rmSync(path.join(this.dir, previous.fileName), { force: true });
    return { version, fileName };
  }

  remove(version: string): void {
    const ref = this.find(version);
    if (ref) rmSync(path.join(this.dir, ref.fileName), { force: true });
  }
}
