import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import path from 'node:path';
import { AdminService } from './auth/admins.ts';
import { ApiKeyService } from './auth/api-keys.ts';
import { Authenticator } from './auth/authenticate.ts';
import { ensureDefaultAdmin } from './auth/default-admin.ts';
import { AdminPasswordReset } from './auth/admin-flows.ts';
import { backupPlaces, scheduleBackups } from './backups/schedule.ts';
import { BackupService, type ServiceRestarter } from './backups/service.ts';
import { EmailFlows } from './auth/email-flows.ts';
import { AuthAlerts } from './auth/auth-alert.ts';
import { Mailer } from './auth/mail/mailer.ts';
import { type SmtpSettings, smtpSection } from './auth/mail/smtp-settings.ts';
import { findSendmail } from './auth/mail/sendmail.ts';
import { PocketBaseTokens } from './auth/pocketbase-tokens.ts';
import { hashPassword, MAX_PASSWORD_LENGTH, verifyPassword } from './auth/passwords.ts';
import { OAuth2Service } from './auth/oauth2/login.ts';
import { MfaService, pruneMfas } from './auth/mfa.ts';
import { OtpService, pruneOtps } from './auth/otp.ts';
import { RecordAuthService } from './auth/record-auth.ts';
import { SuperuserIps } from './auth/superuser-ips.ts';
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
import type { StoredS3 } from './files/storage/check.ts';
import { SettingsFileStorage } from './files/storage/switch.ts';
import { FileStore } from './files/store.ts';
import { Thumbnails } from './files/thumbs.ts';
import { FileTokens } from './files/tokens.ts';
import { clientErrorHandler, frameworkErrors, registerErrorHandling } from './http/plugins/errors.ts';
import { registerJsonBody } from './http/plugins/json-body.ts';
import { registerFormBody } from './http/plugins/form-body.ts';
import { withoutApiTrailingSlash } from './http/plugins/trailing-slash.ts';
import { registerTrustedProxy, type TrustedProxy } from './http/plugins/trusted-proxy.ts';
import { registerMultipart } from './http/plugins/multipart.ts';
import { registerRateLimit } from './http/plugins/rate-limit.ts';
import { type WarmUp, warmUp } from './http/warm-up.ts';
import type { RateLimitSettings } from './http/plugins/rate-limit-rules.ts';
import { redisCounters } from './http/plugins/rate-limit-stores.ts';
import type { RateCounters } from './ratelimit/counters.ts';
import { DatabaseCounters } from './ratelimit/database.ts';
import { adminRoutes } from './http/routes/admins.ts';
import { superuserRoutes } from './http/routes/superusers.ts';
import { authRoutes } from './http/routes/auth.ts';
import { backupRoutes } from './http/routes/backups.ts';
import { collectionRoutes } from './http/routes/collections.ts';
import { DashboardAssets } from './dashboard/assets.ts';
import { dashboardRoutes, type RootRoute } from './http/routes/dashboard.ts';
import { PublicFolder } from './http/routes/public.ts';
import { notFound } from './errors.ts';
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
import { type BatchLimits, BatchService } from './batch/service.ts';
import { ruleRoutes } from './http/routes/rules.ts';
import { databaseSteps, systemSteps } from './internal-schema.ts';
import { type LogSettings, RequestLogs } from './logs/service.ts';
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
import { DatabaseRegistry, DEFAULT_DATABASE, openBackend } from './storage/index.ts';
import { Invalidations } from './storage/invalidations.ts';
import { defaultAppUrl, metaSection } from './settings/meta.ts';
import { SettingsService } from './settings/service.ts';
import { oauth2Section } from './auth/oauth2/providers.ts';
import { cronRoutes } from './http/routes/cron.ts';
import { webhookRoutes } from './http/routes/webhooks.ts';
import { workflowRoutes } from './http/routes/workflows.ts';
import { hookRouteAnswers, hookRouteHandler, hookRoutes } from './http/routes/hooks.ts';
import { HookCronRunner } from './hooks/cron.ts';
import type { HookSet } from './hooks/registry.ts';
import type { HookServices } from './hooks/facade.ts';
import { Automigrate } from './pbmigrations/automigrate.ts';
import { PbMigrationRunner } from './pbmigrations/runner.ts';
import { pbMigrationRuntime, type PbMigrationRuntime } from './pbmigrations/runtime.ts';
import type { PbMigrationExecutor } from './pbmigrations/types.ts';
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
  /** Where `fileStore` keeps files: the `s3` settings' bucket, CAIRN_STORAGE's, or the local directory. */
  fileStorage: SettingsFileStorage;
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
  /** Sends a few requests through the app before it serves (http/warm-up.ts): the server calls it. */
  warmUp(): Promise<void>;
}

export interface ServiceOptions {
  /** Application hooks (the server's); CLI commands run without. */
  hooks?: HookRuntime;
  /** A server keeps PostgreSQL connections open (CAIRN_PG_POOL_MIN); a command opens what it uses. */
  serving?: boolean;
}

/** Opens the data directory and wires the domains together (no HTTP): used by the server and the CLI. */
export async function buildServices(config: Config, options: ServiceOptions = {}): Promise<Services> {
  const hooks = options.hooks;
  registerFieldType(fileField);
  const backend = await openBackend(options.serving ? config : { ...config, pgPoolMin: 0 });
  // The outbox is the storage driver's: SQLite's single process keeps pending events in memory,
  // PostgreSQL's nodes claim them with leases.
  const outbox = backend.dialect.name === 'postgres' ? postgresOutbox() : sqliteOutbox();
  // Where several processes share the storage: the lock that serializes a decision among them.
  const lock = backend.lockInTransaction?.bind(backend);
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
  const invalidations = new Invalidations(config.nodeId, backend.notifications, registry.system, backend.processNotices);
  invalidations.on('databases', () => registry.reload().catch(() => undefined));
  registry.onCreated = (name) => invalidations.publish('databases', name);
  const storageDir = path.join(config.dir, 'storage');
  // Uploads are staged in the data directory whichever storage keeps them.
  // The saved `s3` settings decide, else CAIRN_STORAGE; the AWS SDK (some 40 MB resident with its
  // upload helper) is imported only once a bucket is used.
  const storage = new SettingsFileStorage(new LocalFileStorage(storageDir), config.s3, () => settings.peekSaved<StoredS3>('s3'));
  const fileStore = new FileStore({ storage, stagingDir: path.join(storageDir, '.staging'), requestLimit: config.uploadLimit });
  await fileStore.start();
  // Where outbound requests may not go: refused when a target is saved (its literal host) and when
  // each delivery connects (the resolved address).
  const outbound = new OutboundPolicy(config.outboundAllow);
  const collections = new CollectionService({
    validateRule: (c, rule, others, options) => checkRule(c, rule, others, registry.system.dialect, options),
    validateOptions: [(c) => validateTriggers(c, outbound)],
    invalidations,
    lock,
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
    passwords: { hash: hashPassword, verify: verifyPassword, maxLength: MAX_PASSWORD_LENGTH },
    expandLimits: { records: config.expandMaxRecords, bytes: config.maxAnswerMb * 1024 * 1024 },
    files: fileStore,
    search: fulltextSearch,
    lock,
    events: hooks,
  });
  const tokens = new TokenService(deriveKey(secret, 'auth'), config.tokenTtl);
  const admins = new AdminService(registry.system, config.minPasswordLength, lock);
  const authenticator = new Authenticator(tokens, admins, collections, registry);
  const pocketbaseTokens = new PocketBaseTokens(admins, collections);
  authenticator.pocketbase = pocketbaseTokens;
  const apiKeys = new ApiKeyService(deriveKey(secret, 'apikey'), tokens);
  authenticator.apiKeys = apiKeys.resolve;
  // The `batch` settings are read for each batch (settings are made below; read only at request time).
  const batch = new BatchService({ collections, records, files: fileStore, maxRequests: config.batchMaxRequests, limits: () => settings.get<BatchLimits>('batch') });
  const superusers = new SuperuserService(registry.system, admins, tokens);
  const recordAuth = new RecordAuthService(tokens, collections, records, new MfaService(collections));
  recordAuth.onSignIn = hooks?.signIn;
  superusers.onSignIn = hooks?.signIn;
  const settings = new SettingsService(
    registry.system,
    [metaSection(defaultAppUrl(config.host, config.port)), oauth2Section, smtpSection(config.smtpUrl), ...pocketbaseSections(config)],
    invalidations,
    lock,
  );
  authenticator.superuserIps = superusers.superuserIps = new SuperuserIps(() => settings.peek<string[]>('superuserIPs'));
  const fileTokens = new FileTokens(deriveKey(secret, 'file'), config.fileTokenTtl, admins, collections, authenticator);
  const files = new FileService(fileStore.storage, collections, records, fileTokens, new Thumbnails(fileStore.storage, fileStore.stagingDir));
  files.onDownload = hooks?.fileDownload;
  const migrations = new MigrationService({ dir: config.dir, registry, collections });
  // Without SMTP, mail goes to the system's sendmail as on PocketBase, unless CAIRN_MAIL_DIR asks for files.
  const mailer = new Mailer(config.smtpUrl, config.mailDir ?? path.join(config.dir, 'mail'), () => settings.get<SmtpSettings>('smtp'), config.mailDir ? undefined : findSendmail(process.env.PATH));
  const emailFlows = new EmailFlows(records, mailer, settings, config.minPasswordLength);
  emailFlows.pocketbase = pocketbaseTokens;
  emailFlows.onFlowRequest = hooks?.flowRequest;
  recordAuth.alerts = new AuthAlerts(mailer, settings, records);
  const otp = new OtpService(deriveKey(secret, 'otp'), records, mailer, settings);
  otp.onFlowRequest = hooks?.flowRequest;
  const adminPasswordReset = new AdminPasswordReset(registry.system, admins, mailer, settings);
  adminPasswordReset.pocketbase = pocketbaseTokens;
  const oauth2 = new OAuth2Service(settings, records, recordAuth, fileStore, outbound);
  const cron = new CronService(registry, webhooks, invalidations);
  const workflows = new WorkflowService({ registry, collections, records, webhooks, node: config.nodeId });
  const realtime = new RealtimeService({
    feed: changeFeed,
    directory: backend.notifications ? new PgClientDirectory(registry.system, backend.notifications, config.nodeId, config.hookTimeoutMs + 10_000) : undefined,
    registry,
    records: records.deps,
    authenticate: (bearer, dbName) => authenticator.authenticateBearer(bearer, dbName, undefined),
    limits: config.realtime,
  });
  // On SQLite the log is written from a thread of its own (logs/sink.ts); another driver writes
  // through its Database.
  const logsDb = registry.logs;
  const requestLogs = new RequestLogs(logsDb, {
    enabled: config.requestLogs,
    keepDays: config.logDays,
    // Once saved, the `logs` settings decide (retention, levels, IPs, auth ids); until then the environment.
    settings: () => settings.peekSaved<LogSettings>('logs'),
    sink: logsDb instanceof SqliteDatabase && config.requestLogs ? (store) => SqliteThreadLogSink.open(logsDb.file) ?? new DatabaseLogSink(store) : undefined,
  });
  const backups = new BackupService(config.dir, registry, backupPlaces(settings, storage));
  // Notices from other nodes flow before this node serves or changes anything.
  await backend.notifications?.ready();
  // Loaded before the first request: what reads the settings on every request (request log, rate
  // limits, client addresses) cannot wait for them (SettingsService.peek).
  await settings.view();
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
    fileStorage: storage,
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
  /** What runs pb_migrations files (`pbMigrationRuntime` unless given: tests bring their own). */
  pbMigrations?: PbMigrationRuntime;
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
  const services = await buildServices(config, { hooks, serving: true });
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
    rewriteUrl: withoutApiTrailingSlash,
  });

  try {
    await ensureDefaultAdmin(config, services.admins, (msg) => app.log.info(msg));
  } catch (err) {
    await services.registry.close();
    throw err;
  }

  // JSON and forms (plugins/form-body.ts) are the API's body formats; other types are added by the
  // routes that take them (raw migration and archive uploads).
  app.removeContentTypeParser('text/plain');
  registerJsonBody(app);
  registerErrorHandling(app);
  registerTrustedProxy(app, () => services.settings.peekSaved<TrustedProxy>('trustedProxy'));
  const warming: WarmUp = { active: false };
  registerRequestLog(app, services.requestLogs, warming);
  await registerCors(app, config.corsOrigins);
  // Made whatever CAIRN_RATE_LIMIT says: rules saved in the settings count across nodes too.
  const sharedCounters = await rateCounters(config, services.registry, app);
  registerRateLimit(app, {
    enabled: config.rateLimit,
    globalMax: config.globalRateLimit,
    shared: sharedCounters,
    // Redis counts every request's hit for the price of a round trip; on PostgreSQL the global limit,
    // checked on every request, stays in each node's memory (docs/auth.md: measured).
    shareGlobal: config.shareGlobalRateLimit ?? config.redisUrl !== undefined,
    onSharedError: everyMinute((err) => app.log.warn({ err }, 'rate-limit counters out of reach: counting in this node\'s memory meanwhile')),
    saved: () => services.settings.peekSaved<RateLimitSettings>('rateLimits'),
    paused: () => warming.active,
  });
  const contextOptions = { registry: services.registry, authenticate: services.authenticator.authenticate };
  registerContext(app, contextOptions);
  await registerMultipart(app, { fieldSizeLimit: config.bodyLimit });
  registerFormBody(app, { bodyLimit: config.bodyLimit });

  const routes = collectRoutes(app);
  // Every route of Cairn's, for the check that no hook route shadows one.
  const ownRoutes: Array<{ method: string; url: string }> = [];
  app.addHook('onRoute', (r) => {
    for (const method of [r.method].flat()) ownRoutes.push({ method, url: r.url });
  });
  await app.register(healthRoutes(services.registry, config.nodeId, () => services.backups.idle));
  await app.register(adminRoutes(services.admins, services.tokens, services.adminPasswordReset, services.authenticator.superuserIps));
  await app.register(superuserRoutes(services.superusers, services.adminPasswordReset));
  await app.register(authRoutes({ recordAuth: services.recordAuth, flows: services.emailFlows, oauth2: services.oauth2, otp: services.otp }));
  await app.register(keyRoutes(services.apiKeys));
  await app.register(
    settingsRoutes(services.settings, services.mailer, services.fileStorage, async (ref) => services.collections.find(await services.registry.get(DEFAULT_DATABASE), ref)),
  );
  await app.register(databaseRoutes(services.registry));
  const automigrate = config.pbAutomigrate && config.pbMigrationsDir ? new Automigrate(config.pbMigrationsDir, { tokenTtl: config.tokenTtl }, () => app.log) : undefined;
  await app.register(collectionRoutes(services.collections, services.records, { tokenTtl: config.tokenTtl }, automigrate));
  await app.register(ruleRoutes(services.collections, automigrate));
  await app.register(recordRoutes(services.collections, services.records, services.fileStore));
  await app.register(batchRoutes(services.batch, services.fileStore, config.bodyLimit));
  await app.register(fileRoutes(services.files, services.registry));
  await app.register(webhookRoutes(services.webhooks));
  await app.register(cronRoutes(services.cron));
  await app.register(migrationRoutes(services.migrations));
  await app.register(workflowRoutes(services.workflows, services.authenticator));
  await app.register(realtimeRoutes(services.realtime, services.oauth2));
  await app.register(logRoutes(services.requestLogs));
  await app.register(sqlRoutes());
  // PocketBase's own maintenance jobs, listed and run by /api/crons before the hooks' cronAdd jobs.
  const systemCrons = new SystemCrons(
    pocketBaseSystemCrons({
      pruneLogs: () => services.requestLogs.prune(),
      databases: () => services.registry.openedNames().flatMap((name) => services.registry.opened(name) ?? []),
      internal: () => [services.registry.system, services.registry.logs],
      pruneMfas,
      pruneOtps,
    }),
    app.log,
  );
  scheduleBackups(services, config, systemCrons, app.log);
  await app.register(cronsRoutes(hooks, systemCrons));
  await app.register(backupRoutes(services.backups, services.fileTokens));
  await app.register(openApiRoutes(services.collections, routes));
  // `GET /`: a pb_hooks app's own `GET /` (or catch-all), else the public folder when there is one,
  // else the redirect to the console.
  const publicFolder = config.publicDir ? new PublicFolder(config.publicDir, config.indexFallback) : undefined;
  const roots: RootRoute[] = [];
  if (hooks) roots.push({ answers: (path: string) => hooks.current.routes.some((r) => r.source.endsWith('.pb.js')) && hookRouteAnswers(hooks, path), handle: hookRouteHandler(hooks, contextOptions) });
  if (publicFolder) roots.push({ answers: () => publicFolder.present(), handle: publicFolder.handle });
  await app.register(dashboardRoutes(new DashboardAssets(config.dashboardDir), roots));
  // Hook routes are served by a catch-all, which hands what it does not match to the public folder;
  // without one, the public folder has a catch-all of its own.
  const hookCatchAll = hooks !== undefined && (config.dev || hooks.current.routes.length > 0);
  if (publicFolder && !hookCatchAll) {
    await app.register(async (scope) => {
      scope.get('/*', { config: { database: false, authenticate: false } }, (req, reply) => {
        const urlPath = req.url.split('?')[0];
        if (!publicFolder.serves(req.method, urlPath)) throw notFound();
        return publicFolder.handle(req, reply);
      });
    });
  }
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
    await app.register(hookRoutes(hooks, contextOptions, hookCatchAll, publicFolder));
  }

  // Background work starts with the server (CLI commands never deliver) and stops before the
  // databases close, so interrupted attempts can still be returned to the queue.
  await services.webhooks.start(app.log);
  await services.cron.start(app.log);
  services.mailer.log = app.log;
  if (services.files.thumbs) services.files.thumbs.log = app.log;
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
  const hookServices: HookServices = { registry: services.registry, collections: services.collections, records: services.records, mailer: services.mailer, emailFlows: services.emailFlows, otp: services.otp, authAlerts: services.recordAuth.alerts, realtime: services.realtime, settings: services.settings, log: app.log };
  const hookCron = hooks && new HookCronRunner(services.registry.system, config.nodeId, app.log);
  if (hooks && hookCron) {
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
    if (hooks) {
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
    step('file removals');
    await services.fileStore.drain();
    services.fileStore.storage.close?.();
    closing.step = undefined;
  });
  if (config.pbMigrationsDir) {
    // After the hooks are attached: record events a migration's writes fire reach them, as on PocketBase.
    try {
      await applyPbMigrations(config.pbMigrationsDir, services, (options.pbMigrations ?? pbMigrationRuntime)({ ...hookServices, admins: services.admins }), app.log);
    } catch (err) {
      await app.close();
      throw err;
    }
  }
  return { app, services, closing, warmUp: () => warmUp(app, warming, services) };
}

/**
 * PocketBase's automigrate: the pb_migrations folder's pending files applied to every database before
 * the server answers (a failing file stops the start, naming file and line); a database this server
 * creates later gets them when it is created (and is removed again should one fail).
 */
async function applyPbMigrations(dir: string, services: Services, execute: PbMigrationExecutor, log: FastifyInstance['log']): Promise<void> {
  const runner = new PbMigrationRunner({ dir, registry: services.registry, collections: services.collections, execute });
  for (const step of await runner.up()) log.info({ db: step.db, file: step.file }, 'pb_migrations: applied');
  // Before the database is listed: nothing is served from it, and the other nodes never hear of one
  // removed again (the registry removes it when this throws).
  services.registry.onCreating = async (name) => {
    try {
      for (const step of await runner.up([name])) log.info({ db: step.db, file: step.file }, 'pb_migrations: applied');
    } catch (err) {
      log.error({ err, db: name }, 'pb_migrations did not apply to a new database; it is removed again');
      throw err;
    }
  };
}
