import { patternGenerator } from '../../lib/random-pattern.ts';
import { RE2JS } from 're2js';
import type { FieldDef } from '../model.ts';
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
    // PocketBase's: a value made on create when none is given (`users[0-9]{5}`), see `generatedText`.
    const autogeneratePattern = readString(raw, 'autogeneratePattern', problems);
    if (autogeneratePattern && !compiledPattern(autogeneratePattern)) problems.set('autogeneratePattern', 'Must be a valid RE2 (Go) regular expression.');
    return autogeneratePattern ? { min, max, pattern, autogeneratePattern } : { min, max, pattern };
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
    const convertUrls = readBool(raw, 'convertUrls', problems) || readBool(raw, 'convertURLs', problems);
    const maxSize = readInt(raw, 'maxSize', problems, { min: 0 });
    return maxSize ? { convertUrls, maxSize } : { convertUrls };
  },
  prepare(value, field) {
    const text = textInput(value);
    if (text === undefined) return invalid('validation_invalid_value', 'Must be a string.');
    const maxSize = field.options.maxSize as number | undefined;
    if (maxSize && Buffer.byteLength(text) > maxSize) return invalid('validation_max_text_constraint', `Must be no more than ${maxSize} bytes.`);
    return ok(text);
  },
};


const generators = new Map<string, { gen(): string } | null>();

/**
 * A value for a text field left empty on create, made from its `autogeneratePattern` (PocketBase's
 * `users[0-9]{5}`, `[a-z0-9]{15}`), with the system's secure random numbers; undefined without a
 * pattern. Repetitions without a bound (`+`, `*`) make at most 10 characters.
 */
export function generatedText(field: FieldDef): string | undefined {
  const pattern = field.type === 'text' ? field.options.autogeneratePattern : undefined;
  if (typeof pattern !== 'string' || pattern === '') return undefined;
  let generator = generators.get(pattern);
  if (generator === undefined) {
    try {
      generator = patternGenerator(pattern);
    } catch {
      generator = null;
    }
    if (generators.size > 1000) generators.clear();
    generators.set(pattern, generator);
  }
  return generator?.gen();
}
