import { badRequest } from '../errors.ts';
import { FilterError } from '../rules/index.ts';

export const DEFAULT_PER_PAGE = 30;
export const MAX_PER_PAGE = 500;

export interface ListQuery {
  page?: unknown;
  perPage?: unknown;
  sort?: unknown;
  filter?: unknown;
  expand?: unknown;
  fields?: unknown;
  skipTotal?: unknown;
  search?: unknown;
}

function text(v: unknown): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (Array.isArray(v)) return text(v[v.length - 1]);
  return String(v);
}

function integer(name: string, v: unknown): number | undefined {
  const t = text(v);
  if (t === undefined || t.trim() === '') return undefined;
  if (!/^-?\d{1,15}$/.test(t.trim())) throw badRequest(`The ${name} parameter must be an integer.`, { [name]: { code: 'validation_invalid_integer', message: 'Must be an integer.' } });
  return Number(t);
}

/** Page numbers below 1 read as 1; perPage below 1 reads as the default and above the maximum is clamped. */
export function pagination(query: ListQuery): { page: number; perPage: number } {
  const page = Math.max(1, integer('page', query.page) ?? 1);
  const requested = integer('perPage', query.perPage);
  const perPage = requested === undefined || requested < 1 ? DEFAULT_PER_PAGE : Math.min(requested, MAX_PER_PAGE);
  return { page, perPage };
}

export function param(v: unknown): string {
  return text(v) ?? '';
}

export function flag(v: unknown): boolean {
  const t = text(v);
  return t !== undefined && ['1', 'true', 'yes', 'on'].includes(t.toLowerCase());
}

/**
 * A filter or sort problem as a 400 whose message says where it is. `data` stays `{}`, as PocketBase
 * v0.39 answers it (a filter error is not a field's validation error there).
 */
export function filterProblem(err: unknown, parameter: 'filter' | 'sort'): unknown {
  if (!(err instanceof FilterError)) return err;
  return badRequest(`Invalid ${parameter}: ${err.describe()}.`);
}
