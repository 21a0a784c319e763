import { type FieldError, validationFailed } from '../errors.ts';
import { randomId } from '../lib/ids.ts';
import type { OutboundPolicy } from '../lib/outbound.ts';
import { nowIso } from '../lib/time.ts';
import { orderColumn, type Queryable, type SchemaStep } from '../storage/index.ts';
import { checkHeaders, checkMethod, checkSecret, checkUrl, type Problems } from '../webhooks/target.ts';
import { parseSchedule, ScheduleError } from './schedule.ts';
import { isPlainObject } from '../lib/objects.ts';

/** A cron job (API contract §7), stored in `_cron_jobs` of its database. */
export interface CronJob {
  id: string;
  name: string;
  schedule: string;
  timezone: string;
  url: string;
  method: string;
  headers: Record<string, string>;
  /** Sent as JSON; null sends the default body `{id, event: "cron.run", database, job, timestamp}`. */
  body: unknown;
  secret: string;
  enabled: boolean;
  lastRunAt: string | null;
  created: string;
  updated: string;
}

export const cronJobsTableStep: SchemaStep = {
  id: 'jobs.cron',
  async up(tx) {
    await tx.exec(`CREATE TABLE _cron_jobs (
      id TEXT PRIMARY KEY NOT NULL,
      name TEXT NOT NULL,
      schedule TEXT NOT NULL,
      timezone TEXT DEFAULT 'UTC' NOT NULL,
      url TEXT NOT NULL,
      method TEXT NOT NULL,
      headers JSON DEFAULT '{}' NOT NULL,
      body JSON,
      secret TEXT DEFAULT '' NOT NULL,
      enabled INTEGER DEFAULT 1 NOT NULL,
      lastRunAt TEXT,
      created TEXT NOT NULL,
      updated TEXT NOT NULL${orderColumn(tx.dialect)}
    )`);
  },
};

/** A cron run may be a bare ping, so GET (sent without a body) is allowed besides the body methods. */
export const CRON_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;
const MAX_NAME = 255;

interface CronJobRow extends Omit<CronJob, 'headers' | 'body' | 'enabled'> {
  headers: string;
  body: string | null;
  enabled: number;
}

function fromRow(row: CronJobRow): CronJob {
  return { ...row, headers: JSON.parse(row.headers), body: row.body === null ? null : JSON.parse(row.body), enabled: row.enabled === 1 };
}

/**
 * Validates a create (no `existing`) or PATCH body and returns the job to store; 400 with one entry
 * per problem otherwise. `outbound`: where a URL may not point (see webhooks/target.ts checkUrl).
 */
export function normalizeJob(body: unknown, existing?: CronJob, outbound?: OutboundPolicy): CronJob {
  if (!isPlainObject(body)) throw validationFailed({}, 'The request body must be a JSON object.');
  const problems: Problems = {};
  const has = (k: string) => body[k] !== undefined;
  const now = nowIso();

  let name = existing?.name ?? '';
  if (!existing || has('name')) {
    if (typeof body.name !== 'string' || body.name.trim() === '' || body.name.length > MAX_NAME) {
      problems.name = { code: 'validation_required', message: `Must be a non-empty text of at most ${MAX_NAME} characters.` };
    } else name = body.name.trim();
  }

  let timezone = existing?.timezone ?? 'UTC';
  if (has('timezone') && body.timezone !== null && body.timezone !== '') {
    if (typeof body.timezone !== 'string') problems.timezone = { code: 'validation_invalid_timezone', message: 'Must be an IANA time zone name.' };
    else timezone = body.timezone;
  }
  let schedule = existing?.schedule ?? '';
  if (!existing || has('schedule')) {
    if (typeof body.schedule !== 'string' || body.schedule.trim() === '') {
      problems.schedule = { code: 'validation_required', message: 'Must be a cron expression (5 or 6 fields) or "@every <duration>".' };
    } else schedule = body.schedule.trim();
  }
  if (!problems.schedule && !problems.timezone) {
    try {
      parseSchedule(schedule, timezone);
    } catch (err) {
      if (!(err instanceof ScheduleError)) throw err;
      const key = err.message.startsWith('Unknown time zone') ? 'timezone' : 'schedule';
      problems[key] = { code: `validation_invalid_${key}`, message: err.message };
    }
  }

  const url = !existing || has('url') ? checkUrl(body.url, problems, 'url', outbound) : existing.url;
  const method = !existing || has('method') ? checkMethod(body.method, CRON_METHODS, problems) : existing.method;
  const headers = !existing || has('headers') ? checkHeaders(body.headers, problems) : existing.headers;
  const secret = !existing || has('secret') ? checkSecret(body.secret, problems) : existing.secret;

  let enabled = existing?.enabled ?? true;
  if (has('enabled') && body.enabled !== null) {
    if (typeof body.enabled !== 'boolean') problems.enabled = { code: 'validation_invalid_value', message: 'Must be a boolean.' };
    else enabled = body.enabled;
  }

  if (Object.keys(problems).length > 0) {
    throw validationFailed(problems as Record<string, FieldError>, existing ? 'Failed to update the cron job.' : 'Failed to create the cron job.');
  }
  return {
    id: existing?.id ?? randomId(),
    name,
    schedule,
    timezone,
    url: url!,
    method: method!,
    headers: headers!,
    body: has('body') ? body.body : (existing?.body ?? null),
    secret: secret!,
    enabled,
    lastRunAt: existing?.lastRunAt ?? null,
    created: existing?.created ?? now,
    updated: now,
  };
}

const COLUMNS = 'id, name, schedule, timezone, url, method, headers, body, secret, enabled, lastRunAt, created, updated';

export async function listJobs(db: Queryable): Promise<CronJob[]> {
  return (await db.all<CronJobRow>(`SELECT ${COLUMNS} FROM _cron_jobs ORDER BY created, ${db.dialect.insertionOrder('_cron_jobs')}`)).map(fromRow);
}

/** A job by id; with `forWrite`, its row locked until the caller's transaction ends. */
export async function findJob(db: Queryable, id: string, forWrite = false): Promise<CronJob | undefined> {
  const row = await db.get<CronJobRow>(`SELECT ${COLUMNS} FROM _cron_jobs WHERE id = ?${forWrite ? db.dialect.lockForWrite('_cron_jobs') : ''}`, [id]);
  return row ? fromRow(row) : undefined;
}

const INSERT_JOB = `INSERT INTO _cron_jobs (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;
const CHANGED = COLUMNS.split(', ').filter((c) => c !== 'id' && c !== 'created');
const UPDATE_JOB = `UPDATE _cron_jobs SET ${CHANGED.map((c) => `${c} = ?`).join(', ')} WHERE id = ?`;

/** A job's columns in COLUMNS' order, as stored. */
function jobValues(job: CronJob): Record<string, unknown> {
  return {
    id: job.id,
    name: job.name,
    schedule: job.schedule,
    timezone: job.timezone,
    url: job.url,
    method: job.method,
    headers: JSON.stringify(job.headers),
    body: job.body === null || job.body === undefined ? null : JSON.stringify(job.body),
    secret: job.secret,
    enabled: job.enabled,
    lastRunAt: job.lastRunAt,
    created: job.created,
    updated: job.updated,
  };
}

export async function insertJob(db: Queryable, job: CronJob): Promise<void> {
  const values = jobValues(job);
  await db.run(INSERT_JOB, COLUMNS.split(', ').map((c) => values[c]));
}

/** Writes a job over its row; never an insert, so a PATCH that lost to a DELETE cannot bring it back. */
export async function updateJob(db: Queryable, job: CronJob): Promise<void> {
  const values = jobValues(job);
  await db.run(UPDATE_JOB, [...CHANGED.map((c) => values[c]), job.id]);
}

export async function deleteJob(db: Queryable, id: string): Promise<boolean> {
  return (await db.run('DELETE FROM _cron_jobs WHERE id = ?', [id])).changes > 0;
}

export async function markRun(db: Queryable, id: string, at: string): Promise<void> {
  await db.run('UPDATE _cron_jobs SET lastRunAt = ? WHERE id = ?', [at, id]);
}
