import { nowIso } from '../../lib/time.ts';
import { dateField } from './date.ts';
import { readBool } from './options.ts';
import type { FieldDef } from '../model.ts';
import type { FieldType } from './types.ts';

/**
 * PocketBase ≥ 0.23's `autodate`: a date Cairn sets itself, when the record is created (`onCreate`)
 * and/or each time it is updated (`onUpdate`); what a client sends for it is ignored, as PocketBase
 * ignores it. (A collection's own `created` and `updated` are system columns, not fields.)
 */
export const autodateField: FieldType = {
  ...dateField,
  name: 'autodate',
  normalizeOptions(raw, problems) {
    return { onCreate: readBool(raw, 'onCreate', problems), onUpdate: readBool(raw, 'onUpdate', problems) };
  },
};

/** The value an autodate field gets on a create (`creating`) or an update; undefined leaves it as it is. */
export function autodateStamp(field: FieldDef, creating: boolean): string | undefined {
  if (creating) return field.options.onCreate === true || field.options.onUpdate === true ? nowIso() : '';
  return field.options.onUpdate === true ? nowIso() : undefined;
}
