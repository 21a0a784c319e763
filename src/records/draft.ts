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
 * only those values are prepared again; `settle` makes it the stored record once written.
 */
export class Draft {
  readonly record: Record<string, unknown> = {};
  private readonly given = new Map<string, Snapshot>();

  constructor(values: Record<string, unknown>) {
    for (const key of Object.keys(values)) {
      this.record[key] = values[key];
      this.given.set(key, snapshot(values[key]));
    }
  }

  /** Keys hooks set or changed, with their values now. A deleted key is not a change. */
  changes(): Map<string, unknown> {
    const out = new Map<string, unknown>();
    for (const key of Object.keys(this.record)) {
      const now = this.record[key];
      if (!this.given.has(key) || !unchanged(this.given.get(key), now)) out.set(key, now);
    }
    return out;
  }

  /** After the write: the stored record, in place (a handler may hold the object). */
  settle(stored: RecordJson): void {
    for (const key of Object.keys(this.record)) delete this.record[key];
    Object.assign(this.record, stored);
  }
}
