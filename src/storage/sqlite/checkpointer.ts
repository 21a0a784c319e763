import { createRequire } from 'node:module';
import { type BackgroundJob, backgroundSettled, installJob, onThreadExit } from './background.ts';

/**
 * WAL checkpoints off the event loop. SQLite's automatic checkpoint runs inside the commit that
 * crosses `wal_autocheckpoint` pages: that commit copies the WAL into the database and fsyncs it,
 * blocking every request for milliseconds, and the copying is paid on the request path. Instead a
 * worker thread, with its own connection to each database, runs a PASSIVE checkpoint (it never
 * blocks writers or readers) every CHECKPOINT_MS; the writers keep a much higher automatic threshold
 * (`FALLBACK_AUTOCHECKPOINT`) only as a safety net should the thread fall behind or fail.
 */
const CHECKPOINT_MS = 100;
export const FALLBACK_AUTOCHECKPOINT = 10_000;

// The job in the background thread (background.ts): a connection per watched file. A checkpoint
// copies frames from the WAL into the database file through a buffer of its own, not the page cache,
// so each connection is given a token cache (64 KiB): better-sqlite3's default is 16 MB, a bound on
// every open database that this connection has no use for.
const JOB = `
const Database = require(options.driver);
const open = new Map();
setInterval(() => {
  for (const db of open.values()) {
    try {
      db.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      // Busy or gone: the next turn tries again; the writer's own threshold is the safety net.
    }
  }
}, options.everyMs);
return (m) => {
  if (m.open !== undefined && !open.has(m.open)) {
    try {
      const db = new Database(m.open, { fileMustExist: true });
      db.pragma('busy_timeout = 0');
      db.pragma('cache_size = -64');
      open.set(m.open, db);
    } catch {}
  } else if (m.close !== undefined) {
    open.get(m.close)?.close();
    open.delete(m.close);
  }
};
`;

let job: BackgroundJob | undefined;
let failed = false;

function checkpoints(): BackgroundJob | undefined {
  if (job || failed) return job;
  job = installJob('checkpoints', JOB, { driver: createRequire(import.meta.url).resolve('better-sqlite3'), everyMs: CHECKPOINT_MS });
  if (!job) failed = true;
  else
    onThreadExit(() => {
      job = undefined;
      failed = true;
    });
  return job;
}

// Databases opened more than once in the process (tests, a reopened registry) share one connection.
const watched = new Map<string, number>();

/** Checkpoints `file` in the background from now on; false when no thread is available. */
export function watchCheckpoints(file: string): boolean {
  if (file === ':memory:' || file === '') return false;
  const j = checkpoints();
  if (!j) return false;
  const n = watched.get(file) ?? 0;
  watched.set(file, n + 1);
  if (n === 0) j.send({ open: file });
  return true;
}

/**
 * Resolves once the thread has handled every message sent before: after `unwatchCheckpoints`, its
 * connection to that file is closed. Needed before a database file is moved or replaced, because a
 * connection closing later would checkpoint into, or delete, the WAL of whatever file then has the name.
 */
export const checkpointsSettled = backgroundSettled;

export function unwatchCheckpoints(file: string): void {
  const n = watched.get(file) ?? 0;
  if (n > 1) return void watched.set(file, n - 1);
  watched.delete(file);
  job?.send({ close: file });
}
