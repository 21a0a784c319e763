import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { type App, buildApp } from '../app.ts';
import type { ServiceRestarter } from '../backups/service.ts';
import { recoverInterruptedRestore, type Swap } from '../backups/swap.ts';
import type { Config } from '../config.ts';
import { ApiError, badRequest } from '../errors.ts';
import { unusedConnections } from './connections.ts';
import { clientErrorHandler } from './plugins/errors.ts';

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const RESTARTING = 'The server is restarting on restored data; try again in a moment.';
// How long a restore waits for requests under way to finish before it closes the databases anyway.
const DRAIN_MS = 30_000;
// Fastify's default: longer than the idle timeouts of common load balancers.
const KEEP_ALIVE_MS = 72_000;

function refuse(res: http.ServerResponse, message: string): void {
  const body = JSON.stringify(new ApiError(503, message).toJSON());
  res.writeHead(503, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(body), 'retry-after': '1' });
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
  private inFlight = 0;
  private writesRefused?: string;
  private paused?: string;
  private readonly unused: { closeAll(): void };

  private constructor(private readonly config: Config) {
    this.server = http.createServer((req, res) => this.dispatch(req, res));
    this.server.keepAliveTimeout = KEEP_ALIVE_MS;
    this.server.on('clientError', clientErrorHandler);
    this.unused = unusedConnections(this.server);
  }

  /** Builds the app and listens on the configured address (port 0: any free port). */
  static async start(config: Config): Promise<Host> {
    // Before anything opens a file: a restore the process died in the middle of is undone. Only here,
    // at process start: the rebuild within a restore must find its swap as it left it.
    recoverInterruptedRestore(config.dir);
    const host = new Host(config);
    await host.build();
    try {
      await new Promise<void>((resolve, reject) => {
        host.server.once('error', reject);
        host.server.listen(config.port, config.host, () => {
          host.server.off('error', reject);
          resolve();
        });
      });
    } catch (err) {
      await host.current.app.close();
      throw err;
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

  private readonly finished = (): void => {
    this.inFlight--;
  };

  private dispatch(req: http.IncomingMessage, res: http.ServerResponse): void {
    if (this.paused !== undefined) return refuse(res, this.paused);
    if (this.writesRefused !== undefined && !SAFE_METHODS.has(req.method ?? '')) return refuse(res, this.writesRefused);
    this.inFlight++;
    res.once('close', this.finished);
    this.handler(req, res);
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
    });
    await app.app.ready();
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
      // The request that asked for the restart is one of those in flight: wait for the others.
      const deadline = Date.now() + DRAIN_MS;
      while (this.inFlight > 1 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
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

  /** Stops taking connections, lets requests under way finish, then closes the app and its databases. */
  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeIdleConnections();
    // Requests that never finish by themselves are ended, so the wait is for the others only:
    // realtime streams (clients reconnect to the next server) and connections without a request.
    await this.current.services.realtime.close();
    this.unused.closeAll();
    await closed;
    await this.current.app.close();
  }
}
