import { autodateStamp } from '../collections/fields/autodate.ts';
import { generatedText } from '../collections/fields/text.ts';
import { type Collection, isCairnUsers } from '../collections/model.ts';
import type { FieldError } from '../errors.ts';
import { isPlainObject } from '../lib/objects.ts';
import type { RecordShape, ShapeField } from './shape.ts';

export const REQUIRED: FieldError = { code: 'validation_required', message: 'Cannot be blank.' };

/**
 * Whether only administrators (and the flows that own it) may write a field: `role` of Cairn's own
 * `users` (API contract §5). In any other collection, one carried from PocketBase included, a `role`
 * is the application's own field, written as its rules allow (§18).
 */
export function isAdminOnlyField(collection: Collection, name: string): boolean {
  return name === 'role' && isCairnUsers(collection);
}

export interface PreparedValues {
  /** Canonical values of the fields being written, by field name. */
  values: Map<string, unknown>;
  errors: Record<string, FieldError>;
}

type Modifier = { kind: 'append' | 'prepend' | 'remove'; value: unknown };

/**
 * Reads PocketBase's write modifiers: `field+` appends (or adds to a number), `+field` prepends,
 * `field-` removes values (or subtracts from a number).
 */
function collectModifiers(input: Record<string, unknown>, shape: RecordShape): Map<string, Modifier[]> {
  const out = new Map<string, Modifier[]>();
  for (const key of Object.keys(input)) {
    let name: string | undefined;
    let kind: Modifier['kind'] | undefined;
    if (key.endsWith('+')) {
      name = key.slice(0, -1);
      kind = 'append';
    } else if (key.startsWith('+')) {
      name = key.slice(1);
      kind = 'prepend';
    } else if (key.endsWith('-')) {
      name = key.slice(0, -1);
      kind = 'remove';
    }
    if (!name || !kind || !shape.fields.some((f) => f.name === name)) continue;
    const list = out.get(name) ?? [];
    list.push({ kind, value: input[key] });
    out.set(name, list);
  }
  return out;
}

function asList(value: unknown): unknown[] {
  if (value === undefined || value === null || value === '') return [];
  return Array.isArray(value) ? value : [value];
}

function applyModifiers(f: ShapeField, base: unknown, modifiers: Modifier[]): { value?: unknown; error?: FieldError } {
  if (f.field.type === 'number') {
    let n = typeof base === 'number' ? base : Number(base ?? 0) || 0;
    for (const m of modifiers) {
      // An object is no number: Number() would call its toString/valueOf, which a JSON body may send
      // as plain values (`{"toString": 1}`) and so make it throw.
      const delta = typeof m.value === 'number' ? m.value : isPlainObject(m.value) ? NaN : Number(m.value);
      if (!Number.isFinite(delta) || m.kind === 'prepend') return { error: { code: 'validation_invalid_number', message: 'Must be a valid number.' } };
      n = m.kind === 'append' ? n + delta : n - delta;
    }
    return { value: n };
  }
  if (!f.multiple) return { error: { code: 'validation_invalid_modifier', message: 'Modifiers apply to multiple-value and number fields only.' } };
  let list = asList(base);
  for (const m of modifiers) {
    const items = asList(m.value);
    if (m.kind === 'append') list = [...list, ...items];
    else if (m.kind === 'prepend') list = [...items, ...list];
    else list = list.filter((v) => !items.includes(v));
  }
  return { value: list };
}

/**
 * Validates the fields of a create (`existing` undefined) or update. On create every field gets a
 * value (input, default or zero); on update only the fields the input touches are written.
 */
export function prepareValues(
  collection: Collection,
  shape: RecordShape,
  input: Record<string, unknown>,
  existing: Record<string, unknown> | undefined,
  privileged: boolean,
): PreparedValues {
  const values = new Map<string, unknown>();
  const errors: Record<string, FieldError> = {};
  const modifiers = collectModifiers(input, shape);

  for (const f of shape.fields) {
    if (f.field.type === 'autodate') {
      // Cairn's to set, whatever the input says (PocketBase ignores it too).
      const stamp = autodateStamp(f.field, existing === undefined);
      if (stamp !== undefined) values.set(f.name, stamp);
      continue;
    }
    let present = Object.prototype.hasOwnProperty.call(input, f.name);
    let mods = modifiers.get(f.name);
    if (!privileged && f.field.hidden && (present || mods)) {
      // Hidden fields are written by administrators and hook code only: anyone else's value, plain or
      // through a modifier, is ignored and the stored value (or the default) kept, as PocketBase ≥ 0.23
      // drops them from a non-superuser's body (issue 36 hole 4).
      present = false;
      mods = undefined;
    }
    if (!present && !mods && existing) continue;

    if (!privileged && (present || mods) && isAdminOnlyField(collection, f.name)) {
      const current = existing ? existing[f.name] : f.type.zero(f.field);
      const wanted = f.type.prepare(input[f.name], f.field);
      if (mods || !wanted.ok || JSON.stringify(wanted.value) !== JSON.stringify(current)) {
        errors[f.name] = { code: 'validation_admin_only', message: 'Only administrators can set this field.' };
        continue;
      }
    }

    let raw: unknown;
    if (present) raw = input[f.name];
    else if (!existing) raw = f.field.default ?? f.type.zero(f.field);
    else raw = existing[f.name];
    // PocketBase fills an empty text field that has an autogenerate pattern when the record is created.
    if (!existing && (raw === '' || raw === null || raw === undefined)) raw = generatedText(f.field) ?? raw;

    if (mods) {
      const applied = applyModifiers(f, raw, mods);
      if (applied.error) {
        errors[f.name] = applied.error;
        continue;
      }
      raw = applied.value;
    }

    const prepared = f.type.prepare(raw, f.field);
    if (!prepared.ok) {
      errors[f.name] = prepared.error;
      continue;
    }
    if (f.field.required && f.type.isEmpty(prepared.value, f.field)) {
      errors[f.name] = REQUIRED;
      continue;
    }
    values.set(f.name, prepared.value);
  }
  return { values, errors };
}
