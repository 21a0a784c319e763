import type { Config } from '../config.ts';
import type { StoredS3 } from '../files/storage/check.ts';
import { parseSchedule } from '../jobs/schedule.ts';
import type { SettingsSection } from './service.ts';
import { isIpOrSubnet } from '../lib/ip-list.ts';
import { bind, isHttpUrl, type Shape, shapedSection } from './shape.ts';

/**
 * PocketBase's settings sections `s3`, `backups`, `batch`, `logs`, `rateLimits` and `trustedProxy`
 * (`smtp` is src/auth/mail/smtp-settings.ts): stored in PocketBase's shape, read and written through
 * `/api/settings` with PocketBase's validation, secrets never in an answer (API contract §19). An
 * import carries PocketBase's values into them (§18). Until something is stored they show what the
 * environment sets (`CAIRN_*`, docs/operations.md). Once saved they act, read where they apply:
 * batch limits (batch/service.ts), request logs (logs/service.ts), rate limits and trusted proxies
 * (http/plugins), file storage (files/storage/switch.ts), where backups go and their schedule
 * (backups/schedule.ts).
 */

const S3_SHAPE = {
  fields: { enabled: 'bool', bucket: 'string', region: 'string', endpoint: 'string', accessKey: 'string', secret: 'string', forcePathStyle: 'bool' },
} satisfies Shape;

type Problem = (path: string, code: string, message: string) => void;

const REQUIRED = ['validation_required', 'Cannot be blank.'] as const;

/** PocketBase's S3Config rules: everything required once enabled, the endpoint a URL. */
function validateS3(s3: StoredS3, at: string, problem: Problem) {
  if (s3.endpoint !== '' && !isHttpUrl(s3.endpoint)) problem(`${at}endpoint`, 'validation_is_url', 'Must be a valid URL.');
  if (!s3.enabled) return;
  for (const key of ['endpoint', 'bucket', 'region', 'accessKey', 'secret'] as const) {
    if (!s3[key] && !(key === 'endpoint' && s3.endpoint !== '')) problem(`${at}${key}`, ...REQUIRED);
  }
}

/** PocketBase's rate limit labels: `/path/`, `METHOD /path`, `collection:action`, `*:action`, a tag. */
const RATE_LIMIT_LABEL = /^(\w+ \/[\w/-]*|\/[\w/-]*|\w+:\w+|\*:\w+|\w+)$/;

/**
 * PocketBase's `superuserIPs`: a top-level list, not an object section. When it holds anything,
 * administrators are served only from those addresses and subnets (src/auth/superuser-ips.ts).
 */
const superuserIpsSection: SettingsSection<string[]> = {
  name: 'superuserIPs',
  defaults: () => [],
  merge(input, current, errors) {
    const before = Object.keys(errors).length;
    const list = (bind({ list: 'string' }, input, current, 'superuserIPs', errors) as string[]).map((ip) => ip.trim());
    // An entry that is not text has its own error already.
    checkIpList(list, 'superuserIPs.', (path, code, message) => (errors[path] ??= { code, message }));
    return Object.keys(errors).length > before ? current : list;
  },
  view: (value) => value,
};

/** PocketBase's check of an address list (`excludedIPs`, `superuserIPs`): each entry an address or a CIDR subnet. */
function checkIpList(list: readonly string[], at: string, problem: Problem): void {
  list.forEach((ip, i) => {
    if (ip === '') problem(`${at}${i}`, ...REQUIRED);
    // PocketBase's code, its misspelling included: clients match on it.
    else if (!isIpOrSubnet(ip)) problem(`${at}${i}`, 'validation_invlaid_ip_or_subnet', 'Must be a valid IP address or CIDR subnet.');
  });
}

interface RateLimitRule {
  label: string;
  audience: string;
  duration: number;
  maxRequests: number;
}

export function pocketbaseSections(config: Config): SettingsSection<any>[] {
  const s3 = config.s3;
  const s3FromEnvironment = (): StoredS3 => ({
    enabled: config.storage === 's3',
    bucket: s3?.bucket ?? '',
    region: s3?.region ?? '',
    endpoint: s3?.endpoint ?? '',
    accessKey: s3?.accessKey ?? '',
    forcePathStyle: s3?.forcePathStyle ?? false,
  });
  return [
    shapedSection<StoredS3>({
      name: 's3',
      shape: S3_SHAPE,
      defaults: s3FromEnvironment,
      validate: (value, problem) => validateS3(value, '', problem),
      secrets: ['secret'],
    }),
    shapedSection<{ cron: string; cronMaxKeep: number; s3: StoredS3 }>({
      name: 'backups',
      shape: { fields: { cron: 'string', cronMaxKeep: 'int', s3: S3_SHAPE } },
      // Cairn's backups go where uploaded files go.
      defaults: () => ({ cron: config.backupCron ?? '', cronMaxKeep: config.backupKeep, s3: s3FromEnvironment() }),
      validate(value, problem) {
        validateS3(value.s3, 's3.', problem);
        if (value.cron !== '') {
          try {
            parseSchedule(value.cron, 'UTC');
          } catch (err) {
            problem('cron', 'validation_invalid_cron', err instanceof Error ? err.message : 'Invalid cron expression.');
          }
          if (value.cronMaxKeep === 0) problem('cronMaxKeep', ...REQUIRED);
        }
        if (value.cronMaxKeep < 0) problem('cronMaxKeep', 'validation_min_greater_equal_than_required', 'Must be no less than 1.');
      },
      secrets: ['s3.secret'],
    }),
    shapedSection<{ enabled: boolean; maxRequests: number; timeout: number; maxBodySize: number }>({
      name: 'batch',
      shape: { fields: { enabled: 'bool', maxRequests: 'int', timeout: 'int', maxBodySize: 'int' } },
      defaults: () => ({ enabled: true, maxRequests: config.batchMaxRequests, timeout: 3, maxBodySize: config.bodyLimit }),
      validate(value, problem) {
        for (const key of ['maxRequests', 'timeout'] as const) {
          if (value.enabled && value[key] === 0) problem(key, ...REQUIRED);
          else if (value[key] < 0) problem(key, 'validation_min_greater_equal_than_required', 'Must be no less than 0.');
        }
        if (value.maxBodySize < 0) problem('maxBodySize', 'validation_min_greater_equal_than_required', 'Must be no less than 0.');
      },
    }),
    shapedSection<{ maxDays: number; minLevel: number; logIP: boolean; logAuthId: boolean }>({
      name: 'logs',
      shape: { fields: { maxDays: 'int', minLevel: 'int', logIP: 'bool', logAuthId: 'bool' } },
      defaults: () => ({ maxDays: config.requestLogs ? config.logDays : 0, minLevel: 0, logIP: true, logAuthId: true }),
      validate(value, problem) {
        if (value.maxDays < 0) problem('maxDays', 'validation_min_greater_equal_than_required', 'Must be no less than 0.');
      },
    }),
    shapedSection<{ rules: RateLimitRule[]; excludedIPs: string[]; enabled: boolean }>({
      name: 'rateLimits',
      shape: {
        fields: {
          rules: { list: { fields: { label: 'string', audience: 'string', duration: 'int', maxRequests: 'int' } } },
          excludedIPs: { list: 'string' },
          enabled: 'bool',
        },
      },
      defaults: () => ({
        rules: config.rateLimit ? [{ label: '/api/', audience: '', duration: 60, maxRequests: config.globalRateLimit }] : [],
        excludedIPs: [],
        enabled: config.rateLimit,
      }),
      validate(value, problem) {
        if (value.enabled && value.rules.length === 0) problem('rules', ...REQUIRED);
        const seen: string[] = [];
        value.rules.forEach((rule, i) => {
          if (rule.label === '') problem(`rules.${i}.label`, ...REQUIRED);
          else if (!RATE_LIMIT_LABEL.test(rule.label)) problem(`rules.${i}.label`, 'validation_match_invalid', 'Must be in a valid format.');
          if (rule.maxRequests === 0) problem(`rules.${i}.maxRequests`, ...REQUIRED);
          else if (rule.maxRequests < 1) problem(`rules.${i}.maxRequests`, 'validation_min_greater_equal_than_required', 'Must be no less than 1.');
          if (rule.duration === 0) problem(`rules.${i}.duration`, ...REQUIRED);
          else if (rule.duration < 1) problem(`rules.${i}.duration`, 'validation_min_greater_equal_than_required', 'Must be no less than 1.');
          if (!['', '@guest', '@auth'].includes(rule.audience)) problem(`rules.${i}.audience`, 'validation_in_invalid', 'Must be a valid value.');
          // A label covering another's (same audience) would make which one applies ambiguous.
          const key = `${rule.label}@@${rule.audience}`;
          if (seen.some((k) => k.startsWith(key) || key.startsWith(k))) {
            problem(`rules.${i}.label`, 'validation_conflicting_rate_limit_rule', `Rate limit rule configuration with label ${rule.label} already exists or conflicts with another rule.`);
          } else seen.push(key);
        });
        checkIpList(value.excludedIPs, 'excludedIPs.', problem);
      },
    }),
    superuserIpsSection,
    shapedSection<{ headers: string[]; useLeftmostIP: boolean }>({
      name: 'trustedProxy',
      shape: { fields: { headers: { list: 'string' }, useLeftmostIP: 'bool' } },
      defaults: () => ({ headers: config.trustProxy ? ['X-Forwarded-For'] : [], useLeftmostIP: false }),
      validate() {},
    }),
  ];
}
