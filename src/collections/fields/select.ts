import { readInt, readStringList } from './options.ts';
import { isMultiSelect, listFromDb, singleFromDb, toStringList } from './multi.ts';
import { type FieldType, invalid, ok } from './types.ts';

export const selectField: FieldType = {
  name: 'select',
  kind: 'text',
  multiple: isMultiSelect,

  normalizeOptions(raw, problems) {
    const values = readStringList(raw, 'values', problems);
    if (values.length === 0 && !problems.has('values')) problems.set('values', 'Must list at least one value.');
    const maxSelect = readInt(raw, 'maxSelect', problems, { min: 1, fallback: 1 });
    return { maxSelect, values };
  },

  prepare(value, field) {
    const list = toStringList(value);
    if (list === undefined) return invalid('validation_invalid_value', 'Must be a string or a list of strings.');
    const { values, maxSelect } = field.options as { values: string[]; maxSelect: number | null };
    const bad = list.find((v) => !values.includes(v));
    if (bad !== undefined) return invalid('validation_invalid_value', `Invalid value ${JSON.stringify(bad)}.`);
    if (!isMultiSelect(field)) {
      if (list.length > 1) return invalid('validation_too_many_values', 'Select no more than 1.');
      return ok(list[0] ?? '');
    }
    if (maxSelect !== null && list.length > maxSelect) return invalid('validation_too_many_values', `Select no more than ${maxSelect}.`);
    return ok(list);
  },

  zero: (field) => (isMultiSelect(field) ? [] : ''),
  isEmpty: (value) => value === '' || value === null || value === undefined || (Array.isArray(value) && value.length === 0),
  toDb: (value, field) => (isMultiSelect(field) ? JSON.stringify(value ?? []) : (value ?? '')),
  fromDb: (raw, field) => (isMultiSelect(field) ? listFromDb(raw) : singleFromDb(raw)),
};
