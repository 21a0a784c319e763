import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

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

// Plain JavaScript, evaluated in the thread: it must not depend on the TypeScript loader.
const SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const open = new Map();
parentPort.on('message', (m) => {
  if (m.open !== undefined && !open.has(m.open)) {
    try {
      const db = new Database(m.open, { fileMustExist: true });
      db.pragma('busy_timeout = 0');
      open.set(m.open, db);
    } catch {}
  } else if (m.close !== undefined) {
    open.get(m.close)?.close();
    open.delete(m.close);
  } else if (m.ping !== undefined) {
    parentPort.postMessage({ pong: m.ping });
  }
});
setInterval(() => {
  for (const [file, db] of open) {
    try {
      db.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      // Busy or gone: the next turn tries again; the writer's own threshold is the safety net.
    }
  }
}, ${CHECKPOINT_MS});
`;

let worker: Worker | undefined;
let failed = false;

function thread(): Worker | undefined {
  if (worker || failed) return worker;
  try {
    // No loader (tsx) in the thread: it starts at once.
    worker = new Worker(SOURCE, { eval: true, execArgv: [], workerData: { driver: createRequire(import.meta.url).resolve('better-sqlite3') } });
    // A database must never keep the process alive, nor its loss stop the server.
    worker.unref();
    worker.on('error', () => {
      failed = true;
      worker = undefined;
    });
  } catch {
    failed = true;
  }
  return worker;
}

// Databases opened more than once in the process (tests, a reopened registry) share one connection.
const watched = new Map<string, number>();

/** Checkpoints `file` in the background from now on; false when no thread is available. */
export function watchCheckpoints(file: string): boolean {
  if (file === ':memory:' || file === '') return false;
  const w = thread();
  if (!w) return false;
  const n = watched.get(file) ?? 0;
  watched.set(file, n + 1);
  if (n === 0) w.postMessage({ open: file });
  return true;
}

let pings = 0;

/**
 * Resolves once the thread has handled every message sent before: after `unwatchCheckpoints`, its
 * connection to that file is closed. Needed before a database file is moved or replaced, because a
 * connection closing later would checkpoint into, or delete, the WAL of whatever file then has the name.
 */
export function checkpointsSettled(): Promise<void> {
  const w = worker;
  if (!w) return Promise.resolve();
  const id = ++pings;
  // The thread is unref'd: while this waits for its answer, something must keep the process alive
  // (at shutdown nothing else may, and the process would end before the databases are closed).
  const alive = setInterval(() => {}, 60_000);
  return new Promise((resolve) => {
    const onMessage = (m: { pong?: number }) => {
      if (m.pong !== id) return;
      w.off('message', onMessage);
      w.off('exit', onExit);
      clearInterval(alive);
      resolve();
    };
    const onExit = () => {
      w.off('message', onMessage);
      clearInterval(alive);
      resolve();
    };
    w.on('message', onMessage);
    w.once('exit', onExit);
    w.postMessage({ ping: id });
  });
}

export function unwatchCheckpoints(file: string): void {
  const n = watched.get(file) ?? 0;
  if (n > 1) return void watched.set(file, n - 1);
  watched.delete(file);
  worker?.postMessage({ close: file });
}
