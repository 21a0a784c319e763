import { isRecordKey } from '../../lib/ids.ts';
import type { FieldDef } from '../model.ts';
import { readBool, readInt, readString, readStringList } from './options.ts';
import { isMultiSelect, listFromDb, singleFromDb, toStringList } from './multi.ts';
import { type FieldType, invalid, ok } from './types.ts';

/** The target collection's name. Options keep `toCollection` (the spec's form) and `collectionId`. */
export function relationTarget(field: FieldDef): string {
  return field.options.toCollection as string;
}

export const relationField: FieldType = {
  name: 'relation',
  kind: 'text',
  multiple: isMultiSelect,

  normalizeOptions(raw, problems) {
    // Whether the target exists is checked by the collection service, which can see the database.
    const toCollection = readString(raw, 'toCollection', problems);
    const collectionId = readString(raw, 'collectionId', problems);
    if (!toCollection && !collectionId) problems.set('toCollection', 'Name the related collection.');
    const minSelect = readInt(raw, 'minSelect', problems, { min: 0 });
    const maxSelect = readInt(raw, 'maxSelect', problems, { min: 1, fallback: raw.maxSelect === null ? null : 1 });
    if (minSelect !== null && maxSelect !== null && minSelect > maxSelect) problems.set('maxSelect', 'Must not be less than minSelect.');
    return {
      toCollection,
      collectionId,
      cascadeDelete: readBool(raw, 'cascadeDelete', problems),
      minSelect,
      maxSelect,
      displayFields: readStringList(raw, 'displayFields', problems),
    };
  },

  prepare(value, field) {
    const ids = toStringList(value);
    if (ids === undefined) return invalid('validation_invalid_value', 'Must be a record id or a list of record ids.');
    if (ids.some((id) => !isRecordKey(id))) {
      return invalid('validation_missing_rel_records', 'Failed to find all relation records with the provided ids.');
    }
    if (!isMultiSelect(field)) {
      if (ids.length > 1) return invalid('validation_too_many_values', 'Select no more than 1.');
      return ok(ids[0] ?? '');
    }
    const { minSelect, maxSelect } = field.options as { minSelect: number | null; maxSelect: number | null };
    if (maxSelect !== null && ids.length > maxSelect) return invalid('validation_too_many_values', `Select no more than ${maxSelect}.`);
    if (minSelect !== null && ids.length > 0 && ids.length < minSelect) {
      return invalid('validation_not_enough_values', `Select at least ${minSelect}.`);
    }
    return ok(ids);
  },

  zero: (field) => (isMultiSelect(field) ? [] : ''),
  isEmpty: (value) => value === '' || value === null || value === undefined || (Array.isArray(value) && value.length === 0),
  toDb: (value, field) => (isMultiSelect(field) ? JSON.stringify(value ?? []) : (value ?? '')),
  fromDb: (raw, field) => (isMultiSelect(field) ? listFromDb(raw) : singleFromDb(raw)),
};
