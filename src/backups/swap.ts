import { copyFileSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { SECRET_FILE } from '../auth/secret.ts';
import { MANIFEST } from './archive.ts';

/**
 * Putting restored data in place of the current data, in a way a crash cannot leave half done.
 * The current data is first moved (renamed: same file system, no copy) into `.restore-previous/` with
 * a marker file, then the restored entries are moved in. Until `commit` removes that directory, the
 * previous data is kept: `rollback` (the restored data failed to start) or, after a crash,
 * `recoverInterruptedRestore` at the next start moves it back.
 */

/** What a restore replaces in the data directory (SQLite's -wal/-shm files with their databases). */
export const MANAGED_ENTRIES = [
  'system.db',
  'system.db-wal',
  'system.db-shm',
  'logs.db',
  'logs.db-wal',
  'logs.db-shm',
  'databases',
  'migrations',
  'storage',
  SECRET_FILE,
];

export const PREVIOUS_DIR = '.restore-previous';
const MARKER = 'RESTORE_IN_PROGRESS';

export interface Swap {
  /** The restored data is serving: the previous data goes. */
  commit(): void;
  /** The restored data could not be used: it goes, the previous data comes back. */
  rollback(): void;
}

function moveBack(dataDir: string, previous: string): void {
  for (const name of MANAGED_ENTRIES) {
    rmSync(path.join(dataDir, name), { recursive: true, force: true });
    if (existsSync(path.join(previous, name))) renameSync(path.join(previous, name), path.join(dataDir, name));
  }
  rmSync(previous, { recursive: true, force: true });
}

/** Moves the current data aside and the extracted backup in `incoming` into the data directory. */
export function swapIn(dataDir: string, incoming: string): Swap {
  const previous = path.join(dataDir, PREVIOUS_DIR);
  rmSync(previous, { recursive: true, force: true });
  mkdirSync(previous, { mode: 0o700 });
  // Written before anything moves: its presence at start means "this swap did not finish".
  writeFileSync(path.join(previous, MARKER), new Date().toISOString());
  try {
    for (const name of MANAGED_ENTRIES) {
      if (existsSync(path.join(dataDir, name))) renameSync(path.join(dataDir, name), path.join(previous, name));
    }
    for (const name of readdirSync(incoming)) {
      if (name === MANIFEST || !MANAGED_ENTRIES.includes(name)) continue;
      renameSync(path.join(incoming, name), path.join(dataDir, name));
    }
    // A backup of an instance whose secret came from CAIRN_JWT_SECRET has none: keep this one's.
    if (!existsSync(path.join(dataDir, SECRET_FILE)) && existsSync(path.join(previous, SECRET_FILE))) {
      copyFileSync(path.join(previous, SECRET_FILE), path.join(dataDir, SECRET_FILE));
    }
  } catch (err) {
    moveBack(dataDir, previous);
    throw err;
  }
  return {
    commit: () => rmSync(previous, { recursive: true, force: true }),
    rollback: () => moveBack(dataDir, previous),
  };
}

/**
 * At start, before any database opens: a restore that stopped midway (the process died) is undone,
 * and the previous data a finished restore did not get to remove is removed. Returns what it did.
 */
export function recoverInterruptedRestore(dataDir: string): 'none' | 'rolled-back' | 'cleaned' {
  const previous = path.join(dataDir, PREVIOUS_DIR);
  if (!existsSync(previous)) return 'none';
  if (existsSync(path.join(previous, MARKER))) {
    moveBack(dataDir, previous);
    return 'rolled-back';
  }
  rmSync(previous, { recursive: true, force: true });
  return 'cleaned';
}
