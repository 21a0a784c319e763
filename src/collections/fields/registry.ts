import { autodateField } from './autodate.ts';
import { boolField } from './bool.ts';
import { dateField } from './date.ts';
import { emailField, urlField } from './email.ts';
import { geoPointField } from './geopoint.ts';
import { jsonField } from './json.ts';
import { numberField } from './number.ts';
import { relationField } from './relation.ts';
import { selectField } from './select.ts';
import { editorField, textField } from './text.ts';
import type { FieldType } from './types.ts';

const types = new Map<string, FieldType>();

/** Makes a field type available to collections. Built-in types register below; others (files)
 * register from their own domain at start-up. */
export function registerFieldType(type: FieldType): void {
  types.set(type.name, type);
}

export function fieldType(name: string): FieldType | undefined {
  return types.get(name);
}

/** The type of a field already saved in a collection (its type was checked then). */
export function typeOf(field: { type: string }): FieldType {
  const t = types.get(field.type);
  if (!t) throw new Error(`unknown field type "${field.type}"`);
  return t;
}

export function fieldTypeNames(): string[] {
  return [...types.keys()];
}

for (const t of [textField, editorField, numberField, boolField, emailField, urlField, dateField, selectField, jsonField, relationField, autodateField, geoPointField]) {
  registerFieldType(t);
}
