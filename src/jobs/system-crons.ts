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
  private readonly running = new Map<string, RunningSchedule>();
  private started = false;
  private readonly busy = new Set<string>();
  private jobs: SystemCron[];

  constructor(
    jobs: readonly SystemCron[],
    private readonly log?: Pick<Logger, 'error' | 'warn'>,
  ) {
    this.jobs = [...jobs];
  }

  list(): Array<{ id: string; expression: string }> {
    return this.jobs.map((j) => ({ id: j.id, expression: j.expression }));
  }

  find(id: string): SystemCron | undefined {
    return this.jobs.find((j) => j.id === id);
  }

  /**
   * Adds the job, or replaces the one of its id (rescheduled when its expression changed); `remove`
   * takes it away. For the jobs whose schedule is a setting (`__pbAutoBackup__`, `backups.cron`).
   */
  set(job: SystemCron): void {
    const at = this.jobs.findIndex((j) => j.id === job.id);
    const same = at >= 0 && this.jobs[at].expression === job.expression;
    if (at >= 0) this.jobs[at] = job;
    else this.jobs.push(job);
    if (this.started && !same) this.schedule(job);
  }

  remove(id: string): void {
    this.jobs = this.jobs.filter((j) => j.id !== id);
    this.running.get(id)?.stop();
    this.running.delete(id);
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
    this.started = true;
    for (const job of this.jobs) this.schedule(job);
  }

  private schedule(job: SystemCron): void {
    this.running.get(job.id)?.stop();
    this.running.set(
      job.id,
      parseSchedule(job.expression, 'UTC').start(() => {
        // The job of its id as it is now (replaced since, with the same schedule, or removed).
        const current = this.find(job.id);
        if (current) this.run(current).catch((err) => this.log?.error({ err, cron: job.id }, 'system cron job failed'));
      }),
    );
  }

  stop(): void {
    this.started = false;
    for (const s of this.running.values()) s.stop();
    this.running.clear();
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
  // `__pbAutoBackup__` is set and removed as the settings say (backups/schedule.ts).
  return jobs;
}
