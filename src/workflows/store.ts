import { createHash, timingSafeEqual } from 'node:crypto';
import { orderColumn, type Queryable, type SchemaStep } from '../storage/index.ts';
import type { Step } from './definition.ts';

/** Workflows and their runs, in `_workflows` and `_workflow_runs` of their database. */

export const workflowTablesStep: SchemaStep = {
  id: 'workflows.tables',
  async up(tx) {
    await tx.exec(`CREATE TABLE _workflows (
      id TEXT PRIMARY KEY NOT NULL,
      name TEXT NOT NULL UNIQUE,
      secretHash TEXT NOT NULL,
      steps JSON NOT NULL,
      created TEXT NOT NULL,
      updated TEXT NOT NULL${orderColumn(tx.dialect)}
    );
    CREATE TABLE _workflow_runs (
      id TEXT PRIMARY KEY NOT NULL,
      workflow TEXT NOT NULL,
      event JSON NOT NULL,
      status TEXT NOT NULL,
      steps JSON DEFAULT '[]' NOT NULL,
      error TEXT DEFAULT '' NOT NULL,
      created TEXT NOT NULL,
      updated TEXT NOT NULL${orderColumn(tx.dialect)}
    );
    CREATE INDEX _workflow_runs_workflow ON _workflow_runs (workflow, created);
    CREATE INDEX _workflow_runs_unfinished ON _workflow_runs (created) WHERE status IN ('queued', 'running');`);
  },
};

export interface Workflow {
  id: string;
  name: string;
  steps: Step[];
  created: string;
  updated: string;
}

export type RunStatus = 'queued' | 'running' | 'success' | 'failed';

/** What one step of a run did. */
export interface StepOutcome {
  type: Step['type'];
  status: 'success' | 'failed' | 'skipped';
  collection?: string;
  /** The created record (create_record), as an administrator sees it. */
  record?: Record<string, unknown>;
  /** The outbox event (webhook): its delivery shows in the webhook logs under this id. */
  eventId?: string;
  error?: string;
}

export interface WorkflowRun {
  id: string;
  workflow: string;
  event: unknown;
  status: RunStatus;
  steps: StepOutcome[];
  error: string;
  created: string;
  updated: string;
}

/** Workflow secrets are high-entropy bearer secrets: a plain SHA-256 is enough to keep them out of
 * the database, and survives a change of the instance secret. */
export function hashSecret(secret: string): string {
  return createHash('sha256').update(secret).digest('hex');
}

export function secretMatches(secret: string, hash: string): boolean {
  const a = Buffer.from(hashSecret(secret), 'hex');
  const b = Buffer.from(hash, 'hex');
  return a.length === b.length && timingSafeEqual(a, b);
}

interface WorkflowRow {
  id: string;
  name: string;
  secretHash: string;
  steps: string;
  created: string;
  updated: string;
}

function workflowFrom(row: WorkflowRow): Workflow & { secretHash: string } {
  return { id: row.id, name: row.name, secretHash: row.secretHash, steps: JSON.parse(row.steps), created: row.created, updated: row.updated };
}

export async function insertWorkflow(db: Queryable, w: Workflow, secretHash: string): Promise<void> {
  await db.run('INSERT INTO _workflows (id, name, secretHash, steps, created, updated) VALUES (?, ?, ?, ?, ?, ?)', [w.id, w.name, secretHash, JSON.stringify(w.steps), w.created, w.updated]);
}

export async function findWorkflow(db: Queryable, name: string): Promise<(Workflow & { secretHash: string }) | undefined> {
  const row = await db.get<WorkflowRow>('SELECT * FROM _workflows WHERE name = ?', [name]);
  return row ? workflowFrom(row) : undefined;
}

export async function listWorkflows(db: Queryable): Promise<Workflow[]> {
  return (await db.all<WorkflowRow>(`SELECT * FROM _workflows ORDER BY created, ${db.dialect.insertionOrder('_workflows')}`)).map((r) => {
    const { secretHash: _hidden, ...w } = workflowFrom(r);
    return w;
  });
}

export async function deleteWorkflow(db: Queryable, name: string): Promise<boolean> {
  return (await db.run('DELETE FROM _workflows WHERE name = ?', [name])).changes > 0;
}

interface RunRow {
  id: string;
  workflow: string;
  event: string;
  status: RunStatus;
  steps: string;
  error: string;
  created: string;
  updated: string;
}

/**
 * A run's lease: the node executing it and until when (ms). Where several nodes share a database,
 * a node executes a run only after taking its lease, so an event's run happens once; a node that dies
 * mid-run leaves the lease to expire, and another node resumes the run (its steps are idempotent).
 */
export const workflowRunLeasesStep: SchemaStep = {
  id: 'workflows.run-leases',
  async up(tx) {
    await tx.exec('ALTER TABLE _workflow_runs ADD COLUMN leaseOwner TEXT');
    await tx.exec('ALTER TABLE _workflow_runs ADD COLUMN leaseUntil BIGINT');
  },
};

/** Takes the lease of an unfinished run nobody holds (or whose lease expired); whether it was taken. */
export async function claimRun(db: Queryable, id: string, node: string, until: number, now: number): Promise<boolean> {
  const taken = await db.run(
    "UPDATE _workflow_runs SET leaseOwner = ?, leaseUntil = ? WHERE id = ? AND status IN ('queued', 'running') AND (leaseUntil IS NULL OR leaseUntil < ?)",
    [node, until, id, now],
  );
  return taken.changes > 0;
}

/** Gives a run's lease back (the run finished, or this node stops). */
export async function releaseRun(db: Queryable, id: string, node: string): Promise<void> {
  await db.run('UPDATE _workflow_runs SET leaseOwner = NULL, leaseUntil = NULL WHERE id = ? AND leaseOwner = ?', [id, node]);
}

/** Unfinished runs whose lease is free or expired: left by a node that died. */
export async function orphanedRuns(db: Queryable, now: number): Promise<string[]> {
  const rows = await db.all<{ id: string }>(
    `SELECT id FROM _workflow_runs WHERE status IN ('queued', 'running') AND (leaseUntil IS NULL OR leaseUntil < ?) ORDER BY created, ${db.dialect.insertionOrder('_workflow_runs')}`,
    [now],
  );
  return rows.map((r) => r.id);
}

const RUN_COLUMNS = 'id, workflow, event, status, steps, error, created, updated';

function runFrom(row: RunRow): WorkflowRun {
  return { ...row, event: JSON.parse(row.event), steps: JSON.parse(row.steps) };
}

export async function insertRun(db: Queryable, run: WorkflowRun): Promise<void> {
  await db.run('INSERT INTO _workflow_runs (id, workflow, event, status, steps, error, created, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?)', [
    run.id,
    run.workflow,
    JSON.stringify(run.event),
    run.status,
    JSON.stringify(run.steps),
    run.error,
    run.created,
    run.updated,
  ]);
}

export async function saveRunProgress(db: Queryable, id: string, status: RunStatus, steps: StepOutcome[], error: string): Promise<void> {
  await db.run('UPDATE _workflow_runs SET status = ?, steps = ?, error = ?, updated = ? WHERE id = ?', [status, JSON.stringify(steps), error, new Date().toISOString(), id]);
}

export async function findRun(db: Queryable, id: string): Promise<WorkflowRun | undefined> {
  const row = await db.get<RunRow>(`SELECT ${RUN_COLUMNS} FROM _workflow_runs WHERE id = ?`, [id]);
  return row ? runFrom(row) : undefined;
}

export async function listRuns(db: Queryable, workflow: string, page: number, perPage: number): Promise<{ totalItems: number; items: WorkflowRun[] }> {
  const totalItems = Number((await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM _workflow_runs WHERE workflow = ?', [workflow]))?.n ?? 0);
  const rows = await db.all<RunRow>(`SELECT ${RUN_COLUMNS} FROM _workflow_runs WHERE workflow = ? ORDER BY created DESC, ${db.dialect.insertionOrder('_workflow_runs')} DESC LIMIT ? OFFSET ?`, [workflow, perPage, (page - 1) * perPage]);
  return { totalItems, items: rows.map(runFrom) };
}

/** Runs a previous process accepted but did not finish, oldest first. */
export async function unfinishedRuns(db: Queryable): Promise<string[]> {
  return (await db.all<{ id: string }>(`SELECT id FROM _workflow_runs WHERE status IN ('queued', 'running') ORDER BY created, ${db.dialect.insertionOrder('_workflow_runs')}`)).map((r) => r.id);
}
