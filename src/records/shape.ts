import { typeOf } from '../collections/fields/registry.ts';
import type { FieldType } from '../collections/fields/types.ts';
import type { Collection, FieldDef } from '../collections/model.ts';
import { answersDate } from '../collections/pocketbase-fields.ts';
import { quoteIdent } from '../lib/identifiers.ts';
import { byteOrder } from '../lib/key-order.ts';

/** The alias of the record table in every record query; rules and filters compile against it. */
export const ROOT_ALIAS = 't0';

export interface ShapeField {
  name: string;
  field: FieldDef;
  type: FieldType;
  multiple: boolean;
  /** A date (`date`, `autodate`): stored ISO 8601, answered as PocketBase writes dates. */
  date: boolean;
}

/** A key of the record JSON that is not a field of the collection. */
export type SystemKey = 'id' | 'collectionId' | 'collectionName' | 'created' | 'updated' | 'email' | 'emailVisibility' | 'verified' | 'expand';

/** One key of the record JSON, in the order `RecordShape.order` gives. */
export type OutputKey = { key: SystemKey; field?: undefined } | { key: string; field: ShapeField };

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
  /**
   * The keys of the record JSON in PocketBase's order: its encoder writes a record as a map, so every
   * key (`collectionId`, `collectionName` and `expand` included) comes sorted by its bytes (API
   * contract §23). Compiled here, once per collection version, so no answer sorts anything.
   */
  order: OutputKey[];
}

function outputOrder(collection: Collection, fields: ShapeField[]): OutputKey[] {
  const system: SystemKey[] = ['id', 'collectionId', 'collectionName', 'expand'];
  // As PocketBase ≥ 0.23: dates only where the collection has them as fields.
  for (const date of ['created', 'updated'] as const) if (answersDate(collection, date)) system.push(date);
  if (collection.type === 'auth') system.push('email', 'emailVisibility', 'verified');
  const keys: OutputKey[] = system.map((key) => ({ key }));
  // A field named as one of these system keys would repeat it; the system key wins, as it always has.
  const taken = new Set<string>(collection.type === 'auth' ? [...system, 'password', 'tokenKey'] : system);
  for (const f of fields) if (!taken.has(f.name)) keys.push({ key: f.name, field: f });
  return keys.sort((a, b) => byteOrder(a.key, b.key));
}

const shapes = new WeakMap<Collection, RecordShape>();

const AUTH_PUBLIC_COLUMNS = ['email', 'emailVisibility', 'verified'];

export function shapeOf(collection: Collection): RecordShape {
  let shape = shapes.get(collection);
  if (shape) return shape;
  const fields = collection.fields.map((field) => {
    const type = typeOf(field);
    return { name: field.name, field, type, multiple: type.multiple(field), date: field.type === 'date' || field.type === 'autodate' };
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
    order: outputOrder(collection, fields),
  };
  shapes.set(collection, shape);
  return shape;
}

/** Query texts kept per record shape, by the text of the access condition they were made for. */
export type ConditionTexts = WeakMap<RecordShape, Map<string, string>>;

// A rule program compiles one SQL text per shape of the request's values and binds the values as
// parameters, so a collection's reads or deletes under a rule use a handful of condition texts: each
// full query is made once per text. The bound only guards against a rule with many variants.
const TEXTS_PER_CONDITION_SET = 64;

/**
 * The query `make` builds for `shape` and `condition`, made once per shape and condition text. `make`
 * is a function of the module, not a closure: this runs on every view and delete under a rule.
 */
export function conditionText(texts: ConditionTexts, shape: RecordShape, condition: string, make: (shape: RecordShape, condition: string) => string): string {
  let known = texts.get(shape);
  if (!known) texts.set(shape, (known = new Map()));
  let text = known.get(condition);
  if (text === undefined) {
    if (known.size >= TEXTS_PER_CONDITION_SET) known.clear();
    known.set(condition, (text = make(shape, condition)));
  }
  return text;
}

// Creates usually set the same columns, so a collection has a handful of INSERT texts; the bound only
// guards against a client cycling through every subset of a wide collection's fields.
const INSERTS_PER_SHAPE = 64;

/**
 * `INSERT INTO <table> (<columns>) VALUES (?, …)`, with `RETURNING <returningList>` or not, built
 * once per set of columns: a batch of creates then hands the statement cache the same string each time (hashed once)
 * and quotes nothing again.
 */
export function insertSql(shape: RecordShape, columns: readonly string[], returning: boolean, condition = ''): string {
  // A base collection's create sets every column, in the shape's order: one key, no join.
  const head = shape.collection.type === 'base' && columns.length === shape.fields.length + 3 ? (returning ? 'r' : 'n') : `${returning ? 'r' : 'n'}${columns.join(',')}`;
  const key = condition === '' ? head : `${head} ${condition}`;
  let text = shape.inserts.get(key);
  if (text === undefined) {
    const placeholders = columns.map(() => '?').join(', ');
    // Under a condition the row is inserted only where it holds: `INSERT … SELECT … WHERE` (PostgreSQL
    // types the parameters from the columns they fill, as in VALUES).
    const source = condition === '' ? `VALUES (${placeholders})` : `SELECT ${placeholders} WHERE ${condition}`;
    text = `INSERT INTO ${shape.table} (${columns.map(quoteIdent).join(', ')}) ${source}${returning ? ` RETURNING ${shape.returningList}` : ''}`;
    if (shape.inserts.size >= INSERTS_PER_SHAPE) shape.inserts.clear();
    shape.inserts.set(key, text);
  }
  return text;
}
