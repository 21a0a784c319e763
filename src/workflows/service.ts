import type { Auth } from '../context.ts';
import { badRequest, conflict, isApiError, notFound, unauthorized } from '../errors.ts';
import { randomId } from '../lib/ids.ts';
import type { Logger } from '../lib/logger.ts';
import { nowIso } from '../lib/time.ts';
import { pagination } from '../records/query-params.ts';
import type { Database } from '../storage/index.ts';
import { parseDefinition } from './definition.ts';
import { type RunnerDeps, WorkflowRunner } from './runner.ts';
import {
  deleteWorkflow,
  findRun,
  findWorkflow,
  hashSecret,
  insertRun,
  insertWorkflow,
  listRuns,
  listWorkflows,
  secretMatches,
  type Workflow,
  type WorkflowRun,
} from './store.ts';

export interface Page<T> {
  page: number;
  perPage: number;
  totalItems: number;
  totalPages: number;
  items: T[];
}

/**
 * Inbound workflows (API contract §7): an event posted to a workflow is stored, answered with 202,
 * and then run step by step in the background (WorkflowRunner).
 */
export class WorkflowService {
  private readonly runner: WorkflowRunner;

  constructor(private readonly deps: RunnerDeps) {
    this.runner = new WorkflowRunner(deps);
  }

  start(log: Logger): Promise<void> {
    return this.runner.start(log);
  }

  stop(): Promise<void> {
    return this.runner.stop();
  }

  /** Creates a workflow; the answer carries its secret, the only time it is shown. */
  async create(db: Database, body: unknown): Promise<Workflow & { secret: string }> {
    const def = parseDefinition(body, await this.deps.collections.all(db), this.deps.webhooks.outbound);
    const taken = () => conflict(`Workflow "${def.name}" already exists.`, { name: { code: 'validation_not_unique', message: 'Workflow names are unique.' } });
    if (await findWorkflow(db, def.name)) throw taken();
    const now = nowIso();
    const workflow: Workflow = { id: randomId(), name: def.name, steps: def.steps, created: now, updated: now };
    try {
      await insertWorkflow(db, workflow, hashSecret(def.secret));
    } catch (err) {
      // Another create of the name came between the lookup and the insert.
      if (db.dialect.classifyError(err).kind === 'unique') throw taken();
      throw err;
    }
    return { ...workflow, secret: def.secret };
  }

  async list(db: Database, query: Record<string, unknown>): Promise<Page<Workflow>> {
    const { page, perPage } = pagination(query);
    const all = await listWorkflows(db);
    return { page, perPage, totalItems: all.length, totalPages: Math.ceil(all.length / perPage), items: all.slice((page - 1) * perPage, page * perPage) };
  }

  async get(db: Database, name: string): Promise<Workflow> {
    const found = await findWorkflow(db, name);
    if (!found) throw notFound('Workflow not found.');
    const { secretHash: _hidden, ...workflow } = found;
    return workflow;
  }

  async remove(db: Database, name: string): Promise<void> {
    if (!(await deleteWorkflow(db, name))) throw notFound('Workflow not found.');
  }

  /**
   * Accepts an event: authenticated by the workflow's secret as bearer token, or else by the caller's
   * Cairn credentials (`authenticate`), which must be an API key or an administrator of this database.
   * Without valid credentials an unknown workflow is a 401 too, so names cannot be probed.
   */
  async receive(dbName: string, db: Database, name: string, bearer: string | undefined, event: unknown, authenticate: () => Promise<Auth>): Promise<{ id: string }> {
    const workflow = await findWorkflow(db, name);
    if (!(bearer !== undefined && workflow && secretMatches(bearer, workflow.secretHash))) {
      if (bearer === undefined) throw unauthorized();
      let auth: Auth;
      try {
        auth = await authenticate();
      } catch (err) {
        if (isApiError(err) && err.status === 401) throw unauthorized();
        throw err;
      }
      if (auth.type !== 'apikey' && auth.type !== 'admin') throw unauthorized();
      if (!workflow) throw notFound('Workflow not found.');
    }
    if (typeof event !== 'object' || event === null) throw badRequest('The event must be a JSON object or array.');
    const now = nowIso();
    const run: WorkflowRun = { id: randomId(), workflow: workflow!.name, event, status: 'queued', steps: [], error: '', created: now, updated: now };
    // Stored before the 202: an accepted event is never lost, whatever happens next.
    await insertRun(db, run);
    this.runner.enqueue(dbName, run.id);
    return { id: run.id };
  }

  async runs(db: Database, name: string, query: Record<string, unknown>): Promise<Page<WorkflowRun>> {
    await this.get(db, name);
    const { page, perPage } = pagination(query);
    const { totalItems, items } = await listRuns(db, name, page, perPage);
    return { page, perPage, totalItems, totalPages: Math.ceil(totalItems / perPage), items };
  }

  async run(db: Database, name: string, id: string): Promise<WorkflowRun> {
    const run = await findRun(db, id);
    if (!run || run.workflow !== name) throw notFound('Workflow run not found.');
    return run;
  }
}
