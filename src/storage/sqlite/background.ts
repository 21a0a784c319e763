import { Worker } from 'node:worker_threads';

/**
 * One worker thread for the SQLite work kept off the event loop: WAL checkpoints of every open
 * database (checkpointer.ts) and the request log's inserts (logs/sink.ts). One thread rather than one
 * per job, because each thread is a V8 isolate of its own, 10–17 MB resident before it does anything.
 *
 * A job is plain JavaScript installed into the thread (it must not depend on the TypeScript loader):
 * the body of a function `(require, reply, options)` returning the handler of the job's messages;
 * `reply` posts back to the job's listeners. A job that throws, when installed or on a message, is
 * answered `{ failed: <message>, to?: <the message> }` instead. The thread is unref'd: a database must never keep the
 * process alive, and whoever must wait for an answer at exit holds it (`hold`).
 */
export interface BackgroundJob {
  send(message: unknown): void;
  /** Adds a listener for the job's replies; the function returned removes it. */
  onReply(listener: (message: any) => void): () => void;
  /** Removes the job from the thread (after the messages sent before). */
  uninstall(): void;
}

const BOOT = `
const { parentPort } = require('node:worker_threads');
const handlers = new Map();
parentPort.on('message', (m) => {
  if (m.install !== undefined) {
    // A job that fails (to install, or on a message) is reported to its listeners; it must not take
    // the thread, and with it every other job, down.
    try {
      const make = new Function('require', 'reply', 'options', m.source);
      handlers.set(m.install, make(require, (msg) => parentPort.postMessage({ from: m.install, msg }), m.options));
    } catch (err) {
      parentPort.postMessage({ from: m.install, msg: { failed: String((err && err.message) || err) } });
    }
  } else if (m.uninstall !== undefined) {
    handlers.delete(m.uninstall);
  } else if (m.ping !== undefined) {
    parentPort.postMessage({ pong: m.ping });
  } else {
    const handler = handlers.get(m.to);
    try {
      if (!handler) throw new Error('the job is not installed');
      handler(m.msg);
    } catch (err) {
      parentPort.postMessage({ from: m.to, msg: { failed: String((err && err.message) || err), to: m.msg } });
    }
  }
});
`;

let worker: Worker | undefined;
let failed = false;
const exitListeners = new Set<() => void>();

function thread(): Worker | undefined {
  if (worker || failed) return worker;
  try {
    // No loader (tsx) in the thread: it starts at once.
    const w = new Worker(BOOT, { eval: true, execArgv: [] });
    w.unref();
    const gone = () => {
      if (failed) return;
      failed = true;
      worker = undefined;
      for (const listener of exitListeners) listener();
    };
    w.on('error', gone);
    w.on('exit', gone);
    worker = w;
  } catch {
    failed = true;
  }
  return worker;
}

let holds = 0;

/** Keeps the process alive until the function returned is called (waiting for the thread at exit). */
export function hold(): () => void {
  if (holds++ === 0) worker?.ref();
  let released = false;
  return () => {
    if (released) return;
    released = true;
    if (--holds === 0) worker?.unref();
  };
}

/**
 * Installs a job under `name` (unique while installed); undefined when no thread can be had, so the
 * caller falls back to doing without.
 */
export function installJob(name: string, source: string, options: unknown = {}): BackgroundJob | undefined {
  const w = thread();
  if (!w) return undefined;
  w.postMessage({ install: name, source, options });
  return {
    send: (msg) => worker?.postMessage({ to: name, msg }),
    onReply(listener) {
      const onMessage = (m: { from?: string; msg?: unknown }) => {
        if (m.from === name) listener(m.msg);
      };
      w.on('message', onMessage);
      return () => w.off('message', onMessage);
    },
    uninstall: () => worker?.postMessage({ uninstall: name }),
  };
}

/** Calls `listener` if the thread stops (it then failed: nothing stops it on purpose). */
export function onThreadExit(listener: () => void): () => void {
  exitListeners.add(listener);
  return () => exitListeners.delete(listener);
}

let pings = 0;

/** Resolves once the thread has handled every message sent before this call. */
export function backgroundSettled(): Promise<void> {
  const w = worker;
  if (!w) return Promise.resolve();
  const id = ++pings;
  // At shutdown nothing else may keep the process alive, and it would end before the answer.
  const release = hold();
  return new Promise((resolve) => {
    const done = () => {
      w.off('message', onMessage);
      offExit();
      release();
      resolve();
    };
    const onMessage = (m: { pong?: number }) => {
      if (m.pong === id) done();
    };
    const offExit = onThreadExit(done);
    w.on('message', onMessage);
    w.postMessage({ ping: id });
  });
}
