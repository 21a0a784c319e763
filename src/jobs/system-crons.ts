import type { Logger } from '../lib/logger.ts';
import type { Database } from '../storage/index.ts';
import { parseSchedule, type RunningSchedule } from './schedule.ts';

/** A maintenance job of the server itself, listed by `/api/crons` under PocketBase's id for it. */
export interface SystemCron {
  id: string;
  /** A 5-field cron expression, in UTC. */
  expression: string;
  run(): Promise<void>;
}

/**
 * The server's own cron jobs, which PocketBase v0.39 lists first in `GET /api/crons` and runs by id
 * (`POST /api/crons/:id`): each is scheduled on every node (what they do is idempotent, so two nodes
 * running the same tick only repeat a no-op), and a run still under way when its next tick comes
 * makes that tick skip.
 */
export class SystemCrons {
  private running: RunningSchedule[] = [];
  private readonly busy = new Set<string>();

  constructor(
    readonly jobs: readonly SystemCron[],
    private readonly log?: Pick<Logger, 'error' | 'warn'>,
  ) {}

  list(): Array<{ id: string; expression: string }> {
    return this.jobs.map((j) => ({ id: j.id, expression: j.expression }));
  }

  find(id: string): SystemCron | undefined {
    return this.jobs.find((j) => j.id === id);
  }

  /** Runs one job now; rejects with its error. */
  async run(job: SystemCron): Promise<void> {
    if (this.busy.has(job.id)) return;
    this.busy.add(job.id);
    try {
      await job.run();
    } finally {
      this.busy.delete(job.id);
    }
  }

  start(): void {
    this.stop();
    for (const job of this.jobs) {
      this.running.push(
        parseSchedule(job.expression, 'UTC').start(() => {
          this.run(job).catch((err) => this.log?.error({ err, cron: job.id }, 'system cron job failed'));
        }),
      );
    }
  }

  stop(): void {
    for (const s of this.running) s.stop();
    this.running = [];
  }
}

export interface SystemCronSources {
  /** Deletes request-log entries past the retention (`CAIRN_LOG_DAYS`). */
  pruneLogs(): Promise<unknown>;
  /** The application databases open in this process (the others are untouched until opened). */
  databases(): Database[];
  /** The system and request-log databases. */
  internal(): Database[];
  /** Deletes expired MFA sessions of one database. */
  pruneMfas(db: Database): Promise<unknown>;
  /** Deletes expired one-time passwords of one database. */
  pruneOtps(db: Database): Promise<unknown>;
  /** The automatic backups' schedule (`CAIRN_BACKUP_CRON`) and what a scheduled backup does, when set. */
  backup?: { expression: string; run(): Promise<unknown> };
}

/** PocketBase v0.39's own jobs, under its ids and schedules, doing Cairn's part of that work. */
export function pocketBaseSystemCrons(s: SystemCronSources): SystemCron[] {
  const each = (fn: (db: Database) => Promise<unknown>, all = false) => async () => {
    for (const db of all ? [...s.internal(), ...s.databases()] : s.databases()) await fn(db);
  };
  const jobs: SystemCron[] = [
    { id: '__pbLogsCleanup__', expression: '0 */6 * * *', run: async () => void (await s.pruneLogs()) },
    // SQLite's own upkeep of its query planner statistics; PostgreSQL's autovacuum does it there.
    { id: '__pbDBOptimize__', expression: '0 0 * * *', run: each(async (db) => (db.dialect.name === 'sqlite' ? db.exec('PRAGMA optimize') : undefined), true) },
    { id: '__pbMFACleanup__', expression: '0 * * * *', run: each((db) => s.pruneMfas(db)) },
    { id: '__pbOTPCleanup__', expression: '0 * * * *', run: each((db) => s.pruneOtps(db)) },
  ];
  if (s.backup) {
    const backup = s.backup;
    jobs.push({ id: '__pbAutoBackup__', expression: backup.expression, run: async () => void (await backup.run()) });
  }
  return jobs;
}
