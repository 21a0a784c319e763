import { isIP } from 'node:net';
import path from 'node:path';

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
  webhookTimeoutMs: number;
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
  minPasswordLength: number;
  /** Largest multipart (upload) request, in bytes; a file field's `maxSize` limits each file. */
  uploadLimit: number;
  /** Lifetime of file tokens (protected files), in seconds. */
  fileTokenTtl: number;
  /** Browser origins allowed to call the API (CORS); `['*']` allows every origin. */
  corsOrigins: string[];
  /** Realtime clients connected at once, at most (docs/realtime.md). */
  realtimeMaxClients: number;
  /** Topics one realtime client may subscribe to. */
  realtimeMaxSubscriptions: number;
  /** Unsent bytes a realtime stream may hold before its client is dropped as one that does not read. */
  realtimeClientBuffer: number;
  /** Idle realtime streams get a comment at least this often, in milliseconds. */
  realtimeKeepAliveMs: number;
}

export interface ConfigFlags {
  host?: string;
  port?: string | number;
  dir?: string;
  origins?: string;
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

function nonEmpty(v: string | undefined): string | undefined {
  return v === undefined || v === '' ? undefined : v;
}

/** Builds the Config; command-line flags win over CAIRN_* variables, which win over defaults. */
export function loadConfig(flags: ConfigFlags = {}, env: NodeJS.ProcessEnv = process.env): Config {
  const rateLimitRaw = (env.CAIRN_RATE_LIMIT ?? 'on').toLowerCase();
  if (!['on', 'off', 'true', 'false', '1', '0'].includes(rateLimitRaw)) {
    throw new ConfigError(`CAIRN_RATE_LIMIT must be "on" or "off", got "${env.CAIRN_RATE_LIMIT}".`);
  }
  const host = flags.host ?? nonEmpty(env.CAIRN_HOST) ?? '127.0.0.1';
  return {
    host,
    port: intFrom('port', flags.port ?? env.CAIRN_PORT, 8090, 0, 65535),
    dir: path.resolve(flags.dir ?? nonEmpty(env.CAIRN_DIR) ?? './data'),
    jwtSecret: nonEmpty(env.CAIRN_JWT_SECRET),
    adminEmail: nonEmpty(env.CAIRN_ADMIN_EMAIL),
    adminPassword: nonEmpty(env.CAIRN_ADMIN_PASSWORD),
    tokenTtl: intFrom('CAIRN_TOKEN_TTL', env.CAIRN_TOKEN_TTL, 86400, 1, 10 * 365 * 86400),
    smtpUrl: nonEmpty(env.CAIRN_SMTP_URL),
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
    minPasswordLength: intFrom('CAIRN_MIN_PASSWORD_LENGTH', env.CAIRN_MIN_PASSWORD_LENGTH, 8, 1, 1024),
    uploadLimit: intFrom('CAIRN_UPLOAD_LIMIT', env.CAIRN_UPLOAD_LIMIT, 32 * 1024 * 1024, 1024, 1024 * 1024 * 1024 * 1024),
    fileTokenTtl: intFrom('CAIRN_FILE_TOKEN_TTL', env.CAIRN_FILE_TOKEN_TTL, 120, 1, 86400),
    corsOrigins: corsOrigins(flags.origins ?? env.CAIRN_CORS_ORIGINS),
    realtimeMaxClients: intFrom('CAIRN_REALTIME_MAX_CLIENTS', env.CAIRN_REALTIME_MAX_CLIENTS, 10000, 0, 1_000_000),
    realtimeMaxSubscriptions: intFrom('CAIRN_REALTIME_MAX_SUBSCRIPTIONS', env.CAIRN_REALTIME_MAX_SUBSCRIPTIONS, 1000, 1, 100_000),
    realtimeClientBuffer: intFrom('CAIRN_REALTIME_CLIENT_BUFFER', env.CAIRN_REALTIME_CLIENT_BUFFER, 256 * 1024, 1024, 1024 * 1024 * 1024),
    // Proxies commonly close connections silent for 60 s; the contract asks for 30 s at most.
    realtimeKeepAliveMs: intFrom('CAIRN_REALTIME_KEEPALIVE_MS', env.CAIRN_REALTIME_KEEPALIVE_MS, 25000, 10, 30000),
  };
}
