import { checkMinMax, readBool, readNumber } from './options.ts';
import { type FieldType, invalid, ok } from './types.ts';

function toNumber(value: unknown): number | undefined {
  if (value === undefined || value === null || value === '') return 0;
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value === 'string' && value.trim() !== '') {
    const n = Number(value);
    return Number.isFinite(n) ? n : undefined;
  }
  return undefined;
}

export const numberField: FieldType = {
  name: 'number',
  kind: 'number',
  multiple: () => false,

  normalizeOptions(raw, problems) {
    const min = readNumber(raw, 'min', problems);
    const max = readNumber(raw, 'max', problems);
    checkMinMax(min, max, problems);
    return { min, max, noDecimal: readBool(raw, 'noDecimal', problems) };
  },

  prepare(value, field) {
    const n = toNumber(value);
    if (n === undefined) return invalid('validation_invalid_number', 'Must be a valid number.');
    if (n === 0) return ok(0);
    const { min, max, noDecimal } = field.options as { min: number | null; max: number | null; noDecimal: boolean };
    if (noDecimal && !Number.isInteger(n)) return invalid('validation_no_decimal_constraint', 'Decimal numbers are not allowed.');
    if (min !== null && n < min) return invalid('validation_min_number_constraint', `Must be larger than ${min}.`);
    if (max !== null && n > max) return invalid('validation_max_number_constraint', `Must be less than ${max}.`);
    return ok(n);
  },

  zero: () => 0,
  isEmpty: (value) => value === 0 || value === null || value === undefined,
  toDb: (value) => value ?? 0,
  fromDb: (raw) => (typeof raw === 'number' ? raw : Number(raw ?? 0) || 0),
};
