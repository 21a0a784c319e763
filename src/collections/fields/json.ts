import { readInt } from './options.ts';
import { type FieldType, invalid, ok } from './types.ts';

const DEFAULT_MAX_SIZE = 2_000_000;

export const jsonField: FieldType = {
  name: 'json',
  kind: 'json',
  multiple: () => false,

  normalizeOptions(raw, problems) {
    return { maxSize: readInt(raw, 'maxSize', problems, { min: 1, fallback: DEFAULT_MAX_SIZE }) };
  },

  prepare(value, field) {
    if (value === undefined) return ok(null);
    const text = JSON.stringify(value);
    if (text === undefined) return invalid('validation_invalid_json', 'Must be a valid json value.');
    const maxSize = (field.options.maxSize as number | null) ?? DEFAULT_MAX_SIZE;
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
