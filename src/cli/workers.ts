import cluster, { type Worker } from 'node:cluster';
import { constants } from 'node:os';
import type { Config } from '../config.ts';
import { processLogger } from '../http/logging.ts';

/**
 * `serve` with CAIRN_WORKERS above 1 (PostgreSQL only): this process forks that many workers, each a
 * whole node of the instance (its own pool, caches and node id; PostgreSQL carries what nodes share:
 * data, cache invalidations, realtime events, cron and webhook leases), all accepting on one port.
 * Node answers a request on one thread, so this is how one machine's cores serve one instance.
 *
 * The first worker starts alone (a first start on an empty database creates the schema), the others
 * after it listens. A worker that stops while serving is replaced; one that fails to start stops the
 * rest and this process exits with its code. Signals are this process's to pass on: each worker
 * stops as `serve` stops on that signal (drain, finish, exit), and a second signal is passed on too.
 */
export async function superviseWorkers(config: Config): Promise<void> {
  const log = processLogger(config.logLevel);
  // Each worker accepts on the shared socket itself. With Node's default (round robin) this process
  // would accept every connection and hand it over, a hop per request for clients that open a
  // connection per request, as PocketBase's benchmark does.
  cluster.schedulingPolicy = cluster.SCHED_NONE;
  const live = new Set<Worker>();
  let stopping = false;
  let exitCode = 0;

  const exitWhenDone = () => {
    if (live.size === 0) process.exit(exitCode);
  };
  const tell = (worker: Worker, signal: NodeJS.Signals) => {
    if (worker.isConnected()) worker.send({ cairnStop: signal });
  };
  const stopAll = (signal: NodeJS.Signals) => {
    stopping = true;
    for (const worker of live) tell(worker, signal);
    exitWhenDone();
  };

  // A node id given for the whole process names each worker apart (`node-a.1`, `node-a.2`, a
  // replacement the next number); without one, each worker's default (`<hostname>:<pid>`) is its own.
  const given = process.env.CAIRN_NODE_ID?.trim();
  let forked = 0;
  const fork = (): Promise<void> =>
    new Promise((resolve, reject) => {
      forked += 1;
      const worker = cluster.fork(given ? { CAIRN_NODE_ID: `${given.slice(0, 90)}.${forked}` } : {});
      live.add(worker);
      let listening = false;
      worker.once('listening', () => {
        listening = true;
        // A signal that came while it started found no handler in it yet.
        if (stopping) tell(worker, 'SIGTERM');
        resolve();
      });
      worker.once('exit', (code, signal) => {
        live.delete(worker);
        const status = code ?? 128 + (constants.signals[signal as NodeJS.Signals] ?? 0);
        if (!listening) return reject(new WorkerFailed(status));
        if (stopping) {
          exitCode = Math.max(exitCode, status);
          return exitWhenDone();
        }
        log.error({ pid: worker.process.pid, code, signal }, 'a worker stopped; starting another');
        fork().catch(failed);
      });
    });
  const failed = (err: unknown) => {
    exitCode = Math.max(exitCode, err instanceof WorkerFailed ? err.status : 1, 1);
    if (!stopping) log.error({ err }, 'a worker failed to start; stopping the others');
    stopAll('SIGTERM');
  };

  process.on('SIGTERM', () => stopAll('SIGTERM'));
  process.on('SIGINT', () => stopAll('SIGINT'));
  try {
    await fork();
    await Promise.all(Array.from({ length: config.workers - 1 }, fork));
  } catch (err) {
    return failed(err);
  }
  log.info({ workers: config.workers }, `${config.workers} workers serving`);
}

class WorkerFailed extends Error {
  constructor(readonly status: number) {
    super(`a worker exited with ${status} before it listened`);
  }
}

/** The signal a worker is told to stop as, if `message` is such a message from the primary. */
export function stopSignalOf(message: unknown): NodeJS.Signals | undefined {
  const signal = (message as { cairnStop?: unknown } | null)?.cairnStop;
  return signal === 'SIGTERM' || signal === 'SIGINT' ? signal : undefined;
}
