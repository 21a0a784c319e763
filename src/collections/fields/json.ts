import { readInt } from './options.ts';
import { type FieldType, invalid, ok } from './types.ts';

const DEFAULT_MAX_SIZE = 2_000_000;
/** Deepest nesting accepted: SQLite's JSON functions refuse values nested over 1000 levels, and
 * serializing very deep values would exhaust the stack. */
export const MAX_JSON_DEPTH = 500;

/** Whether a parsed JSON value nests deeper than `limit` (iterative, so any depth is safe to check). */
function nestsDeeperThan(value: unknown, limit: number): boolean {
  const stack: Array<[unknown, number]> = [[value, 0]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v !== 'object' || v === null) continue;
    if (depth >= limit) return true;
    for (const child of Array.isArray(v) ? v : Object.values(v)) stack.push([child, depth + 1]);
  }
  return false;
}

export const jsonField: FieldType = {
  name: 'json',
  kind: 'json',
  multiple: () => false,

  normalizeOptions(raw, problems) {
    return { maxSize: readInt(raw, 'maxSize', problems, { min: 0, fallback: DEFAULT_MAX_SIZE }) };
  },

  prepare(value, field) {
    if (value === undefined) return ok(null);
    if (nestsDeeperThan(value, MAX_JSON_DEPTH)) return invalid('validation_invalid_json', `Must be nested no deeper than ${MAX_JSON_DEPTH} levels.`);
    const text = JSON.stringify(value);
    if (text === undefined) return invalid('validation_invalid_json', 'Must be a valid json value.');
    // 0 is PocketBase's "the default".
    const maxSize = (field.options.maxSize as number | null) || DEFAULT_MAX_SIZE;
    if (Buffer.byteLength(text) > maxSize) return invalid('validation_json_size_limit', `Must be no more than ${maxSize} bytes.`);
    return ok(value);
  },

  zero: () => null,
  // PocketBase's notion of an empty JSON value.
  isEmpty: (value) =>
    value === null ||
    value === undefined ||
    value === '' ||
    (Array.isArray(value) && value.length === 0) ||
    (typeof value === 'object' && value !== null && Object.keys(value).length === 0),
  toDb: (value) => (value === null || value === undefined ? null : JSON.stringify(value)),
  fromDb(raw) {
    if (raw === null || raw === undefined) return null;
    if (typeof raw !== 'string') return raw;
    try {
      return JSON.parse(raw);
    } catch {
      // A column adopted from data Cairn did not write.
      return raw;
    }
  },
};
