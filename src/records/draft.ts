import type { FieldError } from '../errors.ts';
import type { RecordJson } from './serialize.ts';

/**
 * Field errors that refuse a write whatever hooks make of it: what the caller asked for is not theirs
 * to ask (an admin-only field, an account change without the old password). Every other validation
 * error waits for the hooks, which may fix the value (a slug computed from a title, say).
 */
const REFUSALS = new Set(['validation_admin_only', 'validation_invalid_old_password']);

export function refusalsOf(errors: Record<string, FieldError>): Record<string, FieldError> | undefined {
  let out: Record<string, FieldError> | undefined;
  for (const [key, error] of Object.entries(errors)) {
    if (REFUSALS.has(error.code)) (out ??= {})[key] = error;
  }
  return out;
}

type Snapshot = { json: string } | unknown;

function snapshot(value: unknown): Snapshot {
  return typeof value === 'object' && value !== null ? { json: JSON.stringify(value) } : value;
}

function unchanged(before: Snapshot, now: unknown): boolean {
  if (typeof now === 'object' && now !== null) {
    return typeof before === 'object' && before !== null && 'json' in before && (before as { json: string }).json === JSON.stringify(now);
  }
  return Object.is(before, now);
}

/**
 * The record a write's hooks see before `next()`: the values about to be written, which they may
 * change (arrays and objects in place too). `changes` tells the write what they changed, so that
 * only those values are prepared again; `settle` makes it the stored record once written. It takes
 * `record` as it is (the write made it for this purpose) and notes its values as given.
 */
export class Draft {
  private readonly keys: string[];
  private readonly given: Snapshot[];

  /** A handler may also put another object here; its keys are compared with those given. */
  constructor(public record: Record<string, unknown>) {
    this.keys = Object.keys(record);
    this.given = this.keys.map((key) => snapshot(record[key]));
  }

  /** Keys hooks set or changed, with their values now. A deleted key is not a change. */
  changes(): Map<string, unknown> {
    const out = new Map<string, unknown>();
    const record = this.record;
    const now = Object.keys(record);
    // The common case: the same keys in the same order (objects keep insertion order).
    const sameKeys = now.length === this.keys.length && now.every((key, i) => key === this.keys[i]);
    for (let j = 0; j < now.length; j++) {
      const key = now[j];
      const i = sameKeys ? j : this.keys.indexOf(key);
      if (i < 0 || !unchanged(this.given[i], record[key])) out.set(key, record[key]);
    }
    return out;
  }

  /**
   * After the write: the stored record, in place (a handler may hold the object). Keys the stored
   * record lacks (one a hook added) go; the others are overwritten, which keeps the object's shape.
   */
  settle(stored: RecordJson): void {
    const record = this.record;
    for (const key of Object.keys(record)) if (!(key in stored)) delete record[key];
    for (const key of Object.keys(stored)) record[key] = stored[key];
  }
}
