import { loadConfig } from './config.ts';
import { hookApp } from './hooks/facade.ts';
import type { HookApp, HookSetup } from './hooks/types.ts';
import { Host } from './http/host.ts';

/** `createCairn`'s options: the `cairn serve` flags, hooks given in code, and any other CAIRN_* setting. */
export interface CairnOptions {
  /** Data directory (`./data`). */
  dir?: string;
  /** Port; 0 picks a free one (`url` then tells which). Default 8090. */
  port?: number;
  host?: string;
  /** PostgreSQL URL (CAIRN_DATABASE_URL); SQLite files under `dir` without it. */
  databaseUrl?: string;
  /** A hooks directory to load as `cairn serve` does; none by default in library mode. */
  hooksDir?: string;
  /** A pb_hooks directory (PocketBase's `*.pb.js`); none by default in library mode. */
  pbHooksDir?: string;
  /** A pb_migrations directory, applied at start (API contract §24); none by default in library mode. */
  pbMigrationsDir?: string;
  /** A folder served at `/` (PocketBase's pb_public); none by default in library mode. */
  publicDir?: string;
  /** Hook setups, each called with the `app` a hook file's default export gets. */
  hooks?: HookSetup[];
  /** Other settings, by their environment names (`{ CAIRN_LOG_LEVEL: 'silent' }`); `process.env` otherwise. */
  env?: Record<string, string | undefined>;
}

/** A Cairn instance in this process: register hooks (before `start`), start, use `url`, stop. */
export interface Cairn extends HookApp {
  start(): Promise<void>;
  stop(): Promise<void>;
  /** `http://host:port` once started. */
  readonly url: string;
  readonly port: number;
}

/**
 * Cairn as a library (API contract §16), for an application's own tests or to embed it: the same
 * server `cairn serve` runs, in this process. Registration methods called before `start` add to the
 * hooks; `records`, `mail` and `logger` work once started.
 */
export async function createCairn(options: CairnOptions = {}): Promise<Cairn> {
  const queued: HookSetup[] = [];
  let host: Host | undefined;
  let starting: Promise<void> | undefined;
  let stopped = false;
  const running = (): Host => {
    if (stopped) throw new Error('Cairn is stopped');
    if (!host) throw new Error('Cairn is not started: call start() first');
    return host;
  };
  const later =
    <K extends keyof HookApp>(name: K) =>
    (...args: unknown[]) => {
      if (starting) throw new Error(`${String(name)}: register hooks before start()`);
      queued.push((app) => (app[name] as (...a: unknown[]) => void)(...args));
    };
  const live = () => hookApp(running().hooks.slot, 'library');
  const cairn: Cairn = {
    onRecordCreate: later('onRecordCreate'),
    onRecordUpdate: later('onRecordUpdate'),
    onRecordDelete: later('onRecordDelete'),
    onRecordAfterCreateSuccess: later('onRecordAfterCreateSuccess'),
    onRecordAfterUpdateSuccess: later('onRecordAfterUpdateSuccess'),
    onRecordAfterDeleteSuccess: later('onRecordAfterDeleteSuccess'),
    onRecordEnrich: later('onRecordEnrich'),
    onRecordAuthRequest: later('onRecordAuthRequest'),
    onRecordAuthFlowRequest: later('onRecordAuthFlowRequest'),
    onFileDownloadRequest: later('onFileDownloadRequest'),
    onRecordsListRequest: later('onRecordsListRequest'),
    onRecordViewRequest: later('onRecordViewRequest'),
    onMailerSend: later('onMailerSend'),
    onMailerRecordPasswordResetSend: later('onMailerRecordPasswordResetSend'),
    onMailerRecordVerificationSend: later('onMailerRecordVerificationSend'),
    onMailerRecordEmailChangeSend: later('onMailerRecordEmailChangeSend'),
    onMailerRecordOTPSend: later('onMailerRecordOTPSend'),
    routerAdd: later('routerAdd'),
    cronAdd: later('cronAdd'),
    cronRemove: later('cronRemove'),
    records: (db) => live().records(db),
    db: (db) => live().db(db),
    settings: () => live().settings(),
    mail: { send: (message) => live().mail.send(message) },
    logger: {
      debug: (msg, data) => live().logger.debug(msg, data),
      info: (msg, data) => live().logger.info(msg, data),
      warn: (msg, data) => live().logger.warn(msg, data),
      error: (msg, data) => live().logger.error(msg, data),
    },
    start() {
      starting ??= (async () => {
        const env = { ...process.env, ...options.env };
        const config = loadConfig(
          { dir: options.dir, port: options.port, host: options.host, databaseUrl: options.databaseUrl, hooks: options.hooksDir ?? 'off', pbHooks: options.pbHooksDir ?? 'off', pbMigrations: options.pbMigrationsDir ?? 'off', publicDir: options.publicDir ?? 'off' },
          env,
        );
        host = await Host.start(config, { hooks: [...(options.hooks ?? []), ...queued] });
      })();
      return starting;
    },
    async stop() {
      if (starting) await starting.catch(() => undefined);
      stopped = true;
      // The embedding program decides when it drains: only with CAIRN_DRAIN_MS set explicitly.
      const drainSet = (options.env?.CAIRN_DRAIN_MS ?? process.env.CAIRN_DRAIN_MS ?? '') !== '';
      await host?.close(undefined, drainSet ? undefined : 0);
    },
    get url() {
      const h = running();
      const address = h.server.address();
      const name = typeof address === 'object' && address ? address.address : '127.0.0.1';
      return `http://${name.includes(':') ? `[${name}]` : name}:${h.port}`;
    },
    get port() {
      return running().port;
    },
  };
  return cairn;
}
