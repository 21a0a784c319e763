import type { Logger } from '../lib/logger.ts';
import type { RunningSchedule } from '../jobs/schedule.ts';
import type { Database, SchemaStep } from '../storage/index.ts';
import { asHookError, HookFault } from './fault.ts';
import type { HookCron, HookSet } from './registry.ts';

/** Claims of cron ticks in the system database: the node that inserts a tick's row runs it. */
export const hookCronRunsStep: SchemaStep = {
  id: 'system.hook_cron_runs',
  async up(tx) {
    await tx.exec('CREATE TABLE _hook_cron_runs (name TEXT NOT NULL, tick TEXT NOT NULL, node TEXT NOT NULL, PRIMARY KEY (name, tick))');
  },
};

// Claims older than this are pruned: a node's clock would have to be off by a day to claim a tick again.
const KEEP_CLAIMS_MS = 24 * 3_600_000;

/**
 * Runs the cron jobs application code added (`cronAdd`), once per tick across every node of an
 * instance: each node schedules every job (`jobs/schedule.ts`, `@every` intervals counted from the
 * epoch so every node fires on the same ticks), and a tick runs on the node whose claim row for it is
 * inserted first. A run still under way when the next tick comes makes that node skip it.
 */
export class HookCronRunner {
  private running: RunningSchedule[] = [];
  private readonly busy = new Set<string>();

  constructor(
    private readonly system: Database,
    private readonly node: string,
    private readonly log: Logger,
  ) {}

  start(set: HookSet): void {
    this.stop();
    for (const job of set.crons.values()) this.running.push(job.schedule.start((tick) => void this.fire(job, tick), 0));
  }

  stop(): void {
    for (const s of this.running) s.stop();
    this.running = [];
  }

  private async claim(job: HookCron, tick: Date): Promise<boolean> {
    const result = await this.system.run('INSERT INTO _hook_cron_runs (name, tick, node) VALUES (?, ?, ?) ON CONFLICT DO NOTHING', [job.name, tick.toISOString(), this.node]);
    if (result.changes === 1) await this.system.run('DELETE FROM _hook_cron_runs WHERE name = ? AND tick < ?', [job.name, new Date(tick.getTime() - KEEP_CLAIMS_MS).toISOString()]);
    return result.changes === 1;
  }

  private async fire(job: HookCron, tick: Date): Promise<void> {
    if (this.busy.has(job.name)) {
      this.log.warn({ cron: job.name, hook: job.source }, 'hook cron job still running from its previous tick; this tick is skipped');
      return;
    }
    this.busy.add(job.name);
    try {
      if (!(await this.claim(job, tick))) return;
      try {
        await job.handler();
      } catch (err) {
        const fault = asHookError(err, job.source);
        this.log.error(fault instanceof HookFault ? { err: fault.cause, hook: fault.source, cron: job.name } : { err: fault, hook: job.source, cron: job.name }, 'hook cron job failed');
      }
    } catch (err) {
      this.log.error({ err, cron: job.name }, 'claiming a hook cron tick failed; the tick is skipped on this node');
    } finally {
      this.busy.delete(job.name);
    }
  }
}
