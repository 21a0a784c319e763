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
  /**
   * `SELECT <selectList> FROM <table> t0 WHERE t0.id = ?`: the read of one record by id, the hottest
   * query. Built once, so each view hands the statement cache the same string (hashed once).
   */
  selectById: string;
  /** Whether every viewer sees the same record JSON as an administrator: no hidden field, no email. */
  sameForEveryone: boolean;
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
  const selectList = columns.map((c) => `${ROOT_ALIAS}.${quoteIdent(c)}`).join(', ');
  const table = quoteIdent(collection.name);
  shape = {
    collection,
    fields,
    selectList,
    returningList: columns.map(quoteIdent).join(', '),
    table,
    selectById: `SELECT ${selectList} FROM ${table} ${ROOT_ALIAS} WHERE ${ROOT_ALIAS}.id = ?`,
    sameForEveryone: collection.type !== 'auth' && !collection.fields.some((f) => f.hidden),
  };
  shapes.set(collection, shape);
  return shape;
}
