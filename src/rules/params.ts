import { FilterError } from './errors.ts';

const PLACEHOLDER = /\{:([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** A value as a literal of the filter language. */
function literal(name: string, value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'boolean') return String(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new FilterError(`parameter {:${name}} is not a finite number`, 0);
    return String(value);
  }
  if (typeof value === 'bigint') return value.toString();
  const text = value instanceof Date ? value.toISOString().replace('T', ' ') : typeof value === 'string' ? value : JSON.stringify(value);
  // The lexer reads backslash escapes of the quote and of the backslash itself.
  return `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

/**
 * Replaces the `{:name}` placeholders of a filter with `params`' values as literals, as the
 * PocketBase SDK's `pb.filter` does: strings quoted and escaped, so a value can never be read as
 * filter syntax (it then becomes a bound SQL parameter like any literal). An unknown name is an
 * error rather than text left in the filter.
 */
export function bindFilterParams(filter: string, params: Record<string, unknown> | undefined): string {
  if (!filter.includes('{:')) return filter;
  return filter.replace(PLACEHOLDER, (_match, name: string, offset: number) => {
    if (params === undefined || !Object.prototype.hasOwnProperty.call(params, name)) throw new FilterError(`no value for the parameter {:${name}}`, offset);
    return literal(name, params[name]);
  });
}
