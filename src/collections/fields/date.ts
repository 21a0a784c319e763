import { normalizeDate } from '../../lib/time.ts';
import { textField } from './text.ts';
import { type FieldType, invalid, ok, type OptionProblems } from './types.ts';

function readDate(raw: Record<string, unknown>, key: string, problems: OptionProblems): string {
  const v = raw[key];
  if (v === undefined || v === null || v === '') return '';
  const normalized = typeof v === 'string' ? normalizeDate(v) : undefined;
  if (normalized === undefined) {
    problems.set(key, 'Must be a date such as 2024-01-31 12:00:00.000Z.');
    return '';
  }
  return normalized;
}

export const dateField: FieldType = {
  ...textField,
  name: 'date',

  normalizeOptions(raw, problems) {
    const min = readDate(raw, 'min', problems);
    const max = readDate(raw, 'max', problems);
    if (min && max && min > max) problems.set('max', 'Must not be before min.');
    return { min, max };
  },

  prepare(value, field) {
    if (value === undefined || value === null || value === '') return ok('');
    const date = typeof value === 'string' ? normalizeDate(value) : value instanceof Date ? value.toISOString() : undefined;
    if (date === undefined) return invalid('validation_invalid_date', 'Must be a valid date.');
    const { min, max } = field.options as { min: string; max: string };
    if (min && date < min) return invalid('validation_min_date_constraint', `Must be no earlier than ${min}.`);
    if (max && date > max) return invalid('validation_max_date_constraint', `Must be no later than ${max}.`);
    return ok(date);
  },
};
