import type { Config } from '../config.ts';
import type { SettingsSection } from './service.ts';

/**
 * PocketBase's settings sections that Cairn takes from its environment when it starts (`CAIRN_*`,
 * docs/operations.md) instead of the database: shown in PocketBase's shape so a client reads what the
 * instance does, never a secret, and read-only (a change is a 400 naming the variable). `smtp` is the
 * same kind of section, in src/auth/mail/smtp-settings.ts.
 */
function fromEnvironment<T>(name: string, variables: string, value: T): SettingsSection<T> {
  return {
    name,
    defaults: () => value,
    merge(input, current, errors) {
      // An empty object changes nothing, as PocketBase binds it.
      if (typeof input === 'object' && input !== null && !Array.isArray(input) && Object.keys(input).length === 0) return current;
      errors[name] = { code: 'validation_read_only', message: `Set with ${variables} when the server starts.` };
      return current;
    },
    // The environment decides, whatever a database may hold (an import keeps PocketBase's values there).
    view: () => value,
  };
}

export function environmentSections(config: Config): SettingsSection<unknown>[] {
  const s3 = config.s3;
  return [
    fromEnvironment('s3', 'CAIRN_STORAGE and CAIRN_S3_*', {
      enabled: config.storage === 's3',
      bucket: s3?.bucket ?? '',
      region: s3?.region ?? '',
      endpoint: s3?.endpoint ?? '',
      accessKey: s3?.accessKey ?? '',
      forcePathStyle: s3?.forcePathStyle ?? false,
    }),
    fromEnvironment('backups', 'CAIRN_BACKUP_CRON and CAIRN_BACKUP_KEEP', {
      cron: config.backupCron ?? '',
      cronMaxKeep: config.backupKeep,
      // Backups go where uploaded files go.
      s3: { enabled: config.storage === 's3', bucket: s3?.bucket ?? '', region: s3?.region ?? '', endpoint: s3?.endpoint ?? '', forcePathStyle: s3?.forcePathStyle ?? false },
    }),
    fromEnvironment('batch', 'CAIRN_BATCH_MAX_REQUESTS', { enabled: true, maxRequests: config.batchMaxRequests, maxBodySize: config.bodyLimit }),
    fromEnvironment('logs', 'CAIRN_REQUEST_LOGS and CAIRN_LOG_DAYS', { maxDays: config.requestLogs ? config.logDays : 0, logIP: true, logAuthId: true }),
    fromEnvironment('rateLimits', 'CAIRN_RATE_LIMIT', { enabled: config.rateLimit, rules: config.rateLimit ? [{ label: '*', maxRequests: config.globalRateLimit, duration: 60 }] : [] }),
    fromEnvironment('trustedProxy', 'CAIRN_TRUST_PROXY', { headers: [], useLeftmostIP: false, proxies: config.trustProxy ?? '' }),
  ];
}
