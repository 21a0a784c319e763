import { readBool, readInt, readStringList } from '../collections/fields/options.ts';
import { isMultiSelect, listFromDb, singleFromDb } from '../collections/fields/multi.ts';
import { type FieldType, invalid, ok } from '../collections/fields/types.ts';
import type { FieldDef } from '../collections/model.ts';
import { isStoredName } from './names.ts';
import { isStagedFile, type StagedFile } from './staged.ts';
import { THUMB_SIZE } from './thumbs.ts';

/** PocketBase's default `maxSize`, and the API contract's default per-file limit (§9): 5 MiB. */
export const DEFAULT_MAX_FILE_SIZE = 5 * 1024 * 1024;

const MIME_TYPE = /^[a-z0-9][a-z0-9!#$&^_.+-]*\/[a-z0-9][a-z0-9!#$&^_.+-]*$/i;

export interface FileOptions {
  maxSelect: number;
  maxSize: number;
  mimeTypes: string[];
  thumbs: string[];
  protected: boolean;
}

export function fileOptions(field: FieldDef): FileOptions {
  const options = field.options as unknown as FileOptions;
  // 0 is PocketBase's "the default" (its own `users.avatar` has it).
  return options.maxSize ? options : { ...options, maxSize: DEFAULT_MAX_FILE_SIZE };
}

/** Stored names and staged uploads of a file field value, or undefined for anything else. */
export function fileList(value: unknown): Array<string | StagedFile> | undefined {
  if (value === undefined || value === null || value === '') return [];
  const items = Array.isArray(value) ? value : [value];
  const out: Array<string | StagedFile> = [];
  for (const item of items) {
    if (item === '') continue;
    if (typeof item !== 'string' && !isStagedFile(item)) return undefined;
    if (!out.includes(item)) out.push(item);
  }
  return out;
}

/** The stored names a file field value holds (uploads by the names they get). */
export function fileNames(value: unknown): string[] {
  return (fileList(value) ?? []).map((v) => (typeof v === 'string' ? v : v.name));
}

function checkUpload(file: StagedFile, options: FileOptions) {
  if (file.tooLarge || file.size > options.maxSize) {
    return invalid('validation_file_size_limit', `Failed to upload "${file.originalName}": the maximum allowed file size is ${options.maxSize} bytes.`);
  }
  const type = file.contentType.toLowerCase();
  if (options.mimeTypes.length > 0 && !options.mimeTypes.some((m) => m.toLowerCase() === type)) {
    return invalid('validation_invalid_mime_type', `"${file.originalName}" has the type ${file.contentType}; allowed: ${options.mimeTypes.join(', ')}.`);
  }
  return undefined;
}

/**
 * The `file` field. A value is a stored name (single) or a list of them (maxSelect > 1). On writes it
 * may also hold uploads (StagedFile); their size and type are checked here, against the content as
 * received. Whether a name belongs to the record is checked when the write stores its uploads.
 */
export const fileField: FieldType = {
  name: 'file',
  kind: 'text',
  multiple: isMultiSelect,

  normalizeOptions(raw, problems) {
    const mimeTypes = readStringList(raw, 'mimeTypes', problems);
    if (mimeTypes.some((m) => !MIME_TYPE.test(m))) problems.set('mimeTypes', 'Must be a list of MIME types such as "image/png".');
    const thumbs = readStringList(raw, 'thumbs', problems);
    if (thumbs.some((t) => !THUMB_SIZE.test(t) || t.startsWith('0x0'))) problems.set('thumbs', 'Must be a list of sizes such as "100x100", "0x50" or "100x100f".');
    return {
      maxSelect: readInt(raw, 'maxSelect', problems, { min: 1, fallback: 1 }),
      maxSize: readInt(raw, 'maxSize', problems, { min: 0, fallback: DEFAULT_MAX_FILE_SIZE }),
      mimeTypes,
      thumbs,
      protected: readBool(raw, 'protected', problems),
    };
  },

  prepare(value, field) {
    const list = fileList(value);
    if (list === undefined) return invalid('validation_invalid_file', 'Must be a file name, an uploaded file, or a list of them.');
    const options = fileOptions(field);
    for (const item of list) {
      if (typeof item === 'string') {
        if (!isStoredName(item)) return invalid('validation_invalid_file', `Invalid file name ${JSON.stringify(item)}.`);
        continue;
      }
      const problem = checkUpload(item, options);
      if (problem) return problem;
    }
    if (list.length > options.maxSelect) return invalid('validation_too_many_values', `Select no more than ${options.maxSelect} file(s).`);
    return ok(isMultiSelect(field) ? list : (list[0] ?? ''));
  },

  zero: (field) => (isMultiSelect(field) ? [] : ''),
  isEmpty: (value) => value === '' || value === null || value === undefined || (Array.isArray(value) && value.length === 0),
  toDb: (value, field) => (isMultiSelect(field) ? JSON.stringify(fileNames(value)) : (fileNames(value)[0] ?? '')),
  fromDb: (raw, field) => (isMultiSelect(field) ? listFromDb(raw) : singleFromDb(raw)),
};
