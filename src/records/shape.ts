import { typeOf } from '../collections/fields/registry.ts';
import type { FieldType } from '../collections/fields/types.ts';
import type { Collection, FieldDef } from '../collections/model.ts';
import { quoteIdent } from '../lib/identifiers.ts';

/** The alias of the record table in every record query; rules and filters compile against it. */
export const ROOT_ALIAS = 't0';

export interface ShapeField {
  name: string;
  field: FieldDef;
  type: FieldType;
  multiple: boolean;
}

/** What every read of a collection needs, computed once per collection version. */
export interface RecordShape {
  collection: Collection;
  fields: ShapeField[];
  /** `t0."id", t0."created", …`: the columns a record is read with (never password hashes). */
  selectList: string;
  /** The same columns without the alias, for RETURNING. */
  returningList: string;
  /** The quoted table name. */
  table: string;
}

const shapes = new WeakMap<Collection, RecordShape>();

const AUTH_PUBLIC_COLUMNS = ['email', 'emailVisibility', 'verified'];

export function shapeOf(collection: Collection): RecordShape {
  let shape = shapes.get(collection);
  if (shape) return shape;
  const fields = collection.fields.map((field) => {
    const type = typeOf(field);
    return { name: field.name, field, type, multiple: type.multiple(field) };
  });
  const columns = ['id', 'created', 'updated', ...(collection.type === 'auth' ? AUTH_PUBLIC_COLUMNS : []), ...fields.map((f) => f.name)];
  shape = {
    collection,
    fields,
    selectList: columns.map((c) => `${ROOT_ALIAS}.${quoteIdent(c)}`).join(', '),
    returningList: columns.map(quoteIdent).join(', '),
    table: quoteIdent(collection.name),
  };
  shapes.set(collection, shape);
  return shape;
}
