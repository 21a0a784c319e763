import { readFileSync } from 'node:fs';
import path from 'node:path';
import { folderFiles } from '../lib/folder-files.ts';
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
  const unreadable = (err: Error) => new PbMigrationError(`cannot read the pb_migrations folder: ${err.message}`, { path: dir });
  return folderFiles(dir, (name) => PATTERN.test(name), unreadable).map((file) => ({ file, path: path.join(dir, file) }));
}

/** A file's text. */
export function readMigration(f: PbMigrationFile): string {
  try {
    return readFileSync(f.path, 'utf8');
  } catch (err) {
    throw new PbMigrationError(`cannot read ${f.file}: ${(err as Error).message}`, { path: f.path, file: f.file });
  }
}
