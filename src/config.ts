import { existsSync } from 'node:fs';
import { isIP } from 'node:net';
import { availableParallelism, hostname } from 'node:os';
import path from 'node:path';
import { parseSchedule, ScheduleError } from './jobs/schedule.ts';
import { fileURLToPath } from 'node:url';
import { parseOutboundAllow } from './lib/outbound.ts';

/** Where `npm run build:dashboard` writes the dashboard, relative to this package. */
const DEFAULT_DASHBOARD_DIR = fileURLToPath(new URL('../dashboard/dist', import.meta.url));

/** Everything Cairn reads from the environment and the command line, validated once at start. */
export interface Config {
  host: string;
  port: number;
  /** Absolute path of the data directory. */
  dir: string;
  /** From CAIRN_JWT_SECRET; when absent the auth layer generates one and keeps it in the data dir. */
  jwtSecret?: string;
  adminEmail?: string;
  adminPassword?: string;
  /** Lifetime of issued auth tokens, in seconds. */
  tokenTtl: number;
  smtpUrl?: string;
  /** CAIRN_MAIL_DIR: mail without SMTP is written here as `.eml` files, never handed to sendmail. */
  mailDir?: string;
  webhookTimeoutMs: number;
  /** CAIRN_OUTBOUND_ALLOW: link-local or metadata addresses, ranges or names outbound requests may reach after all. */
  outboundAllow: string[];
  webhookMaxAttempts: number;
  webhookBackoffMs: number;
  /** How long a due webhook event may wait while the event loop is saturated (0: never waits). */
  webhookMaxDeferMs: number;
  /** Webhook logs and finished outbox events older than this many days are pruned; 0 keeps them. */
  webhookLogDays: number;
  rateLimit: boolean;
  /** Address (or comma-separated addresses/CIDRs) of reverse proxies whose X-Forwarded-For is trusted. */
  trustProxy?: string;
  production: boolean;
  logLevel: string;
  /** Largest accepted JSON body, in bytes (API contract §9). */
  bodyLimit: number;
  /** Most records one answer's `expand` holds (API contract §20). */
  expandMaxRecords: number;
  /** Most megabytes one expanded answer writes (API contract §20). */
  maxAnswerMb: number;
  minPasswordLength: number;
  /** Largest multipart (upload) request, in bytes; a file field's `maxSize` limits each file. */
  uploadLimit: number;
  /** Lifetime of file tokens (protected files), in seconds. */
  fileTokenTtl: number;
  /** Browser origins allowed to call the API (CORS); `['*']` allows every origin. */
  corsOrigins: string[];
  /** Most requests one `POST /api/batch` may hold. */
  batchMaxRequests: number;
  /** The realtime service's limits (docs/realtime.md; RealtimeLimits says what each is). */
  realtime: { maxClients: number; maxSubscriptions: number; clientBuffer: number; keepAliveMs: number; maxConnectionMs: number };
  /** Whether API requests are recorded in the request log (`/api/logs`); CAIRN_REQUEST_LOGS. */
  requestLogs: boolean;
  /** Request logs older than this many days are pruned; 0 keeps them. */
  logDays: number;
  /** When to take a backup on its own (cron expression or `@every`); undefined: never. */
  backupCron?: string;
  /** How many scheduled backups to keep (older ones are deleted); 0 keeps them all. */
  backupKeep: number;
  /** PostgreSQL URL (CAIRN_DATABASE_URL); when unset, SQLite files under `dir`. */
  databaseUrl?: string;
  /** PostgreSQL connections per process. */
  pgPoolSize: number;
  /** PostgreSQL connections opened at start and kept open while idle (at most `pgPoolSize`). */
  pgPoolMin: number;
  /** How long a request waits for a free PostgreSQL connection before it is answered 503. */
  pgPoolWaitMs: number;
  /** Requests waiting for a PostgreSQL connection at once; past that one is answered 503 at once. */
  pgPoolQueue: number;
  /** Longest a PostgreSQL statement may run, in milliseconds. */
  pgStatementTimeoutMs: number;
  /** This process among the nodes of an instance (webhook logs, cron runs, health). */
  nodeId: string;
  /**
   * Processes `serve` runs on one port (CAIRN_WORKERS: a number, or `auto` for one per core), each a
   * node of the instance; above 1 only on PostgreSQL (docs/scaling.md#workers-one-machines-cores).
   */
  workers: number;
  /** Where uploaded files are kept: `<dir>/storage` (local) or an S3-compatible bucket (s3). */
  storage: 'local' | 's3';
  /** The bucket, when `storage` is s3. */
  s3?: S3Config;
  /** Redis URL (CAIRN_REDIS_URL): when set, rate-limit counters are kept there. */
  redisUrl?: string;
  /** Prefix of every key Cairn writes in Redis. */
  redisPrefix: string;
  /** The global rate limit: requests per minute per client IP. */
  globalRateLimit: number;
  /**
   * Whether the global limit counts across nodes (CAIRN_RATE_LIMIT_SHARE_GLOBAL); undefined: where
   * that is cheap (Redis), not on PostgreSQL alone (docs/auth.md).
   */
  shareGlobalRateLimit?: boolean;
  /** How long a node holds a webhook event it attempts before another node may take it (PostgreSQL). */
  webhookLeaseMs?: number;
  /** The dashboard's built files, served at `/_/` (`dashboard/dist` of this package by default). */
  dashboardDir: string;
  /**
   * How long a stopping server lets requests under way finish (and webhook attempts, within their own
   * limit) before it closes the remaining connections; CAIRN_SHUTDOWN_TIMEOUT_MS.
   */
  shutdownTimeoutMs: number;
  /**
   * How long a node told to stop keeps serving (health 503, every answer `Connection: close`) before
   * it stops accepting, so a load balancer takes it out first; CAIRN_DRAIN_MS (3000 on PostgreSQL,
   * 0 on SQLite, where no other node takes over).
   */
  drainMs: number;
  /** How long `serve` waits for a database that refuses connections or is starting up; CAIRN_DB_WAIT_MS. */
  dbWaitMs: number;
  /** Where application hooks are loaded from (absolute); undefined: none (`CAIRN_HOOKS_DIR=off`). */
  hooksDir?: string;
  /** Where PocketBase's `pb_hooks/*.pb.js` are loaded from (absolute); undefined: none (`CAIRN_PB_HOOKS_DIR=off`). */
  pbHooksDir?: string;
  /** How long a write's hooks may run before the write fails with 503; CAIRN_HOOK_TIMEOUT_MS. */
  hookTimeoutMs: number;
  /** `cairn serve --dev`: hooks reload when their files change. */
  dev: boolean;
  /** PocketBase's `pb_migrations/*.js`, applied at start (absolute); undefined: none (`CAIRN_PB_MIGRATIONS_DIR=off`). */
  pbMigrationsDir?: string;
  /**
   * PocketBase's automigrate: collection changes made through the API are written to `pbMigrationsDir`
   * as migration files (src/pbmigrations/automigrate.ts). `--automigrate` / CAIRN_PB_AUTOMIGRATE; by
   * default on when that folder exists at start (the server runs a PocketBase app's folder).
   */
  pbAutomigrate: boolean;
  /** Static files served at `/` as PocketBase serves `pb_public` (absolute); undefined: none (`CAIRN_PUBLIC_DIR=off`). */
  publicDir?: string;
  /** A GET of a path that is not in `publicDir` answers its `index.html` (single-page apps), as PocketBase's default. */
  indexFallback: boolean;
}

/** CAIRN_S3_*: an S3-compatible bucket for uploaded files. */
export interface S3Config {
  /** The service's URL; AWS S3 itself when unset. */
  endpoint?: string;
  bucket: string;
  region: string;
  /** Both or neither: without them the AWS SDK's default credentials are used. */
  accessKey?: string;
  secret?: string;
  /** `<endpoint>/<bucket>/<key>` instead of `<bucket>.<endpoint>/<key>` (MinIO and most self-hosted services). */
  forcePathStyle: boolean;
}

export interface ConfigFlags {
  /** PocketBase's pb_hooks directory, or `off`. */
  pbHooks?: string;
  /** PocketBase's pb_migrations directory, or `off`. */
  pbMigrations?: string;
  /** PocketBase's `--automigrate[=bool]`. */
  automigrate?: boolean;
  /** The folder served at `/` (PocketBase's pb_public), or `off`. */
  publicDir?: string;
  indexFallback?: boolean;
  host?: string;
  port?: string | number;
  dir?: string;
  origins?: string;
  databaseUrl?: string;
  hooks?: string;
  dev?: boolean;
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

function intFrom(name: string, raw: string | number | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined || raw === '') return fallback;
  const n = typeof raw === 'number' ? raw : Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) {
    throw new ConfigError(`${name} must be an integer between ${min} and ${max}, got "${raw}".`);
  }
  return n;
}

/** Proxy addresses as Fastify's trustProxy takes them: IPs, CIDR ranges, or proxy-addr's names. */
function trustedProxies(raw: string | undefined): string | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  for (const item of raw.split(',').map((s) => s.trim())) {
    const [address, bits, extra] = item.split('/');
    const named = ['loopback', 'linklocal', 'uniquelocal'].includes(item);
    const prefixOk = bits === undefined || (/^\d{1,3}$/.test(bits) && Number(bits) <= (isIP(address) === 4 ? 32 : 128));
    if (!named && (extra !== undefined || isIP(address) === 0 || !prefixOk)) {
      throw new ConfigError(`CAIRN_TRUST_PROXY must list proxy addresses (IP, CIDR, loopback, linklocal or uniquelocal), got "${item}".`);
    }
  }
  return raw;
}

/** `*`, or a comma-separated list of origins such as `https://app.example.com`. */
function corsOrigins(raw: string | undefined): string[] {
  if (raw === undefined || raw.trim() === '') return ['*'];
  const origins = raw.split(',').map((s) => s.trim()).filter((s) => s !== '');
  for (const origin of origins) {
    if (origin === '*') continue;
    let url: URL | undefined;
    try {
      url = new URL(origin);
    } catch {
      url = undefined;
    }
    if (!url || !/^https?:$/.test(url.protocol) || url.origin !== origin) {
      throw new ConfigError(`CORS origins must be "*" or origins such as https://app.example.com (scheme, host, optional port; no path), got "${origin}".`);
    }
  }
  return origins.includes('*') ? ['*'] : origins;
}

function onOff(name: string, raw: string | undefined, fallback: boolean): boolean {
  const value = (raw ?? '').trim().toLowerCase();
  if (value === '') return fallback;
  if (['on', 'true', '1'].includes(value)) return true;
  if (['off', 'false', '0'].includes(value)) return false;
  throw new ConfigError(`${name} must be "on" or "off", got "${raw}".`);
}

/** A backup schedule, checked now so that a typo stops the server at start, not at the first run. */
function backupCron(raw: string | undefined): string | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  try {
    parseSchedule(raw, 'UTC');
  } catch (err) {
    if (err instanceof ScheduleError) throw new ConfigError(`CAIRN_BACKUP_CRON: ${err.message}`);
    throw err;
  }
  return raw.trim();
}

/** `raw` trimmed when it is a URL with one of `protocols`; undefined when unset; else `message`. */
function urlSetting(raw: string | undefined, protocols: string[], message: string): string | undefined {
  if (raw === undefined || raw.trim() === '') return undefined;
  let protocol: string | undefined;
  try {
    protocol = new URL(raw.trim()).protocol;
  } catch {
    protocol = undefined;
  }
  if (!protocol || !protocols.includes(protocol)) throw new ConfigError(message);
  return raw.trim();
}

function databaseUrl(raw: string | undefined): string | undefined {
  return urlSetting(raw, ['postgres:', 'postgresql:'], 'CAIRN_DATABASE_URL must be a PostgreSQL URL such as postgres://user:password@host:5432/cairn.');
}

function nodeId(raw: string | undefined): string {
  if (raw === undefined || raw.trim() === '') return `${hostname()}:${process.pid}`;
  if (!/^[A-Za-z0-9._:-]{1,100}$/.test(raw.trim())) throw new ConfigError('CAIRN_NODE_ID must be 1-100 letters, digits, dots, colons, dashes or underscores.');
  return raw.trim();
}

function workers(raw: string | undefined, onPostgres: boolean): number {
  const value = raw?.trim().toLowerCase();
  const n = value === 'auto' ? availableParallelism() : intFrom('CAIRN_WORKERS', value, 1, 1, 256);
  if (n > 1 && !onPostgres && value !== 'auto') {
    throw new ConfigError('CAIRN_WORKERS above 1 needs PostgreSQL (CAIRN_DATABASE_URL): a SQLite data directory is served by one process.');
  }
  // `auto` on SQLite is one process: the setting can stay in an environment shared by both engines.
  return onPostgres ? n : 1;
}

function httpUrl(name: string, raw: string | undefined, example: string): string | undefined {
  return urlSetting(raw, ['http:', 'https:'], `${name} must be an http(s) URL such as ${example}, got "${raw}".`);
}

function storageKind(raw: string | undefined): 'local' | 's3' {
  const value = (raw ?? '').trim().toLowerCase();
  if (value === '' || value === 'local') return 'local';
  if (value === 's3') return 's3';
  throw new ConfigError(`CAIRN_STORAGE must be "local" or "s3", got "${raw}".`);
}

/** The bucket settings, all checked now: a server that starts can at least try its bucket. */
function s3Config(env: NodeJS.ProcessEnv): S3Config {
  const bucket = (env.CAIRN_S3_BUCKET ?? '').trim();
  if (bucket === '') throw new ConfigError('CAIRN_STORAGE=s3 needs CAIRN_S3_BUCKET, the name of the bucket that keeps the files.');
  if (/[\s/]/.test(bucket)) throw new ConfigError(`CAIRN_S3_BUCKET must be a bucket name (no spaces or slashes), got "${bucket}".`);
  const accessKey = nonEmpty(env.CAIRN_S3_ACCESS_KEY);
  const secret = nonEmpty(env.CAIRN_S3_SECRET);
  if ((accessKey === undefined) !== (secret === undefined)) {
    throw new ConfigError('CAIRN_S3_ACCESS_KEY and CAIRN_S3_SECRET go together: set both, or neither to use the AWS SDK\'s default credentials.');
  }
  return {
    endpoint: httpUrl('CAIRN_S3_ENDPOINT', env.CAIRN_S3_ENDPOINT, 'https://s3.example.com'),
    bucket,
    region: nonEmpty(env.CAIRN_S3_REGION?.trim()) ?? 'us-east-1',
    accessKey,
    secret,
    forcePathStyle: onOff('CAIRN_S3_FORCE_PATH_STYLE', env.CAIRN_S3_FORCE_PATH_STYLE, false),
  };
}

function redisPrefix(raw: string | undefined): string {
  if (raw === undefined || raw === '') return 'cairn:';
  if (!/^[A-Za-z0-9._:{}-]{1,100}$/.test(raw)) throw new ConfigError('CAIRN_REDIS_PREFIX must be 1-100 letters, digits, dots, colons, braces, dashes or underscores.');
  return raw;
}

function redisUrl(raw: string | undefined): string | undefined {
  return urlSetting(raw, ['redis:', 'rediss:'], 'CAIRN_REDIS_URL must be a Redis URL such as redis://127.0.0.1:6379.');
}

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v === '' ? undefined : v;
}

/** A directory of the app's own (`./hooks`, `./pb_public`, … beside `./data`) unless given; `off` for none. */
function appFolder(raw: string | undefined, fallback = './hooks'): string | undefined {
  const value = raw?.trim();
  if (value !== undefined && value.toLowerCase() === 'off') return undefined;
  return path.resolve(value === undefined || value === '' ? fallback : value);
}

/** Builds the Config; command-line flags win over CAIRN_* variables, which win over defaults. */
export function loadConfig(flags: ConfigFlags = {}, env: NodeJS.ProcessEnv = process.env): Config {
  const rateLimitRaw = (env.CAIRN_RATE_LIMIT ?? 'on').toLowerCase();
  if (!['on', 'off', 'true', 'false', '1', '0'].includes(rateLimitRaw)) {
    throw new ConfigError(`CAIRN_RATE_LIMIT must be "on" or "off", got "${env.CAIRN_RATE_LIMIT}".`);
  }
  const host = flags.host ?? nonEmpty(env.CAIRN_HOST) ?? '127.0.0.1';
  const storage = storageKind(env.CAIRN_STORAGE);
  const pgPoolSize = intFrom('CAIRN_PG_POOL_SIZE', env.CAIRN_PG_POOL_SIZE, 10, 1, 1000);
  const pbMigrationsDir = appFolder(flags.pbMigrations ?? env.CAIRN_PB_MIGRATIONS_DIR, './pb_migrations');
  return {
    host,
    port: intFrom('port', flags.port ?? env.CAIRN_PORT, 8090, 0, 65535),
    dir: path.resolve(flags.dir ?? nonEmpty(env.CAIRN_DIR) ?? './data'),
    jwtSecret: nonEmpty(env.CAIRN_JWT_SECRET),
    adminEmail: nonEmpty(env.CAIRN_ADMIN_EMAIL),
    adminPassword: nonEmpty(env.CAIRN_ADMIN_PASSWORD),
    tokenTtl: intFrom('CAIRN_TOKEN_TTL', env.CAIRN_TOKEN_TTL, 86400, 1, 10 * 365 * 86400),
    smtpUrl: nonEmpty(env.CAIRN_SMTP_URL),
    mailDir: nonEmpty(env.CAIRN_MAIL_DIR) === undefined ? undefined : path.resolve(env.CAIRN_MAIL_DIR!),
    outboundAllow: parseOutboundAllow(env.CAIRN_OUTBOUND_ALLOW),
    webhookTimeoutMs: intFrom('CAIRN_WEBHOOK_TIMEOUT_MS', env.CAIRN_WEBHOOK_TIMEOUT_MS, 10000, 1, 600000),
    webhookMaxAttempts: intFrom('CAIRN_WEBHOOK_MAX_ATTEMPTS', env.CAIRN_WEBHOOK_MAX_ATTEMPTS, 5, 1, 100),
    webhookBackoffMs: intFrom('CAIRN_WEBHOOK_BACKOFF_MS', env.CAIRN_WEBHOOK_BACKOFF_MS, 1000, 1, 3600000),
    webhookMaxDeferMs: intFrom('CAIRN_WEBHOOK_MAX_DEFER_MS', env.CAIRN_WEBHOOK_MAX_DEFER_MS, 3000, 0, 600000),
    webhookLogDays: intFrom('CAIRN_WEBHOOK_LOG_DAYS', env.CAIRN_WEBHOOK_LOG_DAYS, 7, 0, 3650),
    rateLimit: !['off', 'false', '0'].includes(rateLimitRaw),
    trustProxy: trustedProxies(env.CAIRN_TRUST_PROXY),
    production: env.NODE_ENV === 'production',
    logLevel: nonEmpty(env.CAIRN_LOG_LEVEL) ?? 'info',
    bodyLimit: intFrom('CAIRN_BODY_LIMIT', env.CAIRN_BODY_LIMIT, 1024 * 1024, 1024, 1024 * 1024 * 1024),
    expandMaxRecords: intFrom('CAIRN_EXPAND_MAX_RECORDS', env.CAIRN_EXPAND_MAX_RECORDS, 5000, 1, 10_000_000),
    maxAnswerMb: intFrom('CAIRN_MAX_ANSWER_MB', env.CAIRN_MAX_ANSWER_MB, 32, 1, 4096),
    minPasswordLength: intFrom('CAIRN_MIN_PASSWORD_LENGTH', env.CAIRN_MIN_PASSWORD_LENGTH, 8, 1, 255),
    uploadLimit: intFrom('CAIRN_UPLOAD_LIMIT', env.CAIRN_UPLOAD_LIMIT, 32 * 1024 * 1024, 1024, 1024 * 1024 * 1024 * 1024),
    fileTokenTtl: intFrom('CAIRN_FILE_TOKEN_TTL', env.CAIRN_FILE_TOKEN_TTL, 120, 1, 86400),
    corsOrigins: corsOrigins(flags.origins ?? env.CAIRN_CORS_ORIGINS),
    batchMaxRequests: intFrom('CAIRN_BATCH_MAX_REQUESTS', env.CAIRN_BATCH_MAX_REQUESTS, 50, 1, 10000),
    realtime: {
      maxClients: intFrom('CAIRN_REALTIME_MAX_CLIENTS', env.CAIRN_REALTIME_MAX_CLIENTS, 10000, 0, 1_000_000),
      maxSubscriptions: intFrom('CAIRN_REALTIME_MAX_SUBSCRIPTIONS', env.CAIRN_REALTIME_MAX_SUBSCRIPTIONS, 1000, 1, 100_000),
      clientBuffer: intFrom('CAIRN_REALTIME_CLIENT_BUFFER', env.CAIRN_REALTIME_CLIENT_BUFFER, 256 * 1024, 1024, 1024 * 1024 * 1024),
      // Proxies commonly close connections silent for 60 s; the contract asks for 30 s at most.
      keepAliveMs: intFrom('CAIRN_REALTIME_KEEPALIVE_MS', env.CAIRN_REALTIME_KEEPALIVE_MS, 25000, 10, 30000),
      // PocketBase ≥ 0.38 ends a realtime connection after 30 minutes (0: never).
      maxConnectionMs: intFrom('CAIRN_REALTIME_MAX_CONNECTION_MS', env.CAIRN_REALTIME_MAX_CONNECTION_MS, 30 * 60_000, 0, 365 * 86_400_000),
    },
    requestLogs: onOff('CAIRN_REQUEST_LOGS', env.CAIRN_REQUEST_LOGS, true),
    logDays: intFrom('CAIRN_LOG_DAYS', env.CAIRN_LOG_DAYS, 7, 0, 3650),
    backupCron: backupCron(env.CAIRN_BACKUP_CRON),
    backupKeep: intFrom('CAIRN_BACKUP_KEEP', env.CAIRN_BACKUP_KEEP, 3, 0, 10000),
    databaseUrl: databaseUrl(flags.databaseUrl ?? env.CAIRN_DATABASE_URL),
    pgPoolSize,
    // Unset: the whole pool, as HikariCP keeps it (its minimumIdle defaults to maximumPoolSize).
    pgPoolMin: intFrom('CAIRN_PG_POOL_MIN', env.CAIRN_PG_POOL_MIN, pgPoolSize, 0, pgPoolSize),
    pgPoolWaitMs: intFrom('CAIRN_PG_POOL_WAIT_MS', env.CAIRN_PG_POOL_WAIT_MS, 30000, 100, 600000),
    pgPoolQueue: intFrom('CAIRN_PG_POOL_QUEUE', env.CAIRN_PG_POOL_QUEUE, 10000, 1, 1_000_000),
    nodeId: nodeId(env.CAIRN_NODE_ID),
    workers: workers(env.CAIRN_WORKERS, databaseUrl(flags.databaseUrl ?? env.CAIRN_DATABASE_URL) !== undefined),
    webhookLeaseMs: env.CAIRN_WEBHOOK_LEASE_MS ? intFrom('CAIRN_WEBHOOK_LEASE_MS', env.CAIRN_WEBHOOK_LEASE_MS, 0, 1000, 3_600_000) : undefined,
    pgStatementTimeoutMs: intFrom('CAIRN_PG_STATEMENT_TIMEOUT_MS', env.CAIRN_PG_STATEMENT_TIMEOUT_MS, 30000, 0, 86400000),
    dashboardDir: path.resolve(nonEmpty(env.CAIRN_DASHBOARD_DIR) ?? DEFAULT_DASHBOARD_DIR),
    shutdownTimeoutMs: intFrom('CAIRN_SHUTDOWN_TIMEOUT_MS', env.CAIRN_SHUTDOWN_TIMEOUT_MS, 10000, 0, 600000),
    drainMs: intFrom('CAIRN_DRAIN_MS', env.CAIRN_DRAIN_MS, databaseUrl(flags.databaseUrl ?? env.CAIRN_DATABASE_URL) ? 3000 : 0, 0, 600000),
    dbWaitMs: intFrom('CAIRN_DB_WAIT_MS', env.CAIRN_DB_WAIT_MS, 30000, 0, 3_600_000),
    hooksDir: appFolder(flags.hooks ?? env.CAIRN_HOOKS_DIR),
    pbHooksDir: appFolder(flags.pbHooks ?? env.CAIRN_PB_HOOKS_DIR, './pb_hooks'),
    hookTimeoutMs: intFrom('CAIRN_HOOK_TIMEOUT_MS', env.CAIRN_HOOK_TIMEOUT_MS, 5000, 1, 600000),
    dev: flags.dev === true,
    pbMigrationsDir,
    pbAutomigrate: pbMigrationsDir !== undefined && (flags.automigrate ?? onOff('CAIRN_PB_AUTOMIGRATE', env.CAIRN_PB_AUTOMIGRATE, existsSync(pbMigrationsDir))),
    publicDir: appFolder(flags.publicDir ?? env.CAIRN_PUBLIC_DIR, './pb_public'),
    indexFallback: flags.indexFallback ?? onOff('CAIRN_INDEX_FALLBACK', env.CAIRN_INDEX_FALLBACK, true),
    storage,
    s3: storage === 's3' ? s3Config(env) : undefined,
    redisUrl: redisUrl(env.CAIRN_REDIS_URL),
    redisPrefix: redisPrefix(env.CAIRN_REDIS_PREFIX),
    globalRateLimit: intFrom('CAIRN_RATE_LIMIT_GLOBAL', env.CAIRN_RATE_LIMIT_GLOBAL, 3000, 1, 1_000_000),
    shareGlobalRateLimit: nonEmpty(env.CAIRN_RATE_LIMIT_SHARE_GLOBAL?.trim()) === undefined ? undefined : onOff('CAIRN_RATE_LIMIT_SHARE_GLOBAL', env.CAIRN_RATE_LIMIT_SHARE_GLOBAL, false),
  };
}
