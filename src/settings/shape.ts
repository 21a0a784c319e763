import type { FieldError } from '../errors.ts';
import type { SettingsSection } from './section.ts';
import { isPlainObject } from '../lib/objects.ts';

/**
 * The typed shape of a settings section kept in PocketBase's form (`smtp`, `s3`, `backups`, …). A
 * write binds onto the stored value as PocketBase's JSON decoding binds onto its settings struct: keys
 * present replace (objects merge key by key, lists are replaced whole), unknown keys and `null` change
 * nothing, a value of the wrong type is refused.
 */
export type Shape = 'bool' | 'int' | 'string' | { list: Shape } | { fields: Record<string, Shape> };

const TYPE_MESSAGE: Record<'bool' | 'int' | 'string', string> = {
  bool: 'Must be a boolean.',
  int: 'Must be a whole number.',
  string: 'Must be a string.',
};

/** A zero value of `shape` (what a list item starts from, as Go's zero struct). */
function zero(shape: Shape): unknown {
  if (shape === 'bool') return false;
  if (shape === 'int') return 0;
  if (shape === 'string') return '';
  if ('list' in shape) return [];
  return Object.fromEntries(Object.entries(shape.fields).map(([k, s]) => [k, zero(s)]));
}

/** `input` bound onto `current` at `path`; problems go to `errors` under dotted paths. */
export function bind(shape: Shape, input: unknown, current: unknown, path: string, errors: Record<string, FieldError>): unknown {
  if (input === null || input === undefined) return current;
  if (shape === 'bool' || shape === 'int' || shape === 'string') {
    const ok = shape === 'bool' ? typeof input === 'boolean' : shape === 'int' ? Number.isSafeInteger(input) : typeof input === 'string';
    if (ok) return input;
    errors[path] = { code: 'validation_invalid_value', message: TYPE_MESSAGE[shape] };
    return current;
  }
  if ('list' in shape) {
    if (!Array.isArray(input) || input.length > 1000) {
      errors[path] = { code: 'validation_invalid_value', message: 'Must be a list of at most 1000 items.' };
      return current;
    }
    return input.map((item, i) => bind(shape.list, item, zero(shape.list), `${path}.${i}`, errors));
  }
  if (!isPlainObject(input)) {
    errors[path] = { code: 'validation_invalid_object', message: 'Must be an object.' };
    return current;
  }
  const base = isPlainObject(current) ? current : (zero(shape) as Record<string, unknown>);
  const out: Record<string, unknown> = { ...base };
  for (const [key, fieldShape] of Object.entries(shape.fields)) {
    if (key in input) out[key] = bind(fieldShape, input[key], base[key] ?? zero(fieldShape), `${path}.${key}`, errors);
  }
  return out;
}

/** `value` without the keys at `secrets` (dotted paths): what GET shows, as PocketBase omits them. */
export function withoutSecrets<T>(value: T, secrets: readonly string[]): T {
  const copy = structuredClone(value) as Record<string, unknown>;
  for (const secret of secrets) {
    const keys = secret.split('.');
    let node: unknown = copy;
    for (const key of keys.slice(0, -1)) node = isPlainObject(node) ? node[key] : undefined;
    if (isPlainObject(node)) delete node[keys[keys.length - 1]];
  }
  return copy as T;
}

/**
 * A section stored in PocketBase's shape: `defaults` until something is written (an import, a PATCH),
 * `validate` adds PocketBase's problems of the bound value (keys relative to the section), `secrets`
 * never leave in an answer.
 */
export function shapedSection<T>(options: {
  name: string;
  shape: { fields: Record<string, Shape> };
  defaults: () => T;
  validate: (value: T, problem: (path: string, code: string, message: string) => void) => void;
  secrets?: readonly string[];
}): SettingsSection<T> {
  const { name, shape, validate, secrets = [] } = options;
  return {
    name,
    defaults: options.defaults,
    merge(input, current, errors) {
      const before = Object.keys(errors).length;
      const next = bind(shape, input, current ?? options.defaults(), name, errors) as T;
      if (Object.keys(errors).length > before) return current;
      validate(next, (path, code, message) => (errors[`${name}.${path}`] = { code, message }));
      return next;
    },
    view: (value) => withoutSecrets(value, secrets),
  };
}

/** PocketBase's `is.Host`: a domain name or an IP address. */
export function isHost(value: string): boolean {
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(value)) return value.split('.').every((p) => Number(p) <= 255);
  if (value.includes(':')) return /^[0-9a-f:]+$/i.test(value) && value.length <= 45;
  return value.length <= 253 && value.split('.').every((label) => /^[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9])?$/i.test(label));
}

/** PocketBase's `is.URL` for an endpoint: an absolute http(s) URL. */
export function isHttpUrl(value: string): boolean {
  try {
    const url = new URL(value);
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '';
  } catch {
    return false;
  }
}

/**
 * Dotted error paths as nested objects (`meta.appName` → `{meta: {appName: …}}`), the shape
 * PocketBase answers settings errors in.
 */
export function nestErrors(errors: Record<string, FieldError>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [path, error] of Object.entries(errors)) {
    const keys = path.split('.');
    let node = out;
    for (const key of keys.slice(0, -1)) {
      if (!isPlainObject(node[key]) || 'code' in (node[key] as object)) node[key] = {};
      node = node[key] as Record<string, unknown>;
    }
    node[keys[keys.length - 1]] = error;
  }
  return out;
}
