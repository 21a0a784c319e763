import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * A consistent copy of a live SQLite database, taken with SQLite's online backup API (better-sqlite3's
 * `backup`) in a worker thread, so the event loop keeps serving while pages are copied. The copy is
 * made in one backup step: one read transaction from first page to last, so it is the database as of
 * one commit, and in WAL mode that read transaction never blocks the writer (writes continue while it
 * runs). Copied step by step instead, every commit by another connection between two steps would
 * restart the copy, and under a steady stream of writes it might never finish.
 */

// Plain JavaScript, evaluated in the thread: it must not depend on the TypeScript loader.
const SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
(async () => {
  const db = new Database(workerData.source, { fileMustExist: true });
  try {
    db.pragma('busy_timeout = 10000');
    // Every page in one step (the first call only sizes the copy): a single read transaction.
    await db.backup(workerData.target, { progress: () => 0x7fffffff });
  } finally {
    db.close();
  }
})().then(() => parentPort.postMessage({ ok: true }), (err) => parentPort.postMessage({ ok: false, message: String(err && err.message || err) }));
`;

const DRIVER = createRequire(import.meta.url).resolve('better-sqlite3');

/** Copies the SQLite database `source` to `target` (a new file) without stopping its writers. */
export function snapshotDatabase(source: string, target: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const worker = new Worker(SOURCE, { eval: true, execArgv: [], workerData: { driver: DRIVER, source, target } });
    let settled = false;
    worker.once('message', (m: { ok: boolean; message?: string }) => {
      settled = true;
      if (m.ok) resolve();
      else reject(new Error(`backup of ${source} failed: ${m.message}`));
    });
    worker.once('error', (err) => {
      if (!settled) reject(err);
      settled = true;
    });
    worker.once('exit', (code) => {
      if (!settled) reject(new Error(`backup of ${source} stopped (exit ${code})`));
      settled = true;
    });
  });
}
