import cluster from 'node:cluster';
import { constants } from 'node:os';
import type { Config } from '../config.ts';
import { Host } from '../http/host.ts';
import { processLogger } from '../http/logging.ts';
import { releaseMemoryWhenIdle } from '../lib/idle-memory.ts';

/**
 * How long past CAIRN_SHUTDOWN_TIMEOUT_MS the process waits for the rest of the shutdown (webhook
 * outcomes, the request log, closing the databases) before it exits anyway.
 */
const BACKSTOP_MARGIN_MS = 5000;

/**
 * Serves until SIGTERM or SIGINT, then drains for CAIRN_DRAIN_MS (health 503, connections closed after
 * their next answer; a second signal ends the drain) and shuts down gracefully (`Host.close`: requests under way finish
 * within CAIRN_SHUTDOWN_TIMEOUT_MS, the databases are closed) and exits 0. A second signal after the drain exits at
 * once (128 + the signal's number, as a shell reports a process the signal killed): committed writes
 * are safe either way, only what was under way is cut off. Should the shutdown itself hang, a backstop
 * exits with 1 after the timeout and a margin, logging what it was still waiting for.
 */
export async function serve(config: Config): Promise<void> {
  if (config.workers > 1 && cluster.isPrimary) {
    const { superviseWorkers } = await import('./workers.ts');
    return superviseWorkers(config);
  }
  if (config.databaseUrl) {
    // A node started with (or just before) its database: it waits rather than exit (contract §21).
    const { waitForPostgres } = await import('../storage/postgres/wait.ts');
    // Past the wait (or on an answer that is not "not up yet"), the start below meets the same
    // error and reports it as every storage problem is: one line naming the database, no password.
    await waitForPostgres(config.databaseUrl, config.dbWaitMs, processLogger(config.logLevel)).catch(() => {});
  }
  const host = await Host.start(config);
  host.app.log.info(`Server listening at http://${config.host}:${host.port}`);
  const stopReleasing = releaseMemoryWhenIdle({
    onRelease: ({ before, after }) => host.app.log.debug({ heapBefore: before, heapAfter: after }, 'idle: V8 heap given back'),
  });
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    const log = host.app.log;
    if (stopping) {
      if (host.skipDrain()) {
        log.warn({ signal }, 'second signal: skipping the drain');
        return;
      }
      log.warn({ signal, pending: host.pending() }, 'second signal: exiting without finishing the shutdown');
      process.exit(128 + constants.signals[signal]);
    }
    stopping = true;
    stopReleasing();
    log.info({ signal, drainMs: config.drainMs, timeoutMs: config.shutdownTimeoutMs }, 'shutting down');
    // Unref'd: it never keeps the process up by itself, it only ends one that has stopped moving on.
    const limit = config.drainMs + config.shutdownTimeoutMs + BACKSTOP_MARGIN_MS;
    const backstop = setTimeout(() => {
      log.error({ pending: host.pending() }, `shutdown still not finished ${limit} ms after the signal; exiting`);
      process.exit(1);
    }, limit);
    backstop.unref();
    host.close().then(
      () => process.exit(0),
      (err: unknown) => {
        log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  if (cluster.isWorker) {
    // The primary passes signals on (src/cli/workers.ts); a terminal's Ctrl-C reaches every process
    // of its group, and one Ctrl-C must not count as two.
    const { stopSignalOf } = await import('./workers.ts');
    process.on('message', (message) => {
      const signal = stopSignalOf(message);
      if (signal) stop(signal);
    });
    process.on('SIGTERM', () => {});
    process.on('SIGINT', () => {});
    return;
  }
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
