import { RE2JS } from 're2js';
import { checkMinMax, readBool, readInt, readString } from './options.ts';
import { type FieldType, invalid, ok } from './types.ts';

/** Coerces scalars to text the way form posts and loosely typed clients send them. */
export function textInput(value: unknown): string | undefined {
  if (value === undefined || value === null) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

/**
 * `pattern` is a Go (RE2) regular expression, as in PocketBase, matched with RE2's linear-time engine:
 * JavaScript's backtracking engine took minutes on a 40-character value for a pattern like
 * `^(a+)+$`, so one guest request could stall the server. A stored pattern RE2 cannot compile
 * (saved before) fails every non-empty value rather than being skipped.
 */
const patternCache = new Map<string, RE2JS | null>();

function compiledPattern(source: string): RE2JS | null {
  let re = patternCache.get(source);
  if (re === undefined) {
    try {
      re = RE2JS.compile(source);
    } catch {
      re = null;
    }
    patternCache.set(source, re);
  }
  return re;
}

export const textField: FieldType = {
  name: 'text',
  kind: 'text',
  multiple: () => false,

  normalizeOptions(raw, problems) {
    const min = readInt(raw, 'min', problems, { min: 0 });
    const max = readInt(raw, 'max', problems, { min: 0 });
    checkMinMax(min, max, problems);
    const pattern = readString(raw, 'pattern', problems);
    if (pattern && !compiledPattern(pattern)) {
      problems.set('pattern', 'Must be a valid RE2 (Go) regular expression; lookarounds and backreferences are not supported.');
    }
    return { min, max, pattern };
  },

  prepare(value, field) {
    const text = textInput(value);
    if (text === undefined) return invalid('validation_invalid_value', 'Must be a string.');
    if (text === '') return ok(text);
    const { min, max, pattern } = field.options as { min: number | null; max: number | null; pattern: string };
    const length = [...text].length;
    if (min !== null && length < min) return invalid('validation_min_text_constraint', `Must be at least ${min} character(s).`);
    if (max !== null && max > 0 && length > max) {
      return invalid('validation_max_text_constraint', `Must be no more than ${max} character(s).`);
    }
    if (pattern && !compiledPattern(pattern)?.matcher(text).find()) return invalid('validation_invalid_format', 'Invalid value format.');
    return ok(text);
  },

  zero: () => '',
  isEmpty: (value) => value === '' || value === null || value === undefined,
  toDb: (value) => value ?? '',
  fromDb: (raw) => (raw === null || raw === undefined ? '' : String(raw)),
};

export const editorField: FieldType = {
  ...textField,
  name: 'editor',
  normalizeOptions(raw, problems) {
    return { convertUrls: readBool(raw, 'convertUrls', problems) };
  },
  prepare(value) {
    const text = textInput(value);
    return text === undefined ? invalid('validation_invalid_value', 'Must be a string.') : ok(text);
  },
};

