import type { OptionProblems } from './types.ts';

/** Small readers for field options: each returns the value or the fallback and records a problem. */

export function readInt(
  raw: Record<string, unknown>,
  key: string,
  problems: OptionProblems,
  opts: { min?: number; nullable?: boolean; fallback?: number | null } = {},
): number | null {
  const v = raw[key];
  if (v === undefined || v === null || v === '') {
    return opts.fallback === undefined ? null : opts.fallback;
  }
  if (typeof v !== 'number' || !Number.isInteger(v) || (opts.min !== undefined && v < opts.min)) {
    problems.set(key, `Must be an integer${opts.min !== undefined ? ` of at least ${opts.min}` : ''}.`);
    return null;
  }
  return v;
}

export function readNumber(raw: Record<string, unknown>, key: string, problems: OptionProblems): number | null {
  const v = raw[key];
  if (v === undefined || v === null || v === '') return null;
  if (typeof v !== 'number' || !Number.isFinite(v)) {
    problems.set(key, 'Must be a number.');
    return null;
  }
  return v;
}

export function readBool(raw: Record<string, unknown>, key: string, problems: OptionProblems, fallback = false): boolean {
  const v = raw[key];
  if (v === undefined || v === null) return fallback;
  if (typeof v !== 'boolean') {
    problems.set(key, 'Must be a boolean.');
    return fallback;
  }
  return v;
}

export function readString(raw: Record<string, unknown>, key: string, problems: OptionProblems): string {
  const v = raw[key];
  if (v === undefined || v === null) return '';
  if (typeof v !== 'string') {
    problems.set(key, 'Must be a string.');
    return '';
  }
  return v;
}

export function readStringList(raw: Record<string, unknown>, key: string, problems: OptionProblems): string[] {
  const v = raw[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v) || v.some((item) => typeof item !== 'string' || item === '')) {
    problems.set(key, 'Must be a list of non-empty strings.');
    return [];
  }
  return [...new Set(v as string[])];
}

export function checkMinMax(min: number | null, max: number | null, problems: OptionProblems): void {
  if (min !== null && max !== null && min > max) problems.set('max', 'Must not be less than min.');
}
