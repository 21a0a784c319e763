import { type FieldType, invalid, ok } from './types.ts';

const TRUE_TEXT = new Set(['true', '1', 'on', 'yes']);
const FALSE_TEXT = new Set(['false', '0', 'off', 'no', '']);

export const boolField: FieldType = {
  name: 'bool',
  kind: 'bool',
  multiple: () => false,
  normalizeOptions: () => ({}),

  prepare(value) {
    if (value === undefined || value === null) return ok(false);
    if (typeof value === 'boolean') return ok(value);
    if (value === 1 || value === 0) return ok(value === 1);
    if (typeof value === 'string') {
      const text = value.trim().toLowerCase();
      if (TRUE_TEXT.has(text)) return ok(true);
      if (FALSE_TEXT.has(text)) return ok(false);
    }
    return invalid('validation_invalid_bool', 'Must be a boolean.');
  },

  zero: () => false,
  // As in PocketBase, a required bool must be true.
  isEmpty: (value) => value !== true,
  toDb: (value) => (value ? 1 : 0),
  fromDb: (raw) => raw === 1 || raw === true || raw === '1' || raw === 'true',
};
