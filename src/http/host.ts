import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type App, buildApp } from '../app.ts';
import type { ServiceRestarter } from '../backups/service.ts';
import { recoverInterruptedRestore, type Swap } from '../backups/swap.ts';
import type { Config } from '../config.ts';
import { ApiError, badRequest } from '../errors.ts';
import { type Connections, trackConnections } from './connections.ts';
import { HookRuntime } from '../hooks/runtime.ts';
import { loadPbHooks } from '../pbhooks/index.ts';
import type { HookSetup } from '../hooks/types.ts';
import type { PbMigrationRuntime } from '../pbmigrations/runtime.ts';
import { watchHooks } from '../hooks/watch.ts';
import { clientErrorHandler } from './plugins/errors.ts';
import { processLogger } from './logging.ts';

export interface HostOptions {
  /** Hook setups given in code (library mode, `createCairn`), loaded after the hooks directory's files. */
  hooks?: readonly HookSetup[];
  /** What runs pb_migrations files, when not this build's own (tests). */
  pbMigrations?: PbMigrationRuntime;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const RESTARTING = 'The server is restarting on restored data; try again in a moment.';
const SHUTTING_DOWN = 'Shutting down.';
// How long a restore waits for requests under way to finish before it closes the databases anyway.
const DRAIN_MS = 30_000;
// Connections the kernel queues until the server accepts them: Node's default, 511, overflowed when
// 1,000 clients connected at once (TcpExtListenOverflows: each dropped connection was retried a second
// later by its client). The kernel caps it at net.core.somaxconn, as Go's servers ask for.
const LISTEN_BACKLOG = 65535;
// Fastify's default: longer than the idle timeouts of common load balancers.
const KEEP_ALIVE_MS = 72_000;

function refuse(res: http.ServerResponse, message: string): void {
  answer(res, 503, message, { 'retry-after': '1' });
}

function answer(res: http.ServerResponse, status: number, message: string, headers: http.OutgoingHttpHeaders = {}): void {
  const body = JSON.stringify(new ApiError(status, message).toJSON());
  res.writeHead(status, { ...headers, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/**
 * The HTTP server of `cairn serve`, and what lets Cairn restart its services in the same process: the
 * listening socket belongs to the host, which hands each request to the current app (Fastify with every
 * service, built by `buildApp`). A restore stops that app, swaps the data files, builds a new app on
 * them and hands it the requests from then on: same port, same process, every cache and worker new.
 * While that happens, requests are answered 503 (writes from the start of the restore, everything
 * during the swap itself).
 */
export class Host implements ServiceRestarter {
  readonly server: http.Server;
  private current!: App;
  private handler!: (req: http.IncomingMessage, res: http.ServerResponse) => void;
  /** Responses under way. */
  private readonly responses = new Set<http.ServerResponse>();
  private writesRefused?: string;
  private paused?: string;
  private readonly connections: Connections;
  /** Set once shutdown begins: every response from then on closes its connection. */
  private stopping = false;
  /** Set once a stop is asked for: health answers 503 and every answer closes its connection. */
  private draining = false;
  /** Ends the drain at once (a second signal). */
  private endDrain?: () => void;
  private closeIdleScheduled = false;
  private closed?: Promise<void>;
  /** The parts of a shutdown under way that have not finished (see `pending`). */
  private readonly steps = new Set<string>();

  /** Application hooks: loaded once per process, kept across a restore's rebuild of the app. */
  readonly hooks: HookRuntime;
  private stopWatchingHooks?: () => void;

  private constructor(
    private readonly config: Config,
    hooks: HookRuntime,
    private readonly pbMigrations?: PbMigrationRuntime,
  ) {
    this.hooks = hooks;
    // Node answers a request without `Host` (400) and an `Expect` it does not know (417) itself, with
    // an empty body: both are answered here instead, in the error shape every other refusal has.
    this.server = http.createServer({ requireHostHeader: false }, (req, res) => this.dispatch(req, res));
    this.server.keepAliveTimeout = KEEP_ALIVE_MS;
    this.server.on('clientError', clientErrorHandler);
    this.server.on('checkExpectation', (req: http.IncomingMessage, res: http.ServerResponse) => {
      res.shouldKeepAlive = false;
      answer(res, 417, `Unsupported Expect header: only "100-continue" is understood.`);
    });
    this.connections = trackConnections(this.server);
  }

  /**
   * Loads the application hooks (a file that does not load stops the start: `HookLoadError`), builds
   * the app and listens on the configured address (port 0: any free port).
   */
  static async start(config: Config, options: HostOptions = {}): Promise<Host> {
    // Before anything opens a file: a restore the process died in the middle of is undone. Only here,
    // at process start: the rebuild within a restore must find its swap as it left it.
    recoverInterruptedRestore(config.dir);
    const hooks = new HookRuntime({ dir: config.hooksDir, pbDir: config.pbHooksDir, loadPb: loadPbHooks, inline: options.hooks, timeoutMs: config.hookTimeoutMs, log: processLogger(config.logLevel) });
    await hooks.load();
    const host = new Host(config, hooks, options.pbMigrations);
    try {
      await host.build();
    } catch (err) {
      hooks.close();
      throw err;
    }
    try {
      await new Promise<void>((resolve, reject) => {
        host.server.once('error', reject);
        host.server.listen({ port: config.port, host: config.host, backlog: LISTEN_BACKLOG }, () => {
          host.server.off('error', reject);
          resolve();
        });
      });
    } catch (err) {
      await host.current.app.close();
      hooks.close();
      throw err;
    }
    if (config.dev) {
      // Both the TypeScript hooks and the pb_hooks reload (one load of both) when a file changes.
      const stops = [config.hooksDir, config.pbHooksDir].filter((d): d is string => !!d && existsSync(d)).map((d) => watchHooks(d, hooks, () => host.current.app.log));
      host.stopWatchingHooks = () => stops.forEach((stop) => stop());
    }
    return host;
  }

  get app(): App['app'] {
    return this.current.app;
  }

  get services(): App['services'] {
    return this.current.services;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  private dispatch(req: http.IncomingMessage, res: http.ServerResponse): void {
    if (req.headers.host === undefined && req.httpVersionMajor === 1 && req.httpVersionMinor >= 1) {
      // HTTP/1.1 requires it (RFC 9112 §3.2); Node's own check answers 400 with no body.
      res.shouldKeepAlive = false;
      return answer(res, 400, 'Missing Host header.');
    }
    // A request that reaches a stopping server on a connection opened before is served, and its
    // answer (`Connection: close`) ends the connection: clients open the next one elsewhere.
    if (this.stopping || this.draining) {
      res.shouldKeepAlive = false;
      // The balancer's health check sees the node going first, while it still serves everything else.
      const url = req.url ?? '';
      if (url === '/api/health' || url.startsWith('/api/health?')) return refuse(res, SHUTTING_DOWN);
    }
    if (this.paused !== undefined) return refuse(res, this.paused);
    if (this.writesRefused !== undefined && !SAFE_METHODS.has(req.method ?? '')) return refuse(res, this.writesRefused);
    this.responses.add(res);
    res.once('close', () => this.finished(res));
    this.handler(req, res);
  }

  private finished(res: http.ServerResponse): void {
    this.responses.delete(res);
    // A response whose headers went out before shutdown began promised to keep its connection open:
    // once it is finished, the connection is idle and is closed (see `close`).
    if (this.stopping && !this.closeIdleScheduled) {
      this.closeIdleScheduled = true;
      setImmediate(() => {
        this.closeIdleScheduled = false;
        this.server.closeIdleConnections();
      });
    }
  }

  private async build(): Promise<void> {
    let handler: ((req: http.IncomingMessage, res: http.ServerResponse) => void) | undefined;
    const app = await buildApp(this.config, {
      // Fastify gets a server that never listens; the host's socket calls its handler.
      serverFactory: (h) => {
        handler = h as typeof handler;
        return http.createServer();
      },
      restarter: this,
      hooks: this.hooks,
      pbMigrations: this.pbMigrations,
    });
    await app.app.ready();
    // Before it gets a request (before listening; during a restore, requests are refused until it is current).
    await app.warmUp();
    this.current = app;
    this.handler = handler!;
  }

  refuseWrites(message: string): () => void {
    this.writesRefused = message;
    return () => {
      if (this.writesRefused === message) this.writesRefused = undefined;
    };
  }

  async restart(swap: () => Promise<Swap>): Promise<void> {
    this.paused = RESTARTING;
    try {
      // Realtime streams are requests that never finish: ended first (their clients reconnect once
      // the new services serve).
      await this.current.services.realtime.close();
      // A request still receiving its body has not been acted on: its connection is closed rather
      // than waited for (a client stalled mid-upload held the restore, and everyone else on 503s, for
      // DRAIN_MS).
      for (const res of this.responses) if (!res.req.complete) res.req.socket.destroy();
      // The request that asked for the restart is one of those in flight: wait for the others.
      const deadline = Date.now() + DRAIN_MS;
      while (this.responses.size > 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      const log = this.current.app.log;
      await this.current.app.close();
      let swapped: Swap;
      try {
        swapped = await swap();
      } catch (err) {
        // Nothing was swapped (swapIn puts back what it moved): the services start on the same data.
        await this.build();
        throw err;
      }
      try {
        await this.build();
      } catch (err) {
        log.error({ err }, 'the restored data did not start; the previous data is back');
        swapped.rollback();
        await this.build();
        throw badRequest('The services did not start on the restored data, so the previous data was put back.');
      }
      swapped.commit();
    } finally {
      this.paused = undefined;
    }
  }

  /**
   * Graceful shutdown: first the drain (`drainMs`, CAIRN_DRAIN_MS; see `drain`), then, bounded by
   * `timeoutMs` (CAIRN_SHUTDOWN_TIMEOUT_MS): stops taking connections,
   * closes idle keep-alive connections and those that have not sent a byte at once, ends realtime streams,
   * lets requests under way finish (each answer then closes its connection) and webhook attempts in
   * flight go on within their own limit; after `timeoutMs` the remaining connections are closed
   * outright. Then the app closes: background work stops, webhook events not delivered stay pending in
   * the outbox (PostgreSQL leases handed back), the request log is written and the databases closed.
   * Calls after the first wait for the same shutdown.
   *
   * Node's `server.close()` closes only the keep-alive connections idle at that moment: one whose
   * request was under way then stays open after its answer, for the keep-alive timeout (72 s), and
   * serves whatever its client sends meanwhile. Under a steady stream of requests on keep-alive
   * connections that was nearly every connection, and the server did not stop.
   */
  close(timeoutMs = this.config.shutdownTimeoutMs, drainMs = this.config.drainMs): Promise<void> {
    this.closed ??= this.drain(drainMs).then(() => this.shutDown(timeoutMs));
    return this.closed;
  }

  /**
   * Ends a drain under way at once (a second signal); false when none is under way.
   */
  skipDrain(): boolean {
    if (!this.endDrain) return false;
    this.endDrain();
    return true;
  }

  /**
   * The first part of a stop, before any connection is refused: for `drainMs` the node keeps
   * accepting and serving, `/api/health` answers 503 ("Shutting down.") so a load balancer takes the
   * node out, and every answer carries `Connection: close` so kept-alive connections end after their
   * next request instead of being cut while a client may be sending on them.
   */
  private async drain(drainMs: number): Promise<void> {
    this.draining = true;
    if (drainMs <= 0) return;
    await this.step(
      'drain',
      new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, drainMs);
        this.endDrain = () => {
          clearTimeout(timer);
          resolve();
        };
      }),
    );
    this.endDrain = undefined;
  }

  /** What an unfinished shutdown is still waiting for (logged when it overruns). */
  pending(): { steps: string[]; requests: number; connections: number } {
    const steps = [...this.steps];
    if (this.current.closing.step) steps.push(this.current.closing.step);
    return { steps, requests: this.responses.size, connections: this.connections.count };
  }

  private step<T>(name: string, work: Promise<T>): Promise<T> {
    this.steps.add(name);
    return work.finally(() => this.steps.delete(name));
  }

  private async shutDown(timeoutMs: number): Promise<void> {
    // Parts of the shutdown wait on unref'd threads (checkpoints, the request log): the process
    // must not end before they answer, because nothing else may be holding it up by then.
    const alive = setInterval(() => {}, 60_000);
    try {
      const { app, services } = this.current;
      const deadline = Date.now() + timeoutMs;
      this.stopping = true;
      const closed = this.step('connections', new Promise<void>((resolve) => this.server.close(() => resolve())));
      for (const res of this.responses) if (!res.headersSent) res.shouldKeepAlive = false;
      this.server.closeIdleConnections();
      this.connections.closeUnused();
      // Alongside the requests: realtime streams never finish by themselves (clients reconnect to the
      // next server), and webhook attempts in flight get their grace now rather than after the drain.
      // Events that requests commit from now on stay pending in the outbox for the next start.
      const background = Promise.allSettled([
        this.step('realtime streams', services.realtime.close()),
        this.step('webhook delivery', services.webhooks.stop(timeoutMs)),
      ]);
      let timer: NodeJS.Timeout | undefined;
      const drained = await Promise.race([closed.then(() => true), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), timeoutMs)))]);
      clearTimeout(timer);
      if (!drained) {
        app.log.warn({ requests: this.responses.size, connections: this.connections.count }, `shutdown: closing the connections still open after ${timeoutMs} ms`);
        this.server.closeAllConnections();
        await closed;
      }
      await background;
      // Mail goes out in the background: what is still being sent gets what is left of the time.
      await this.step('mail', services.mailer.close(Math.max(0, deadline - Date.now())));
      await this.step('services', app.close());
      this.stopWatchingHooks?.();
      this.hooks.close();
    } finally {
      clearInterval(alive);
    }
  }
}
