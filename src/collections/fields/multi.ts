import type { FieldDef } from '../model.ts';

/** Turns an input into a de-duplicated list of strings, or undefined when it is not one. */
export function toStringList(value: unknown): string[] | undefined {
  if (value === undefined || value === null || value === '') return [];
  if (typeof value === 'string') return [value];
  if (!Array.isArray(value)) return undefined;
  const out: string[] = [];
  for (const item of value) {
    if (typeof item !== 'string') return undefined;
    if (item !== '' && !out.includes(item)) out.push(item);
  }
  return out;
}

/** Fields whose options carry `maxSelect` hold several values unless it is exactly 1. */
export function isMultiSelect(field: FieldDef): boolean {
  const max = field.options.maxSelect;
  return max === null || (typeof max === 'number' && max > 1);
}

export function listFromDb(raw: unknown): string[] {
  if (Array.isArray(raw)) return raw as string[];
  if (typeof raw !== 'string' || raw === '') return [];
  try {
    const parsed = JSON.parse(raw);
    if (Array.isArray(parsed)) return parsed.filter((v): v is string => typeof v === 'string');
    return typeof parsed === 'string' && parsed !== '' ? [parsed] : [];
  } catch {
    // A single value written before the field became multiple.
    return [raw];
  }
}

export function singleFromDb(raw: unknown): string {
  if (raw === null || raw === undefined) return '';
  return String(raw);
}
