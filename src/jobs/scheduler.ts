import { notFound } from '../errors.ts';
import { uuidv7, uuidv7For } from '../lib/ids.ts';
import type { Logger } from '../lib/logger.ts';
import { pagination } from '../records/query-params.ts';
import type { Database, DatabaseRegistry, Queryable } from '../storage/index.ts';
import type { Invalidations } from '../storage/invalidations.ts';
import type { WebhookService } from '../webhooks/service.ts';
import { parseSchedule, type RunningSchedule } from './schedule.ts';
import { type CronJob, deleteJob, findJob, insertJob, listJobs, markRun, normalizeJob, updateJob } from './store.ts';

export type CronJobJson = CronJob & { nextRunAt: string | null };

export interface CronPage {
  page: number;
  perPage: number;
  totalItems: number;
  totalPages: number;
  items: CronJobJson[];
}

/**
 * Cron jobs of every database: their CRUD, and, once started (by the server only), their schedules.
 * A run is an outbox event like a trigger's, so it is delivered, retried and logged the same way and
 * survives a crash. A job whose previous run is still waiting or being sent skips its turn: runs of one
 * job never overlap.
 */
export class CronService {
  private readonly running = new Map<string, RunningSchedule>();
  private started = false;
  private log?: Logger;

  constructor(
    private readonly registry: DatabaseRegistry,
    private readonly webhooks: WebhookService,
    private readonly invalidations?: Invalidations,
  ) {
    // Jobs changed on another node (or everything, after a lost connection): scheduled again here.
    invalidations?.on('cron', (dbName) => {
      const names = dbName ? [dbName] : this.registry.list().map((d) => d.name);
      return Promise.all(names.map((name) => this.reload(name).catch((err) => this.log?.error({ err, database: name }, 'reloading cron jobs failed'))));
    });
  }

  /** Schedules the jobs of a database afresh from what is stored. */
  async reload(dbName: string): Promise<void> {
    if (!this.started) return;
    const jobs = await listJobs(await this.registry.get(dbName));
    for (const key of [...this.running.keys()]) {
      if (key.startsWith(`${dbName}/`)) this.unschedule(dbName, key.slice(dbName.length + 1));
    }
    for (const job of jobs) this.schedule(dbName, job);
  }

  /** Schedules the enabled jobs of every database. Databases created later have no jobs until one is
   * created through the API, which schedules it. */
  async start(log: Logger): Promise<void> {
    this.log = log;
    this.started = true;
    for (const { name } of this.registry.list()) {
      // A database with no job at all is not opened for it (registry.peek); a failed look opens it.
      const jobs = await this.registry.peek(name, listJobs, undefined);
      for (const job of jobs ?? (await listJobs(await this.registry.get(name)))) this.schedule(name, job);
    }
  }

  stop(): void {
    this.started = false;
    for (const r of this.running.values()) r.stop();
    this.running.clear();
  }

  async list(dbName: string, db: Database, query: Record<string, unknown>): Promise<CronPage> {
    const { page, perPage } = pagination(query);
    const all = await listJobs(db);
    return {
      page,
      perPage,
      totalItems: all.length,
      totalPages: Math.ceil(all.length / perPage),
      items: all.slice((page - 1) * perPage, page * perPage).map((j) => this.json(dbName, j)),
    };
  }

  async get(dbName: string, db: Database, id: string): Promise<CronJobJson> {
    return this.json(dbName, await this.find(db, id));
  }

  async create(dbName: string, db: Database, body: unknown): Promise<CronJobJson> {
    const job = normalizeJob(body, undefined, this.webhooks.outbound);
    await insertJob(db, job);
    this.schedule(dbName, job);
    await this.invalidations?.publish('cron', dbName);
    return this.json(dbName, job);
  }

  async update(dbName: string, db: Database, id: string, body: unknown): Promise<CronJobJson> {
    // The job is read locked, in the write's transaction: a PATCH sent beside another or a DELETE
    // waits for it, then starts from its result (a deleted job is a 404) instead of what it read before.
    const job = await db.transaction(async (tx) => {
      const changed = normalizeJob(body, await this.find(tx, id, true), this.webhooks.outbound);
      await updateJob(tx, changed);
      return changed;
    });
    this.schedule(dbName, job);
    await this.invalidations?.publish('cron', dbName);
    return this.json(dbName, job);
  }

  async remove(dbName: string, db: Database, id: string): Promise<void> {
    if (!(await deleteJob(db, id))) throw notFound('Cron job not found.');
    this.unschedule(dbName, id);
    await this.invalidations?.publish('cron', dbName);
  }

  /**
   * Sends one run of a job, unless its previous run is unfinished. `tick` is the scheduled time: the
   * event of a tick has an id derived from it, so when every node of an instance fires the same tick,
   * the outbox keeps one (PostgreSQL; on SQLite one process fires).
   */
  async fire(dbName: string, id: string, tick?: Date): Promise<void> {
    const db = await this.registry.get(dbName);
    const orderKey = `cron/${id}`;
    const fired = await db.transaction(async (tx) => {
      const job = await findJob(tx, id);
      if (!job?.enabled || (await this.webhooks.outbox.hasUnfinished(tx, orderKey))) return false;
      const now = new Date();
      const eventId = tick ? uuidv7For(tick.getTime(), `cron/${dbName}/${id}`) : uuidv7();
      const body = job.body ?? { id: eventId, event: 'cron.run', database: dbName, job: { id: job.id, name: job.name }, timestamp: now.toISOString() };
      await markRun(tx, id, now.toISOString());
      await this.webhooks.enqueue(tx, dbName, {
        id: eventId,
        source: 'cron',
        name: job.name,
        collection: '',
        action: 'cron',
        orderKey,
        target: job,
        body: job.method === 'GET' ? null : JSON.stringify(body),
      });
      return true;
    });
    if (!fired) this.log?.info({ database: dbName, job: id }, 'cron run skipped: the previous run is unfinished or the job is disabled');
  }

  private async find(db: Queryable, id: string, forWrite = false): Promise<CronJob> {
    const job = await findJob(db, id, forWrite);
    if (!job) throw notFound('Cron job not found.');
    return job;
  }

  private schedule(dbName: string, job: CronJob): void {
    this.unschedule(dbName, job.id);
    if (!this.started || !job.enabled) return;
    const running = parseSchedule(job.schedule, job.timezone).start(
      (tick) => {
        this.fire(dbName, job.id, tick).catch((err) => this.log?.error({ err, database: dbName, job: job.id }, 'cron run failed'));
      },
      Date.parse(job.updated),
    );
    this.running.set(`${dbName}/${job.id}`, running);
  }

  private unschedule(dbName: string, id: string): void {
    const key = `${dbName}/${id}`;
    this.running.get(key)?.stop();
    this.running.delete(key);
  }

  private json(dbName: string, job: CronJob): CronJobJson {
    const next = this.running.get(`${dbName}/${job.id}`)?.nextRun();
    return { ...job, nextRunAt: next ? next.toISOString() : null };
  }
}
