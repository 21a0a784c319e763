import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { PbMigrationError } from './errors.ts';

/** A `pb_migrations` file: its name (what `_migrations` records) and where it is. */
export interface PbMigrationFile {
  file: string;
  path: string;
}

/** PocketBase's `MigrationsFilesPattern`: every `.js` and `.ts` file directly in the folder. */
const PATTERN = /^.*(\.js|\.ts)$/;

/**
 * The migration files of `dir` in file-name order (PocketBase sorts them by name, byte by byte); none
 * when the folder is missing. Subfolders are not read, as on PocketBase.
 */
export function pbMigrationFiles(dir: string | undefined): PbMigrationFile[] {
  if (!dir) return [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw new PbMigrationError(`cannot read the pb_migrations folder: ${(err as Error).message}`, { path: dir });
  }
  return names
    .filter((name) => PATTERN.test(name))
    .map((name) => ({ file: name, path: path.join(dir, name) }))
    .filter((f) => statSync(f.path).isFile())
    .sort((a, b) => Buffer.compare(Buffer.from(a.file), Buffer.from(b.file)));
}

/** A file's text. */
export function readMigration(f: PbMigrationFile): string {
  try {
    return readFileSync(f.path, 'utf8');
  } catch (err) {
    throw new PbMigrationError(`cannot read ${f.file}: ${(err as Error).message}`, { path: f.path, file: f.file });
  }
}
