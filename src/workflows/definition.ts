import type { CollectionSet } from '../collections/service.ts';
import { type FieldError, validationFailed } from '../errors.ts';
import { randomSecret } from '../lib/ids.ts';
import type { OutboundPolicy } from '../lib/outbound.ts';
import { checkHeaders, checkMethod, checkSecret, checkUrl, type Problems, type Target } from '../webhooks/target.ts';
import { TRIGGER_METHODS } from '../webhooks/triggers.ts';
import { isPlainObject } from '../lib/objects.ts';

export interface CreateRecordStep {
  type: 'create_record';
  collection: string;
  /** The record's values; strings may hold `{{event.path}}` placeholders. */
  data: Record<string, unknown>;
}

export interface WebhookStep extends Target {
  type: 'webhook';
  /** The request body (with placeholders); absent sends the default workflow body. */
  body?: unknown;
}

export type Step = CreateRecordStep | WebhookStep;

export interface WorkflowDefinition {
  name: string;
  steps: Step[];
  /** The secret in clear: shown once in the creation answer, stored only as a hash. */
  secret: string;
}

export const WORKFLOW_NAME = /^[A-Za-z0-9_-]{1,100}$/;
const MAX_STEPS = 20;
const SECRET_TEXT = /^[\x21-\x7e]{16,200}$/;

function parseStep(raw: unknown, collections: CollectionSet, problems: Problems, outbound?: OutboundPolicy): Step | undefined {
  if (!isPlainObject(raw)) {
    problems.type = { code: 'validation_invalid_step', message: 'Must be an object with a `type`.' };
    return undefined;
  }
  if (raw.type === 'create_record') {
    const target = typeof raw.collection === 'string' ? collections.find(raw.collection) : undefined;
    if (!target || target.type === 'view') problems.collection = { code: 'validation_invalid_collection', message: 'Must name an existing collection that is not a view.' };
    if (!isPlainObject(raw.data)) problems.data = { code: 'validation_invalid_data', message: 'Must be an object of field values (placeholders like {{event.path}} allowed).' };
    if (Object.keys(problems).length > 0) return undefined;
    return { type: 'create_record', collection: target!.name, data: raw.data as Record<string, unknown> };
  }
  if (raw.type === 'webhook') {
    const url = checkUrl(raw.url, problems, 'url', outbound);
    const method = checkMethod(raw.method, TRIGGER_METHODS, problems);
    const headers = checkHeaders(raw.headers, problems);
    const secret = checkSecret(raw.secret, problems);
    if (Object.keys(problems).length > 0) return undefined;
    const step: WebhookStep = { type: 'webhook', url: url!, method: method!, headers: headers!, secret: secret! };
    if (raw.body !== undefined && raw.body !== null) step.body = raw.body;
    return step;
  }
  problems.type = { code: 'validation_invalid_step', message: 'Must be "create_record" or "webhook".' };
  return undefined;
}

/** Validates `POST /api/workflows {name, secret?, steps}`; 400 with one entry per problem. `outbound`:
 * where a webhook step's URL may not point (see webhooks/target.ts checkUrl). */
export function parseDefinition(body: unknown, collections: CollectionSet, outbound?: OutboundPolicy): WorkflowDefinition {
  if (!isPlainObject(body)) throw validationFailed({}, 'The request body must be a JSON object.');
  const errors: Record<string, unknown> = {};
  if (typeof body.name !== 'string' || !WORKFLOW_NAME.test(body.name)) {
    errors.name = { code: 'validation_invalid_name', message: 'Must be 1-100 letters, digits, "_" or "-".' };
  }
  let secret = randomSecret();
  if (body.secret !== undefined && body.secret !== null && body.secret !== '') {
    if (typeof body.secret !== 'string' || !SECRET_TEXT.test(body.secret)) {
      errors.secret = { code: 'validation_invalid_secret', message: 'Must be 16 to 200 visible ASCII characters without spaces.' };
    } else secret = body.secret;
  }
  const steps: Step[] = [];
  if (!Array.isArray(body.steps) || body.steps.length === 0 || body.steps.length > MAX_STEPS) {
    errors.steps = { code: 'validation_invalid_steps', message: `Must be a list of 1 to ${MAX_STEPS} steps.` };
  } else {
    const byIndex: Record<string, Problems> = {};
    body.steps.forEach((raw, i) => {
      const problems: Problems = {};
      const step = parseStep(raw, collections, problems, outbound);
      if (step) steps.push(step);
      else byIndex[i] = problems;
    });
    if (Object.keys(byIndex).length > 0) errors.steps = byIndex;
  }
  if (Object.keys(errors).length > 0) throw validationFailed(errors as Record<string, FieldError>, 'Failed to create the workflow.');
  return { name: body.name as string, steps, secret };
}
