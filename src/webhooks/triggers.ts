import type { Collection } from '../collections/model.ts';
import type { FieldError } from '../errors.ts';
import type { OutboundPolicy } from '../lib/outbound.ts';
import { checkHeaders, checkMethod, checkSecret, checkUrl, type Problems, type Target } from './target.ts';
import { isPlainObject } from '../lib/objects.ts';

export type TriggerAction = 'create' | 'update' | 'delete';

/** One element of a collection's `options.triggers` (API contract §7), normalized. */
export interface Trigger extends Target {
  action: TriggerAction;
  enabled: boolean;
}

const ACTIONS: readonly TriggerAction[] = ['create', 'update', 'delete'];
/** A trigger carries the record in its body, so only methods with a body make sense. */
export const TRIGGER_METHODS = ['POST', 'PUT', 'PATCH', 'DELETE'] as const;
const MAX_TRIGGERS = 50;

function parseTrigger(raw: unknown, problems: Problems, outbound?: OutboundPolicy): Trigger | undefined {
  if (!isPlainObject(raw)) {
    problems[''] = { code: 'validation_invalid_trigger', message: 'Must be an object {action, url, method}.' };
    return undefined;
  }
  const action = raw.action;
  if (typeof action !== 'string' || !ACTIONS.includes(action as TriggerAction)) {
    problems.action = { code: 'validation_invalid_action', message: `Must be one of ${ACTIONS.join(', ')}.` };
  }
  const url = checkUrl(raw.url, problems, 'url', outbound);
  const method = checkMethod(raw.method, TRIGGER_METHODS, problems);
  const headers = checkHeaders(raw.headers, problems);
  const secret = checkSecret(raw.secret, problems);
  if (raw.enabled !== undefined && raw.enabled !== null && typeof raw.enabled !== 'boolean') {
    problems.enabled = { code: 'validation_invalid_value', message: 'Must be a boolean.' };
  }
  if (Object.keys(problems).length > 0) return undefined;
  return { action: action as TriggerAction, url: url!, method: method!, headers: headers!, secret: secret!, enabled: raw.enabled !== false };
}

/**
 * The collections `validateOptions` hook: checks `options.triggers` on create and PATCH. Problems
 * are reported per trigger and property, as field problems are: `{triggers: {0: {url: …}}}`.
 * `outbound` refuses URLs to link-local and metadata hosts (see checkUrl); stored triggers are read
 * without it (`triggersOf`), so an allow list narrowed later stops their deliveries, not their loading.
 */
export function validateTriggers(collection: Collection, outbound?: OutboundPolicy): Record<string, FieldError> | undefined {
  const raw = collection.options.triggers;
  if (raw === undefined || raw === null) return undefined;
  if (!Array.isArray(raw)) return { triggers: { code: 'validation_invalid_triggers', message: 'Must be a list of triggers.' } };
  if (raw.length > MAX_TRIGGERS) return { triggers: { code: 'validation_invalid_triggers', message: `At most ${MAX_TRIGGERS} triggers.` } };
  const byIndex: Record<string, Problems> = {};
  raw.forEach((t, i) => {
    const problems: Problems = {};
    parseTrigger(t, problems, outbound);
    if (Object.keys(problems).length > 0) byIndex[i] = problems;
  });
  if (Object.keys(byIndex).length === 0) return undefined;
  // Nested like field errors; the hook's type names only the top level.
  return { triggers: byIndex as unknown as FieldError };
}

const cache = new WeakMap<Collection, Trigger[]>();

/** The enabled triggers of a collection. Collections are immutable and replaced on change, so the
 * parsed list is cached per collection object. */
export function triggersOf(collection: Collection): Trigger[] {
  let triggers = cache.get(collection);
  if (!triggers) {
    triggers = [];
    const raw = collection.options.triggers;
    // Stored triggers passed validation; anything else (a hand-edited table) is skipped, not fatal.
    for (const t of Array.isArray(raw) ? raw : []) {
      const parsed = parseTrigger(t, {});
      if (parsed?.enabled) triggers.push(parsed);
    }
    cache.set(collection, triggers);
  }
  return triggers;
}

/** Whether a change of `action` in `collection` queues a webhook event (in the record's transaction). */
export function writesFor(collection: Collection, action: string): boolean {
  return triggersOf(collection).some((t) => t.action === action);
}
