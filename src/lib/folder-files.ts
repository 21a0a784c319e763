import { readdirSync, statSync } from 'node:fs';
import path from 'node:path';

/**
 * The names of the files directly in `dir` that `accept` takes, in byte order of their names (Go's
 * sort, which PocketBase loads its pb_hooks and pb_migrations folders in); none when the folder is
 * missing. Any other failure to read the folder is thrown as `unreadable(err)` makes it.
 */
export function folderFiles(dir: string, accept: (name: string) => boolean, unreadable: (err: Error) => Error): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw unreadable(err as Error);
  }
  return names
    .filter((name) => accept(name) && statSync(path.join(dir, name)).isFile())
    .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
}

/** PocketBase's pb_hooks file: `*.pb.js`, not hidden (whether in pb_hooks or among TypeScript hooks). */
export const isPbHookFile = (name: string): boolean => name.endsWith('.pb.js') && !name.startsWith('.');
