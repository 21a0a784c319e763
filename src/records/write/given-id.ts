import { relationTarget } from '../../collections/fields/relation.ts';
import type { Collection } from '../../collections/model.ts';
import type { CollectionSet } from '../../collections/service.ts';
import type { FieldError } from '../../errors.ts';
import { isRecordId, recordIdError } from '../../lib/ids.ts';
import type { RecordShape } from '../shape.ts';

/**
 * A record id a client (or a hook) gives, checked as PocketBase checks it against the collection's
 * `id` field (core/field_text.go): by default 15 lower-case letters and digits; a collection whose
 * `id` field PocketBase described otherwise (`min`, `max`, `pattern` in `options.systemFields`: an
 * import, or a client that sent the whole `fields` list) takes what that field takes. As PocketBase,
 * with a pattern other than the default an id may not hold characters that are unsafe in a path
 * (`.`, `/`, `\`, quotes, whitespace, …) nor be a reserved device name: the id names the record's
 * folder of files.
 */

const DEFAULT_PATTERN = '^[a-z0-9]+$';
/** PocketBase's limit when the field's `max` is 0. */
const DEFAULT_MAX = 5000;
const FORBIDDEN_CHARACTERS = ['.', '/', '\\', '|', '"', "'", '`', '<', '>', ':', '?', '*', '%', '$', '\0', '\t', '\n', '\r', ' '];
const RESERVED = new Set(['CON', 'PRN', 'AUX', 'NUL', ...[1, 2, 3, 4, 5, 6, 7, 8, 9].flatMap((n) => [`COM${n}`, `LPT${n}`])]);

interface IdRule {
  min: number;
  max: number;
  pattern: string;
  regex: RegExp;
}

export interface IdError {
  code: string;
  message: string;
}

// One rule per stored description (an array replaced, never changed, with the collection's options).
const rules = new WeakMap<object, IdRule | null>();

/** The collection's own rule, or null for PocketBase's default (15 lower-case letters and digits). */
function ruleOf(collection: Collection): IdRule | null {
  const system = collection.options.systemFields;
  if (!Array.isArray(system)) return null;
  let rule = rules.get(system);
  if (rule !== undefined) return rule;
  rule = null;
  const described = (system as unknown[]).find((f): f is Record<string, unknown> => typeof f === 'object' && f !== null && (f as { name?: unknown }).name === 'id');
  if (described !== undefined) {
    const num = (v: unknown) => (typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : 0);
    const min = num(described.min);
    const max = num(described.max) || DEFAULT_MAX;
    const pattern = typeof described.pattern === 'string' && described.pattern !== '' ? described.pattern : DEFAULT_PATTERN;
    if (!(min === 15 && max === 15 && pattern === DEFAULT_PATTERN)) {
      try {
        rule = { min, max, pattern, regex: new RegExp(pattern, 'u') };
      } catch {
        // A pattern JavaScript does not read (Go's syntax differs at the edges): PocketBase's default.
      }
    }
  }
  rules.set(system, rule);
  return rule;
}

/** Why `value` is refused as the id of a new record of `collection`, or undefined when it is kept. */
export function givenIdError(collection: Collection, value: unknown): IdError | undefined {
  const rule = ruleOf(collection);
  if (rule === null) return isRecordId(value) ? undefined : recordIdError(value);
  if (typeof value !== 'string' || value === '') return { code: 'validation_required', message: 'Cannot be blank.' };
  const length = [...value].length;
  if (length < rule.min) return { code: 'validation_min_text_constraint', message: `Must be at least ${rule.min} character(s).` };
  if (length > rule.max) return { code: 'validation_max_text_constraint', message: `Must be no more than ${rule.max} character(s).` };
  if (!rule.regex.test(value)) return { code: 'validation_invalid_format', message: 'Invalid value format.' };
  if (rule.pattern !== DEFAULT_PATTERN) {
    const ch = FORBIDDEN_CHARACTERS.find((c) => value.includes(c));
    if (ch !== undefined) return { code: 'validation_forbidden_pk_character', message: `'${ch}' is not a valid primary key character.` };
    if (RESERVED.has(value.toUpperCase())) return { code: 'validation_reserved_pk', message: `The primary key '${value.toUpperCase()}' is reserved and cannot be used.` };
  }
  return undefined;
}

/**
 * Relation values that no record of their target can have (an id the target's id field refuses),
 * as PocketBase's missing-records error. Found without a query, so they are reported with the other
 * fields' problems, as PocketBase reports them; ids that could exist are looked up in the write's
 * transaction (statement.ts). A view's ids are whatever its query gives.
 */
export function relationIdErrors(collections: CollectionSet, shape: RecordShape, values: Map<string, unknown>, errors: Record<string, FieldError>, input?: Record<string, unknown>): void {
  // An update checks only what it sends (`rel`, `rel+`, `+rel`, `rel-`): a stored value stays valid.
  const sent = input === undefined ? undefined : new Set(Object.keys(input).map((k) => k.replace(/^\+|[+-]$/g, '')));
  for (const f of shape.fields) {
    if (f.field.type !== 'relation' || errors[f.name] !== undefined || !values.has(f.name) || (sent !== undefined && !sent.has(f.name))) continue;
    const value = values.get(f.name);
    const ids = Array.isArray(value) ? (value as unknown[]) : value ? [value] : [];
    if (ids.every(isRecordId)) continue;
    const target = collections.find(relationTarget(f.field));
    if (target === undefined || target.type === 'view') continue;
    if (ids.some((id) => givenIdError(target, id) !== undefined)) {
      errors[f.name] = { code: 'validation_missing_rel_records', message: 'Failed to find all relation records with the provided ids.' };
    }
  }
}
