import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import path from 'node:path';
import { AdminService } from './auth/admins.ts';
import { ApiKeyService } from './auth/api-keys.ts';
import { Authenticator } from './auth/authenticate.ts';
import { ensureDefaultAdmin } from './auth/default-admin.ts';
import { AdminPasswordReset } from './auth/admin-flows.ts';
import { BackupService, type ServiceRestarter } from './backups/service.ts';
import { EmailFlows } from './auth/email-flows.ts';
import { Mailer } from './auth/mail/mailer.ts';
import { type SmtpSettings, smtpSection } from './auth/mail/smtp-settings.ts';
import { PocketBaseTokens } from './auth/pocketbase-tokens.ts';
import { OAuth2Service } from './auth/oauth2/login.ts';
import { MfaService } from './auth/mfa.ts';
import { OtpService } from './auth/otp.ts';
import { RecordAuthService } from './auth/record-auth.ts';
import { SuperuserService } from './auth/superusers.ts';
import { deriveKey, loadInstanceSecret } from './auth/secret.ts';
import { TokenService } from './auth/tokens.ts';
import { registerFieldType } from './collections/fields/registry.ts';
import { pocketbaseSections } from './settings/pocketbase-sections.ts';
import { CollectionService } from './collections/service.ts';
import type { Config } from './config.ts';
import { loggerOptions, registerRequestLog } from './http/logging.ts';
import { registerCors } from './http/plugins/cors.ts';
import { registerContext } from './http/plugins/context.ts';
import { FileService } from './files/download.ts';
import { fileField } from './files/field.ts';
import { LocalFileStorage } from './files/storage/local.ts';
import type { FileStorage } from './files/storage/types.ts';
import { FileStore } from './files/store.ts';
import { FileTokens } from './files/tokens.ts';
import { clientErrorHandler, frameworkErrors, registerErrorHandling } from './http/plugins/errors.ts';
import { registerJsonBody } from './http/plugins/json-body.ts';
import { registerMultipart } from './http/plugins/multipart.ts';
import { registerRateLimit } from './http/plugins/rate-limit.ts';
import { redisCounters } from './http/plugins/rate-limit-stores.ts';
import type { RateCounters } from './ratelimit/counters.ts';
import { DatabaseCounters } from './ratelimit/database.ts';
import { adminRoutes } from './http/routes/admins.ts';
import { superuserRoutes } from './http/routes/superusers.ts';
import { authRoutes } from './http/routes/auth.ts';
import { backupRoutes } from './http/routes/backups.ts';
import { collectionRoutes } from './http/routes/collections.ts';
import { DashboardAssets } from './dashboard/assets.ts';
import { dashboardRoutes } from './http/routes/dashboard.ts';
import { databaseRoutes } from './http/routes/databases.ts';
import { fileRoutes } from './http/routes/files.ts';
import { healthRoutes } from './http/routes/health.ts';
import { settingsRoutes } from './http/routes/settings.ts';
import { keyRoutes } from './http/routes/keys.ts';
import { logRoutes } from './http/routes/logs.ts';
import { collectRoutes, openApiRoutes } from './http/routes/openapi.ts';
import { migrationRoutes } from './http/routes/migrations.ts';
import { realtimeRoutes } from './http/routes/realtime.ts';
import { recordRoutes } from './http/routes/records.ts';
import { batchRoutes } from './http/routes/batch.ts';
import { sqlRoutes } from './http/routes/sql.ts';
import { cronsRoutes } from './http/routes/crons.ts';
import { pocketBaseSystemCrons, SystemCrons } from './jobs/system-crons.ts';
import { pruneMfas } from './auth/mfa.ts';
import { pruneOtps } from './auth/otp.ts';
import { BatchService } from './batch/service.ts';
import { ruleRoutes } from './http/routes/rules.ts';
import { databaseSteps, systemSteps } from './internal-schema.ts';
import { RequestLogs } from './logs/service.ts';
import { DatabaseLogSink, SqliteThreadLogSink } from './logs/sink.ts';
import { logSteps } from './logs/store.ts';
import { SqliteDatabase } from './storage/sqlite/driver.ts';
import { fulltextSearch } from './migrations/fts.ts';
import { MigrationService } from './migrations/service.ts';
import { watchMigrationJournal } from './migrations/watch.ts';
import { LocalChangeFeed } from './realtime/feed.ts';
import { PgChangeFeed } from './realtime/postgres-feed.ts';
import { PgClientDirectory } from './realtime/postgres-directory.ts';
import { realtimeChangeHook } from './realtime/hook.ts';
import { RealtimeService } from './realtime/service.ts';
import { RecordService } from './records/service.ts';
import { checkRule, RuleAccess } from './rules/access/rule-access.ts';
import { DatabaseRegistry, openBackend } from './storage/index.ts';
import { Invalidations } from './storage/invalidations.ts';
import { metaSection } from './settings/meta.ts';
import { SettingsService } from './settings/service.ts';
import { oauth2Section } from './auth/oauth2/providers.ts';
import { cronRoutes } from './http/routes/cron.ts';
import { webhookRoutes } from './http/routes/webhooks.ts';
import { workflowRoutes } from './http/routes/workflows.ts';
import { hookRouteAnswers, hookRouteHandler, hookRoutes } from './http/routes/hooks.ts';
import { HookCronRunner } from './hooks/cron.ts';
import type { HookSet } from './hooks/registry.ts';
import { hiddenPbRoutes, shadowedRoutes } from './hooks/routes.ts';
import { HookLoadError, type HookRuntime } from './hooks/runtime.ts';
import { WorkflowService } from './workflows/service.ts';
import { CronService } from './jobs/scheduler.ts';
import { WebhookService } from './webhooks/service.ts';
import { validateTriggers } from './webhooks/triggers.ts';
import { OutboundPolicy } from './lib/outbound.ts';
import { sqliteOutbox } from './webhooks/sqlite/store.ts';
import { postgresOutbox } from './webhooks/postgres/store.ts';

/** The long-lived parts of a running Cairn, shared by routes, CLI commands and background workers. */
export interface Services {
  config: Config;
  /** The instance secret (CAIRN_JWT_SECRET or the generated one); purpose keys derive from it. */
  secret: string;
  registry: DatabaseRegistry;
  collections: CollectionService;
  records: RecordService;
  /** `POST /api/batch`: several record writes in one transaction. */
  batch: BatchService;
  tokens: TokenService;
  admins: AdminService;
  /** The administrators as PocketBase ≥ 0.23's `_superusers` records. */
  superusers: SuperuserService;
  authenticator: Authenticator;
  recordAuth: RecordAuthService;
  /** One-time sign-in codes by mail. */
  otp: OtpService;
  apiKeys: ApiKeyService;
  settings: SettingsService;
  webhooks: WebhookService;
  cron: CronService;
  /** Uploads, storage and clean-up of record files (the records domain calls it on writes). */
  fileStore: FileStore;
  /** Downloads and file tokens. */
  files: FileService;
  migrations: MigrationService;
  mailer: Mailer;
  emailFlows: EmailFlows;
  adminPasswordReset: AdminPasswordReset;
  oauth2: OAuth2Service;
  workflows: WorkflowService;
  /** Server-sent record changes (PocketBase's realtime). */
  realtime: RealtimeService;
  /** The request log (`/api/logs`), kept in `registry.logs`. */
  requestLogs: RequestLogs;
  backups: BackupService;
  fileTokens: FileTokens;
}

export interface App {
  app: FastifyInstance;
  services: Services;
  /** While the app closes, the part it is closing (a shutdown that hangs logs it). */
  closing: { step?: string };
}

export interface ServiceOptions {
  /** Application hooks (the server's); CLI commands run without. */
  hooks?: HookRuntime;
}

/** Opens the data directory and wires the domains together (no HTTP): used by the server and the CLI. */
export async function buildServices(config: Config, options: ServiceOptions = {}): Promise<Services> {
  const hooks = options.hooks;
  registerFieldType(fileField);
  const backend = await openBackend(config);
  // The outbox is the storage driver's: SQLite's single process keeps pending events in memory,
  // PostgreSQL's nodes claim them with leases.
  const outbox = backend.dialect.name === 'postgres' ? postgresOutbox() : sqliteOutbox();
  const registry = new DatabaseRegistry({ dir: config.dir, backend, systemSteps, databaseSteps: databaseSteps(outbox), logSteps });
  await registry.start();
  let secret: string;
  try {
    secret = await loadInstanceSecret(config.dir, config.jwtSecret, registry.backend.shared ? registry.system : undefined);
  } catch (err) {
    await registry.close();
    throw err;
  }
  // Caches of one node that another node can make stale (collections, settings, cron jobs, the
  // database list) are dropped through notices between the nodes (LISTEN/NOTIFY on PostgreSQL).
  const invalidations = new Invalidations(config.nodeId, backend.notifications, registry.system);
  invalidations.on('databases', () => void registry.reload().catch(() => undefined));
  registry.onCreated = (name) => invalidations.publish('databases', name);
  const storageDir = path.join(config.dir, 'storage');
  // Uploads are staged in the data directory whichever storage keeps them.
  // The AWS SDK (some 40 MB resident with its upload helper) is imported only for CAIRN_STORAGE=s3.
  const storage: FileStorage = config.s3 ? new (await import('./files/storage/s3.ts')).S3FileStorage(config.s3) : new LocalFileStorage(storageDir);
  const fileStore = new FileStore({ storage, stagingDir: path.join(storageDir, '.staging'), requestLimit: config.uploadLimit });
  await fileStore.start();
  // Where outbound requests may not go: refused when a target is saved (its literal host) and when
  // each delivery connects (the resolved address).
  const outbound = new OutboundPolicy(config.outboundAllow);
  const collections = new CollectionService({
    validateRule: (c, rule, others) => checkRule(c, rule, others, registry.system.dialect),
    validateOptions: [(c) => validateTriggers(c, outbound)],
    invalidations,
  });
  invalidations.on('collections', (name) => {
    for (const info of name ? [{ name }] : registry.list()) {
      const db = registry.opened(info.name);
      if (db) collections.forget(db);
    }
  });
  const webhooks = new WebhookService({ registry, outbox, secret, config, outbound });
  // Committed record changes reach realtime through this feed: this process's own writes on SQLite;
  // on PostgreSQL every node's, announced by the database itself.
  const changeFeed = backend.notifications ? new PgChangeFeed(backend.notifications, registry, collections, config.nodeId) : new LocalChangeFeed();
  const records = new RecordService({
    collections,
    access: new RuleAccess(),
    changeHooks: [webhooks.changeHook, fileStore.changeHook, realtimeChangeHook(changeFeed), ...(hooks ? [hooks.changeHook] : [])],
    minPasswordLength: config.minPasswordLength,
    expandLimits: { records: config.expandMaxRecords, bytes: config.maxAnswerMb * 1024 * 1024 },
    files: fileStore,
    search: fulltextSearch,
    events: hooks,
  });
  const tokens = new TokenService(deriveKey(secret, 'auth'), config.tokenTtl);
  const admins = new AdminService(registry.system, config.minPasswordLength);
  const authenticator = new Authenticator(tokens, admins, collections, registry);
  const pocketbaseTokens = new PocketBaseTokens(admins, collections);
  authenticator.pocketbase = pocketbaseTokens;
  const apiKeys = new ApiKeyService(deriveKey(secret, 'apikey'), tokens);
  authenticator.apiKeys = apiKeys.resolve;
  const batch = new BatchService({ collections, records, files: fileStore, maxRequests: config.batchMaxRequests });
  const superusers = new SuperuserService(registry.system, admins, tokens);
  const recordAuth = new RecordAuthService(tokens, collections, records, new MfaService(collections));
  recordAuth.onSignIn = hooks?.signIn;
  superusers.onSignIn = hooks?.signIn;
  const settings = new SettingsService(
    registry.system,
    [metaSection(`http://${config.host}:${config.port}`), oauth2Section, smtpSection(config.smtpUrl), ...pocketbaseSections(config)],
    invalidations,
  );
  const fileTokens = new FileTokens(deriveKey(secret, 'file'), config.fileTokenTtl, admins, collections, authenticator);
  const files = new FileService(fileStore.storage, collections, records, fileTokens);
  files.onDownload = hooks?.fileDownload;
  const migrations = new MigrationService({ dir: config.dir, registry, collections });
  const mailer = new Mailer(config.smtpUrl, path.join(config.dir, 'mail'), () => settings.get<SmtpSettings>('smtp'));
  const emailFlows = new EmailFlows(records, mailer, settings, config.minPasswordLength);
  emailFlows.pocketbase = pocketbaseTokens;
  emailFlows.onFlowRequest = hooks?.flowRequest;
  const otp = new OtpService(deriveKey(secret, 'otp'), records, mailer, settings);
  otp.onFlowRequest = hooks?.flowRequest;
  const adminPasswordReset = new AdminPasswordReset(registry.system, admins, mailer, settings);
  adminPasswordReset.pocketbase = pocketbaseTokens;
  const oauth2 = new OAuth2Service(settings, records, recordAuth);
  const cron = new CronService(registry, webhooks, invalidations);
  const workflows = new WorkflowService({ registry, collections, records, webhooks, node: config.nodeId });
  const realtime = new RealtimeService({
    feed: changeFeed,
    directory: backend.notifications ? new PgClientDirectory(registry.system, backend.notifications, config.nodeId) : undefined,
    registry,
    records: records.deps,
    authenticate: (bearer, dbName) => authenticator.authenticateBearer(bearer, dbName, undefined),
    limits: {
      maxClients: config.realtimeMaxClients,
      maxSubscriptions: config.realtimeMaxSubscriptions,
      clientBuffer: config.realtimeClientBuffer,
      keepAliveMs: config.realtimeKeepAliveMs,
    },
  });
  // On SQLite the log is written from a thread of its own (logs/sink.ts); another driver writes
  // through its Database.
  const logsDb = registry.logs;
  const requestLogs = new RequestLogs(logsDb, {
    enabled: config.requestLogs,
    keepDays: config.logDays,
    sink: logsDb instanceof SqliteDatabase && config.requestLogs ? (store) => SqliteThreadLogSink.open(logsDb.file) ?? new DatabaseLogSink(store) : undefined,
  });
  const backups = new BackupService(config.dir, registry, config.storage);
  // Notices from other nodes flow before this node serves or changes anything.
  await backend.notifications?.ready();
  return {
    config,
    secret,
    registry,
    collections,
    records,
    batch,
    tokens,
    admins,
    superusers,
    authenticator,
    recordAuth,
    otp,
    apiKeys,
    settings,
    webhooks,
    cron,
    workflows,
    realtime,
    mailer,
    emailFlows,
    adminPasswordReset,
    fileStore,
    files,
    oauth2,
    migrations,
    requestLogs,
    backups,
    fileTokens,
  };
}

/**
 * Builds the HTTP application. The request pipeline reads top to bottom: errors, logging, request
 * context (database, caller), then the routes of each domain.
 */
export interface BuildAppOptions {
  /** Fastify's `serverFactory`: the host (`http/host.ts`) owns the listening socket. */
  serverFactory?: FastifyServerOptions['serverFactory'];
  /** What restarts the services after a restore (the host); without it restores are refused. */
  restarter?: ServiceRestarter;
  /** Application hooks, loaded by the host (they outlive a restore's rebuild of the app). */
  hooks?: HookRuntime;
}

/**
 * Where the rate limits count across nodes: Redis when CAIRN_REDIS_URL is set, else the database the
 * nodes share (PostgreSQL); undefined on SQLite, whose single process counts in memory.
 */
async function rateCounters(config: Config, registry: DatabaseRegistry, app: FastifyInstance): Promise<RateCounters | undefined> {
  const report = everyMinute((err) => app.log.warn({ err }, 'rate-limit counters: Redis is out of reach'));
  if (config.redisUrl) return redisCounters(config.redisUrl, config.redisPrefix, report);
  if (registry.backend.shared) return new DatabaseCounters(registry.system, (err) => app.log.warn({ err }, 'pruning rate-limit counters failed'));
  return undefined;
}

/** `fn`, called at most once a minute: for a failure that repeats on every request. */
function everyMinute(fn: (err: unknown) => void): (err: unknown) => void {
  let last = 0;
  return (err) => {
    if (Date.now() - last < 60_000) return;
    last = Date.now();
    fn(err);
  };
}

export async function buildApp(config: Config, options: BuildAppOptions = {}): Promise<App> {
  const hooks = options.hooks;
  const services = await buildServices(config, { hooks });
  services.backups.restarter = options.restarter;
  const app = Fastify({
    serverFactory: options.serverFactory,
    ...loggerOptions(config.logLevel),
    bodyLimit: config.bodyLimit,
    trustProxy: config.trustProxy ?? false,
    // Shutdown finishes in-flight requests and closes idle keep-alive connections.
    forceCloseConnections: 'idle',
    frameworkErrors,
    clientErrorHandler,
    // Stored file names reach 255 characters (files/names.ts); the router's default is 100.
    routerOptions: { maxParamLength: 255 },
  });

  try {
    await ensureDefaultAdmin(config, services.admins, (msg) => app.log.info(msg));
  } catch (err) {
    await services.registry.close();
    throw err;
  }

  // JSON is the API's body format; other types are added by the routes that take them (uploads).
  app.removeContentTypeParser('text/plain');
  registerJsonBody(app);
  registerErrorHandling(app);
  registerRequestLog(app, services.requestLogs);
  await registerCors(app, config.corsOrigins);
  const sharedCounters = config.rateLimit ? await rateCounters(config, services.registry, app) : undefined;
  registerRateLimit(app, {
    enabled: config.rateLimit,
    globalMax: config.globalRateLimit,
    shared: sharedCounters,
    // Redis counts every request's hit for the price of a round trip; on PostgreSQL the global limit,
    // checked on every request, stays in each node's memory (docs/auth.md: measured).
    shareGlobal: config.shareGlobalRateLimit ?? config.redisUrl !== undefined,
    onSharedError: everyMinute((err) => app.log.warn({ err }, 'rate-limit counters out of reach: counting in this node\'s memory meanwhile')),
  });
  const contextOptions = { registry: services.registry, authenticate: services.authenticator.authenticate };
  registerContext(app, contextOptions);
  await registerMultipart(app, { fieldSizeLimit: config.bodyLimit });

  const routes = collectRoutes(app);
  // Every route of Cairn's, for the check that no hook route shadows one.
  const ownRoutes: Array<{ method: string; url: string }> = [];
  app.addHook('onRoute', (r) => {
    for (const method of [r.method].flat()) ownRoutes.push({ method, url: r.url });
  });
  await app.register(healthRoutes(services.registry, config.nodeId, () => services.backups.idle));
  await app.register(adminRoutes(services.admins, services.tokens, services.adminPasswordReset));
  await app.register(superuserRoutes(services.superusers, services.adminPasswordReset));
  await app.register(authRoutes({ recordAuth: services.recordAuth, flows: services.emailFlows, oauth2: services.oauth2, otp: services.otp }));
  await app.register(keyRoutes(services.apiKeys));
  await app.register(settingsRoutes(services.settings, services.mailer, { storage: services.fileStore.storage, onS3: config.s3 !== undefined }));
  await app.register(databaseRoutes(services.registry));
  await app.register(collectionRoutes(services.collections, services.records, { tokenTtl: config.tokenTtl }));
  await app.register(ruleRoutes(services.collections));
  await app.register(recordRoutes(services.collections, services.records, services.fileStore));
  await app.register(batchRoutes(services.batch, services.fileStore));
  await app.register(fileRoutes(services.files, services.registry));
  await app.register(webhookRoutes(services.webhooks));
  await app.register(cronRoutes(services.cron));
  await app.register(migrationRoutes(services.migrations));
  await app.register(workflowRoutes(services.workflows, services.authenticator));
  await app.register(realtimeRoutes(services.realtime));
  await app.register(logRoutes(services.requestLogs));
  await app.register(sqlRoutes());
  // PocketBase's own maintenance jobs, listed and run by /api/crons before the hooks' cronAdd jobs.
  const backupCron = config.backupCron && !services.backups.unsupported() ? config.backupCron : undefined;
  const systemCrons = new SystemCrons(
    pocketBaseSystemCrons({
      pruneLogs: () => services.requestLogs.prune(),
      databases: () => services.registry.openedNames().flatMap((name) => services.registry.opened(name) ?? []),
      internal: () => [services.registry.system, services.registry.logs],
      pruneMfas,
      pruneOtps,
      backup: backupCron ? { expression: backupCron, run: () => services.backups.takeScheduled(config.backupKeep, app.log) } : undefined,
    }),
    app.log,
  );
  await app.register(cronsRoutes(hooks, systemCrons));
  await app.register(backupRoutes(services.backups, services.fileTokens));
  await app.register(openApiRoutes(services.collections, routes));
  // A pb_hooks app's `GET /` (or catch-all) answers `/` rather than the redirect to the console.
  const root = hooks && { answers: (path: string) => hooks.current.routes.some((r) => r.source.endsWith('.pb.js')) && hookRouteAnswers(hooks, path), handle: hookRouteHandler(hooks, contextOptions) };
  await app.register(dashboardRoutes(new DashboardAssets(config.dashboardDir), root || undefined));
  if (hooks) {
    // Last: the hooks' catch-all route is what Fastify tries after every route above.
    // The catch-all that serves hook routes is not one they could shadow.
    // A pb_hooks route is served wherever Cairn's routes do not answer (PocketBase's router: the more
    // specific pattern wins), so a catch-all serves every other path and `GET /` is the app's
    // (dashboard.ts defers to it). Only a concrete path Cairn serves itself for the same method
    // (`GET /api/health`) is left out, with a warning: the app runs as it is, minus that route.
    const check = (set: HookSet) => {
      const own = ownRoutes.filter((r) => r.url !== '/*');
      const pb = set.routes.filter((r) => r.source.endsWith('.pb.js'));
      if (pb.length > 0) {
        const hidden = hiddenPbRoutes(
          pb,
          own.filter((r) => r.url !== '/'),
        );
        if (hidden.length > 0) app.log.warn({ routes: hidden }, 'pb_hooks routes Cairn serves itself are not served');
      }
      return shadowedRoutes(set.routes.filter((r) => !r.source.endsWith('.pb.js')), own);
    };
    const problems = check(hooks.current);
    if (problems.length > 0) {
      await services.registry.close();
      throw new HookLoadError(problems.join('; '));
    }
    hooks.check = check;
    await app.register(hookRoutes(hooks, contextOptions, config.dev || hooks.current.routes.length > 0));
  }

  // Background work starts with the server (CLI commands never deliver) and stops before the
  // databases close, so interrupted attempts can still be returned to the queue.
  await services.webhooks.start(app.log);
  await services.cron.start(app.log);
  services.mailer.log = app.log;
  await services.workflows.start(app.log);
  services.realtime.start(app.log);
  // Event streams never end by themselves: closing the app ends them (clients reconnect to the next
  // server). The host ends them earlier still, before it waits for requests under way (http/host.ts).
  app.addHook('preClose', async () => {
    await services.realtime.close();
  });
  if (config.requestLogs) services.requestLogs.writer.onError = (err) => app.log.error({ err }, 'request log write failed');
  services.requestLogs.start((err) => app.log.error({ err }, 'request log pruning failed'));
  systemCrons.start();
  const hookServices = hooks && { registry: services.registry, collections: services.collections, records: services.records, mailer: services.mailer, emailFlows: services.emailFlows, settings: services.settings, log: app.log };
  const hookCron = hooks && new HookCronRunner(services.registry.system, config.nodeId, app.log);
  if (hooks && hookServices && hookCron) {
    hooks.attach(hookServices);
    services.realtime.hooks = hooks;
    hookCron.start(hooks.current);
    hooks.onSwap = (set) => hookCron.start(set);
  }
  const stopWatchingMigrations = watchMigrationJournal(services.registry, services.collections);
  const closing: App['closing'] = {};
  const step = (name: string) => (closing.step = name);
  app.addHook('onClose', async () => {
    stopWatchingMigrations();
    hookCron?.stop();
    if (hooks && hookServices) {
      step('hooks');
      await hooks.terminate();
      hooks.detach(hookServices);
      if (hooks.onSwap) hooks.onSwap = undefined;
    }
    systemCrons.stop();
    services.cron.stop();
    step('workflow runs');
    await services.workflows.stop();
    step('webhook delivery');
    await services.webhooks.stop();
    // After the server has stopped taking requests (Fastify's own close hook runs first): every
    // request answered is in the log.
    step('request log');
    await services.requestLogs.stop();
    step('mail');
    await services.mailer.close();
    step('databases');
    await services.registry.close();
    services.fileStore.storage.close?.();
    closing.step = undefined;
  });
  return { app, services, closing };
}
