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
  /** Whether a field is a relation (writes check the related ids) or a file (writes store uploads). */
  hasRelations: boolean;
  hasFiles: boolean;
  /** INSERT texts by the columns they set (`insertSql`). */
  inserts: Map<string, string>;
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
    hasRelations: collection.fields.some((f) => f.type === 'relation'),
    hasFiles: collection.fields.some((f) => f.type === 'file'),
    inserts: new Map(),
  };
  shapes.set(collection, shape);
  return shape;
}

// Creates usually set the same columns, so a collection has a handful of INSERT texts; the bound only
// guards against a client cycling through every subset of a wide collection's fields.
const INSERTS_PER_SHAPE = 64;

/**
 * `INSERT INTO <table> (<columns>) VALUES (?, …)`, with `RETURNING <returningList>` or not, built
 * once per set of columns: a batch of creates then hands the statement cache the same string each time (hashed once)
 * and quotes nothing again.
 */
export function insertSql(shape: RecordShape, columns: readonly string[], returning: boolean): string {
  // A base collection's create sets every column, in the shape's order: one key, no join.
  const key = shape.collection.type === 'base' && columns.length === shape.fields.length + 3 ? (returning ? 'r' : 'n') : `${returning ? 'r' : 'n'}${columns.join(',')}`;
  let text = shape.inserts.get(key);
  if (text === undefined) {
    text = `INSERT INTO ${shape.table} (${columns.map(quoteIdent).join(', ')}) VALUES (${columns.map(() => '?').join(', ')})${returning ? ` RETURNING ${shape.returningList}` : ''}`;
    if (shape.inserts.size >= INSERTS_PER_SHAPE) shape.inserts.clear();
    shape.inserts.set(key, text);
  }
  return text;
}
