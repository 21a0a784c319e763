import type { Collection, RuleName } from '../../collections/model.ts';
import type { CollectionService } from '../../collections/service.ts';
import { badRequest, type FieldError, validationFailed } from '../../errors.ts';
import type { Database } from '../../storage/index.ts';
import { checkRule } from './rule-access.ts';

/** The spec's access-rule resource: a collection's five rules under their short names. */
export interface RulesJson {
  collection: string;
  list: string | null;
  view: string | null;
  create: string | null;
  update: string | null;
  delete: string | null;
}

const KEYS = new Map<string, RuleName>([
  ['list', 'listRule'],
  ['view', 'viewRule'],
  ['create', 'createRule'],
  ['update', 'updateRule'],
  ['delete', 'deleteRule'],
]);

export function rulesOf(collection: Collection): RulesJson {
  return {
    collection: collection.name,
    list: collection.listRule,
    view: collection.viewRule,
    create: collection.createRule,
    update: collection.updateRule,
    delete: collection.deleteRule,
  };
}

/**
 * Replaces the rules named in `body` (`{list, view, create, update, delete}`, each `null`, `""` or an
 * expression; a key left out keeps its rule). Every rule is compiled first: one invalid rule is a 400
 * naming it and its position, and nothing changes.
 */
export async function updateRules(collections: CollectionService, db: Database, name: string, body: unknown): Promise<RulesJson> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('The request body must be a JSON object.');
  const existing = await collections.get(db, name);
  const set = await collections.all(db);
  const errors: Record<string, FieldError> = {};
  const patch: Partial<Record<RuleName, string | null>> = {};
  const problems: string[] = [];
  for (const [key, value] of Object.entries(body as Record<string, unknown>)) {
    const ruleName = KEYS.get(key);
    if (!ruleName) {
      if (key === 'collection' && value === existing.name) continue;
      errors[key] = { code: 'validation_unknown_rule', message: 'Rules are list, view, create, update and delete.' };
      problems.push(`unknown rule "${key}"`);
      continue;
    }
    if (value !== null && typeof value !== 'string') {
      errors[key] = { code: 'validation_invalid_rule', message: 'Must be null (administrators only), "" (everyone) or a filter expression.' };
      problems.push(`the ${key} rule must be null or a string`);
      continue;
    }
    if (typeof value === 'string' && value.trim() !== '') {
      const problem = checkRule(existing, value, set.list, db.dialect);
      if (problem) {
        errors[key] = { code: 'validation_invalid_rule', message: problem };
        problems.push(`invalid ${key} rule: ${problem}`);
        continue;
      }
    }
    patch[ruleName] = value;
  }
  if (problems.length > 0) {
    const message = problems[0].charAt(0).toUpperCase() + problems[0].slice(1);
    throw validationFailed(errors, `${message}${problems.length > 1 ? ` (and ${problems.length - 1} more)` : ''}.`);
  }
  return rulesOf(await collections.update(db, existing.name, patch));
}
