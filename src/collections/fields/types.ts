import type { FieldError } from '../../errors.ts';
import type { ColumnKind } from '../../storage/types.ts';
import type { FieldDef } from '../model.ts';

export type Prepared = { ok: true; value: unknown } | { ok: false; error: FieldError };

export const ok = (value: unknown): Prepared => ({ ok: true, value });
export const invalid = (code: string, message: string): Prepared => ({ ok: false, error: { code, message } });

/** Collects problems with a field's options, keyed by option name. */
export type OptionProblems = Map<string, string>;

/**
 * One field type. Adding a type means writing one of these and registering it in `registry.ts`;
 * records, filters and migrations then handle it through this interface.
 */
export interface FieldType {
  readonly name: string;
  /** How a single value is stored. */
  readonly kind: ColumnKind;
  /** Whether values are arrays (stored as a JSON array). */
  multiple(field: FieldDef): boolean;
  /** Checks options, fills defaults and drops unknown keys. */
  normalizeOptions(raw: Record<string, unknown>, problems: OptionProblems): Record<string, unknown>;
  /** Coerces an input value into canonical form and checks it against the options. Empty values
   * pass here; `required` is checked by the caller through `isEmpty`. */
  prepare(value: unknown, field: FieldDef): Prepared;
  /** The value of an unset field. */
  zero(field: FieldDef): unknown;
  isEmpty(value: unknown, field: FieldDef): boolean;
  toDb(value: unknown, field: FieldDef): unknown;
  fromDb(raw: unknown, field: FieldDef): unknown;
}
