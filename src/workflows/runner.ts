import type { CollectionService } from '../collections/service.ts';
import { systemContext } from '../context.ts';
import { type FieldError, isApiError } from '../errors.ts';
import { idFromSeed } from '../lib/ids.ts';
import type { Logger } from '../lib/logger.ts';
import type { RecordService } from '../records/service.ts';
import type { Database, DatabaseRegistry, Queryable } from '../storage/index.ts';
import type { WebhookService } from '../webhooks/service.ts';
import type { CreateRecordStep, WebhookStep } from './definition.ts';
import { render } from './placeholders.ts';
import { claimRun, findRun, findWorkflow, orphanedRuns, releaseRun, saveRunProgress, type StepOutcome, unfinishedRuns, type WorkflowRun } from './store.ts';

// Runs are short (a few writes each); a small pool keeps a burst of events from crowding out requests.
const MAX_CONCURRENT_RUNS = 4;

export interface RunnerDeps {
  registry: DatabaseRegistry;
  collections: CollectionService;
  records: RecordService;
  webhooks: WebhookService;
  /** This node (CAIRN_NODE_ID), as run leases name it. */
  node: string;
}

// A run holds its lease this long past its last step; a node that died mid-run is taken over after it.
const LEASE_MS = 60_000;
// Where several nodes share the database, runs a dead node left are looked for this often.
const SWEEP_MS = 15_000;

interface Job {
  dbName: string;
  runId: string;
  /** Picked up again after a stop or crash: a step may already have done its work. */
  recovered: boolean;
}

function describe(err: unknown): string {
  if (!isApiError(err)) return 'Internal error.';
  const details = Object.entries(err.data)
    .map(([k, v]) => `${k}: ${(v as FieldError).message ?? JSON.stringify(v)}`)
    .join('; ');
  return details ? `${err.message} (${details})` : err.message;
}

function isIdTaken(err: unknown): boolean {
  return isApiError(err) && err.status === 400 && (err.data.id as FieldError | undefined)?.code === 'validation_not_unique';
}

/**
 * Executes workflow runs in the background, step by step, saving each step's outcome as it goes.
 * Steps are idempotent under re-execution: a `create_record` step creates its record under an id
 * derived from the run and step (or the one its data names), and a `webhook` step enqueues its event
 * under a derived id in the same transaction that records the step, so a run resumed after a crash
 * neither duplicates records nor sends twice.
 */
export class WorkflowRunner {
  private readonly queue: Job[] = [];
  private readonly active = new Set<Promise<void>>();
  private running = false;
  private log?: Logger;
  private sweeper?: NodeJS.Timeout;

  constructor(private readonly deps: RunnerDeps) {}

  /** Whether other processes share the database, so that runs need leases. */
  private get shared(): boolean {
    return this.deps.registry.backend.shared;
  }

  /**
   * Resumes the runs a previous process left queued or running, then accepts new ones. Alone on its
   * database (SQLite), every unfinished run is this process's own; shared, only those whose lease
   * expired, and a sweep keeps looking for runs of nodes that die later.
   */
  async start(log: Logger): Promise<void> {
    this.log = log;
    this.running = true;
    await this.recover(this.shared ? orphanedRuns : (db) => unfinishedRuns(db));
    if (this.shared) {
      this.sweeper = setInterval(() => void this.recover(orphanedRuns).catch((err) => this.log?.error({ err }, 'looking for orphaned workflow runs failed')), SWEEP_MS);
      this.sweeper.unref();
    }
  }

  private async recover(find: (db: Queryable, now: number) => Promise<string[]>): Promise<void> {
    for (const { name } of this.deps.registry.list()) {
      // Asked without opening the database (registry.peek): a run found opens it when it executes.
      const now = Date.now();
      const found = await this.deps.registry.peek(name, (q) => find(q, now), undefined);
      for (const runId of found ?? (await find(await this.deps.registry.get(name), now))) {
        if (!this.queue.some((j) => j.runId === runId)) this.queue.push({ dbName: name, runId, recovered: true });
      }
    }
    this.drain();
  }

  /** Lets runs in progress finish; queued ones stay queued in the database for the next start. */
  async stop(): Promise<void> {
    this.running = false;
    clearInterval(this.sweeper);
    this.queue.length = 0;
    await Promise.allSettled([...this.active]);
  }

  enqueue(dbName: string, runId: string): void {
    this.queue.push({ dbName, runId, recovered: false });
    this.drain();
  }

  private drain(): void {
    while (this.running && this.active.size < MAX_CONCURRENT_RUNS && this.queue.length > 0) {
      const job = this.queue.shift()!;
      const p: Promise<void> = this.execute(job)
        .catch((err) => this.log?.error({ err, database: job.dbName, run: job.runId }, 'workflow run failed'))
        .finally(() => {
          this.active.delete(p);
          this.drain();
        });
      this.active.add(p);
    }
  }

  private async execute(job: Job): Promise<void> {
    const db = await this.deps.registry.get(job.dbName);
    // Another node may have taken it (shared database): one node runs it.
    if (this.shared && !(await claimRun(db, job.runId, this.deps.node, Date.now() + LEASE_MS, Date.now()))) return;
    try {
      await this.executeClaimed(job, db);
    } finally {
      if (this.shared) await releaseRun(db, job.runId, this.deps.node).catch(() => undefined);
    }
  }

  private async executeClaimed(job: Job, db: Database): Promise<void> {
    const run = await findRun(db, job.runId);
    if (!run || run.status === 'success' || run.status === 'failed') return;
    const workflow = await findWorkflow(db, run.workflow);
    if (!workflow) {
      await saveRunProgress(db, run.id, 'failed', run.steps, 'The workflow was deleted before the run finished.');
      return;
    }
    const outcomes = [...run.steps];
    await saveRunProgress(db, run.id, 'running', outcomes, '');
    for (let i = 0; i < workflow.steps.length; i++) {
      if (outcomes[i]?.status === 'success') continue;
      const step = workflow.steps[i];
      const context = { event: run.event, steps: outcomes };
      try {
        if (step.type === 'create_record') {
          outcomes[i] = await this.createRecord(job, db, run, i, step, context);
          await saveRunProgress(db, run.id, 'running', outcomes, '');
        } else {
          await this.enqueueWebhook(job.dbName, db, run, workflow.name, i, step, context, outcomes);
        }
      } catch (err) {
        if (!isApiError(err)) this.log?.error({ err, database: job.dbName, run: run.id, step: i }, 'workflow step failed');
        const message = describe(err);
        outcomes[i] = { type: step.type, status: 'failed', error: message };
        for (let j = i + 1; j < workflow.steps.length; j++) outcomes[j] = { type: workflow.steps[j].type, status: 'skipped' };
        await saveRunProgress(db, run.id, 'failed', outcomes, `Step ${i + 1} (${step.type}) failed: ${message}`);
        return;
      }
    }
    await saveRunProgress(db, run.id, 'success', outcomes, '');
  }

  private async createRecord(job: Job, db: Database, run: WorkflowRun, index: number, step: CreateRecordStep, context: unknown): Promise<StepOutcome> {
    const collection = await this.deps.collections.get(db, step.collection);
    const data = render(step.data, context) as Record<string, unknown>;
    const derived = data.id === undefined || data.id === null || data.id === '';
    const id = derived ? idFromSeed(`${run.id}:${index}`) : data.id;
    const ctx = systemContext(job.dbName, db);
    let record: unknown;
    try {
      record = await this.deps.records.create(ctx, collection, { ...data, id });
    } catch (err) {
      // The record this very step created before the process stopped: the step is done.
      if (!(isIdTaken(err) && (derived || job.recovered))) throw err;
      record = await this.deps.records.view(ctx, collection, String(id));
    }
    return { type: 'create_record', status: 'success', collection: collection.name, record: record as Record<string, unknown> };
  }

  private async enqueueWebhook(
    dbName: string,
    db: Database,
    run: WorkflowRun,
    workflow: string,
    index: number,
    step: WebhookStep,
    context: unknown,
    outcomes: StepOutcome[],
  ): Promise<void> {
    const eventId = `${run.id}-${index}`;
    const body =
      step.body === undefined
        ? { id: eventId, event: 'workflow.run', database: dbName, workflow, run: run.id, data: run.event, steps: outcomes.slice(0, index), timestamp: new Date().toISOString() }
        : render(step.body, context);
    outcomes[index] = { type: 'webhook', status: 'success', eventId };
    await db.transaction(async (tx) => {
      await this.deps.webhooks.enqueue(tx, dbName, {
        id: eventId,
        source: 'workflow',
        name: workflow,
        collection: '',
        action: 'workflow',
        orderKey: `workflow/${run.id}`,
        target: step,
        body: step.method === 'GET' ? null : JSON.stringify(body),
      });
      await saveRunProgress(tx, run.id, 'running', outcomes, '');
    });
  }
}
