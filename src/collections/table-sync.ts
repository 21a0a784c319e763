import { badRequest } from '../errors.ts';
import { quoteIdent } from '../lib/identifiers.ts';
import { ownerFields } from '../rules/owner-fields.ts';
import { type ColumnKind, type Dialect, orderColumn, type Queryable, type SchemaStep } from '../storage/index.ts';
import { typeOf } from './fields/registry.ts';
import { type Collection, type FieldDef, RULE_NAMES } from './model.ts';

/**
 * Keeps a collection's table in step with its metadata. Only additive DDL happens here: tables and
 * columns are created or adopted, never dropped or renamed (the spec's append-only rule). A removed
 * field keeps its column and data; a re-created collection or re-added field adopts what is there.
 */

interface ColumnSpec {
  name: string;
  kind: ColumnKind;
  multiple: boolean;
}

const SYSTEM_COLUMNS: ColumnSpec[] = [
  { name: 'created', kind: 'text', multiple: false },
  { name: 'updated', kind: 'text', multiple: false },
];

const AUTH_COLUMNS: ColumnSpec[] = [
  { name: 'email', kind: 'citext', multiple: false },
  { name: 'emailVisibility', kind: 'bool', multiple: false },
  { name: 'verified', kind: 'bool', multiple: false },
  { name: 'passwordHash', kind: 'text', multiple: false },
  { name: 'tokenKey', kind: 'text', multiple: false },
  { name: 'lastResetSentAt', kind: 'text', multiple: false },
  { name: 'lastVerificationSentAt', kind: 'text', multiple: false },
];

function fieldColumn(field: FieldDef): ColumnSpec {
  const type = typeOf(field);
  return { name: field.name, kind: type.kind, multiple: type.multiple(field) };
}

function columnsOf(c: Collection): ColumnSpec[] {
  return [...SYSTEM_COLUMNS, ...(c.type === 'auth' ? AUTH_COLUMNS : []), ...c.fields.map(fieldColumn)];
}

/**
 * Single-value fields the collection's rules compare with the caller's id (`author =
 * @request.auth.id`): every list and view under such a rule filters on them, newest first by default.
 */
function ruleOwnerFields(c: Collection | undefined): Set<string> {
  const out = new Set<string>();
  if (!c) return out;
  for (const rule of RULE_NAMES) {
    for (const written of ownerFields(c[rule])) {
      const throughId = written.endsWith('.id');
      const name = throughId ? written.slice(0, -3) : written;
      const field = c.fields.find((f) => f.name === name);
      if (field && !typeOf(field).multiple(field) && (!throughId || field.type === 'relation')) out.add(name);
    }
  }
  return out;
}

/**
 * Single relation fields, indexed by default (as Django indexes every foreign key): rules, filters,
 * back-relations and cascading deletes look records up by them, and PostgreSQL, unlike SQLite, builds
 * no index of its own for a join. A field a rule already indexes as an owner (with `created`) needs
 * no second one.
 */
export function relationIndexFields(c: Collection | undefined): string[] {
  if (!c || c.type === 'view') return [];
  const owners = ruleOwnerFields(c);
  return c.fields.filter((f) => f.type === 'relation' && !typeOf(f).multiple(f) && !owners.has(f.name)).map((f) => f.name);
}

export function relationIndexName(table: string, field: string): string {
  return `_${table}_${field}_rel_idx`;
}

function ownerIndexName(table: string, field: string): string {
  return `_${table}_${field}_owner_idx`;
}

/** Name of the index that enforces a field's `unique` flag. */
export function uniqueIndexName(table: string, field: string): string {
  return `_${table}_${field}_unique`;
}

const INDEX_SQL =
  /^\s*CREATE\s+(UNIQUE\s+)?INDEX\s+(?:IF\s+NOT\s+EXISTS\s+)?[`"[]?([A-Za-z0-9_]+)[`"\]]?\s+ON\s+[`"[]?([A-Za-z0-9_]+)[`"\]]?\s*(?:USING\s+([A-Za-z_]+)\s*)?\(([^;]+)\)\s*(WHERE\s+[^;]+)?;?\s*$/i;

export interface ParsedIndex {
  name: string;
  unique: boolean;
  table: string;
  /** The statement, normalized to CREATE … IF NOT EXISTS with quoted names. */
  sql: string;
  /** PostgreSQL's index method (`USING gin`), lower-cased; absent for the engine's default. */
  method?: string;
  /** PostgreSQL's operator classes named in the column list (`gin_trgm_ops`), lower-cased. */
  operatorClasses: string[];
}

const ON_TABLE = /(\bON\s+)([`"[]?)([A-Za-z0-9_]+)([`"\]]?)/i;

/** The statement with `table` as the table it indexes (a statement that does not parse is left as it is). */
export function withIndexTable(text: string, table: string): string {
  const parsed = parseIndex(text);
  if (!parsed || parsed.table === table) return text;
  return text.replace(ON_TABLE, (_m, on: string, open: string, _old: string, close: string) => `${on}${open}${table}${close}`);
}

/**
 * Whether an index name is one Cairn gives its own indexes of `table` (the created index, owner
 * indexes, unique fields'): a user index of that name would be taken for Cairn's.
 */
export function isCairnIndexName(name: string, table: string): boolean {
  const n = name.toLowerCase();
  const prefix = `_${table.toLowerCase()}_`;
  return n.startsWith(prefix) && (n === `${prefix}created_idx` || n.endsWith('_owner_idx') || n.endsWith('_unique'));
}

/** Parses a user-supplied CREATE INDEX statement; undefined when it is not one. */
export function parseIndex(text: string): ParsedIndex | undefined {
  const m = INDEX_SQL.exec(text);
  if (!m) return undefined;
  const [, unique, name, table, using, columns, where] = m;
  const method = using?.toLowerCase();
  const operatorClasses: string[] = [];
  const sql = `CREATE ${unique ? 'UNIQUE ' : ''}INDEX IF NOT EXISTS ${quoteIdent(name)} ON ${quoteIdent(table)}${method ? ` USING ${method}` : ''} (${indexColumns(columns, operatorClasses)})${
    where ? ` ${where.trim()}` : ''
  }`;
  return { name, unique: Boolean(unique), table, sql, method, operatorClasses };
}

// An operator class is a name ending in `_ops` (every one PostgreSQL and its extensions ship:
// `text_pattern_ops`, `gin_trgm_ops`, `jsonb_path_ops`), between the collation and the order.
const INDEX_COLUMN = /^(.+?)(?:\s+COLLATE\s+([A-Za-z0-9_]+))?(?:\s+([A-Za-z_][A-Za-z0-9_]*_ops))?(?:\s+(ASC|DESC))?$/i;

/**
 * The column list as PocketBase builds it from its parse: a plain name, with any quotes (`` ` ``,
 * `"`, `'`, `[]`) taken off, is quoted as a column, so `(group, user)` indexes those columns (SQLite
 * refuses `group` bare; PostgreSQL reads `user` bare as a function) and `("missing")` is an error
 * rather than an index on a string; an expression (anything with a parenthesis or a space) is kept.
 * The operator classes named are added to `operatorClasses`.
 */
function indexColumns(list: string, operatorClasses: string[]): string {
  const parts: string[] = [];
  let depth = 0;
  let quote: string | undefined;
  let start = 0;
  for (let i = 0; i < list.length; i++) {
    const ch = list[i];
    if (quote) {
      if (ch === quote) quote = undefined;
    } else if (ch === "'" || ch === '"' || ch === '`') quote = ch;
    else if (ch === '[') quote = ']';
    else if (ch === '(') depth++;
    else if (ch === ')') depth--;
    else if (ch === ',' && depth === 0) {
      parts.push(list.slice(start, i));
      start = i + 1;
    }
  }
  parts.push(list.slice(start));
  return parts
    .map((part) => {
      const m = INDEX_COLUMN.exec(part.trim());
      if (!m) return part.trim();
      const [, raw, collate, opclass, sort] = m;
      const bare = raw.trim().replace(/^[`"'[]+|[`"'\]]+$/g, '');
      const column = bare.includes('(') || bare.includes(' ') || bare === '' ? raw.trim() : quoteIdent(bare);
      if (opclass) operatorClasses.push(opclass.toLowerCase());
      return `${column}${collate ? ` COLLATE ${collate}` : ''}${opclass ? ` ${opclass.toLowerCase()}` : ''}${sort ? ` ${sort.toUpperCase()}` : ''}`;
    })
    .join(', ');
}

async function createTable(db: Queryable, c: Collection): Promise<void> {
  const cols = columnsOf(c).map((col) => `${quoteIdent(col.name)} ${db.dialect.columnDefinition(col.kind, col.multiple)}`);
  await db.exec(`CREATE TABLE ${quoteIdent(c.name)} (${db.dialect.idColumn}, ${cols.join(', ')}${orderColumn(db.dialect)})`);
}

/**
 * Gives the record tables of a database made by an earlier version the `id` column a new one gets
 * (`Dialect.idColumn`: on PostgreSQL, the collation of the relation fields that hold ids), once: the
 * collections' tables, and `systemTables` (record tables whose collections are not in `_collections`).
 * A table whose id cannot be changed (something besides a view depends on it) keeps it as it was: it
 * answers as before, only its joins through relations cannot use the key's index.
 */
export function recordIdsStep(systemTables: readonly string[]): SchemaStep {
  return {
    id: 'records.id-column',
    async up(tx) {
      const collections = await tx.all<{ name: string }>(`SELECT name FROM _collections WHERE type <> 'view'`);
      for (const name of [...systemTables, ...collections.map((c) => c.name)]) {
        try {
          await tx.transaction((inner) => inner.dialect.alignIdColumn(inner, name));
        } catch (err) {
          process.emitWarning(`the id column of "${name}" was left as it was: ${(err as Error).message}`);
        }
      }
    },
  };
}

async function addMissingColumns(db: Queryable, c: Collection): Promise<void> {
  const existing = new Set((await db.dialect.tableColumns(db, c.name)).map((col) => col.name.toLowerCase()));
  const order = db.dialect.insertionOrderColumn;
  // An adopted table (made outside Cairn) gets the column lists are ordered by (PostgreSQL only).
  if (order) await db.exec(`ALTER TABLE ${quoteIdent(c.name)} ADD COLUMN IF NOT EXISTS ${order.definition}`);
  for (const col of columnsOf(c)) {
    if (existing.has(col.name.toLowerCase())) continue;
    await db.exec(`ALTER TABLE ${quoteIdent(c.name)} ADD COLUMN ${quoteIdent(col.name)} ${db.dialect.columnDefinition(col.kind, col.multiple)}`);
  }
}

async function createUniqueIndex(db: Queryable, table: string, column: string): Promise<void> {
  // Partial: empty values (the zero value of an unset field) do not collide with each other.
  try {
    await db.exec(
      `CREATE UNIQUE INDEX IF NOT EXISTS ${quoteIdent(uniqueIndexName(table, column))} ON ${quoteIdent(table)} (${quoteIdent(column)}) WHERE ${quoteIdent(column)} != ''`,
    );
  } catch (err) {
    if (db.dialect.classifyError(err).kind === 'unique') {
      throw badRequest(`Cannot make "${column}" unique: existing records share a value.`, {
        [column]: { code: 'validation_not_unique', message: 'Existing records share a value.' },
      });
    }
    throw err;
  }
}

/**
 * Brings the table of `next` in line with its metadata, given the metadata it had before
 * (`previous`, undefined for a new or re-created collection). Runs inside the caller's transaction.
 */
export async function syncTable(db: Queryable, previous: Collection | undefined, next: Collection): Promise<void> {
  if (next.type === 'view') return;
  if (await db.dialect.tableExists(db, next.name)) {
    // A table made outside Cairn, or by an earlier version (recordIdsStep).
    if (!previous) await db.dialect.alignIdColumn(db, next.name);
    await addMissingColumns(db, next);
  } else await createTable(db, next);
  for (const statement of db.dialect.changeNoticeSql(next.name)) await db.exec(statement);

  const table = next.name;
  await db.exec(`CREATE INDEX IF NOT EXISTS ${quoteIdent(`_${table}_created_idx`)} ON ${quoteIdent(table)} (created)`);
  if (next.type === 'auth') await createUniqueIndex(db, table, 'email');

  const before = new Map((previous?.fields ?? []).map((f) => [f.id, f]));
  for (const field of next.fields) {
    const old = before.get(field.id);
    if (old && !typeOf(old).multiple(old) && typeOf(field).multiple(field)) await db.run(db.dialect.wrapInJsonArraySql(table, field.name));
    if (field.unique) await createUniqueIndex(db, table, field.name);
    else if (old?.unique) await db.exec(`DROP INDEX IF EXISTS ${quoteIdent(uniqueIndexName(table, field.name))}`);
  }
  // A removed field keeps its column, but no longer constrains new records, unless a field re-added
  // under the same name (a migration redefining it) is unique too and shares the index.
  const kept = new Set(next.fields.map((f) => f.id));
  const uniqueNames = new Set(next.fields.filter((f) => f.unique).map((f) => f.name.toLowerCase()));
  for (const old of previous?.fields ?? []) {
    if (!kept.has(old.id) && old.unique && !uniqueNames.has(old.name.toLowerCase())) {
      await db.exec(`DROP INDEX IF EXISTS ${quoteIdent(uniqueIndexName(table, old.name))}`);
    }
  }

  const owners = ruleOwnerFields(next);
  for (const field of owners) {
    await db.exec(`CREATE INDEX IF NOT EXISTS ${quoteIdent(ownerIndexName(table, field))} ON ${quoteIdent(table)} (${quoteIdent(field)}, created)`);
  }
  for (const field of ruleOwnerFields(previous)) {
    if (!owners.has(field)) await db.exec(`DROP INDEX IF EXISTS ${quoteIdent(ownerIndexName(table, field))}`);
  }

  const related = new Set(relationIndexFields(next));
  for (const field of related) {
    await db.exec(`CREATE INDEX IF NOT EXISTS ${quoteIdent(relationIndexName(table, field))} ON ${quoteIdent(table)} (${quoteIdent(field)})`);
  }
  for (const field of relationIndexFields(previous)) {
    if (!related.has(field)) await db.exec(`DROP INDEX IF EXISTS ${quoteIdent(relationIndexName(table, field))}`);
  }
  // Lists are read in insertion order: on PostgreSQL an index on that column serves the first page
  // without sorting the table (SQLite's rowid is the table's own order).
  const order = db.dialect.insertionOrderColumn;
  if (order) await db.exec(`CREATE INDEX IF NOT EXISTS ${quoteIdent(`_${table}_order_idx`)} ON ${quoteIdent(table)} (${quoteIdent(order.name)})`);

  const nextIndexes = next.indexes.map((text) => parseIndex(text)!);
  const nextNames = new Set(nextIndexes.map((i) => i.name.toLowerCase()));
  for (const text of previous?.indexes ?? []) {
    const old = parseIndex(text);
    // Only this table's: an index of that name on another table is that collection's.
    if (old && !nextNames.has(old.name.toLowerCase()) && (await db.dialect.indexTable(db, old.name))?.toLowerCase() === table.toLowerCase()) {
      await db.exec(`DROP INDEX IF EXISTS ${quoteIdent(old.name)}`);
    }
  }
  for (const [i, index] of nextIndexes.entries()) {
    // Index names are per database: with IF NOT EXISTS, another table's index of the same name would
    // pass for this one, and removing it here later would drop that table's index.
    const owner = await db.dialect.indexTable(db, index.name);
    if (owner !== undefined && owner.toLowerCase() !== table.toLowerCase()) {
      throw badRequest(`The index name "${index.name}" is already used by "${owner}".`, {
        indexes: { [i]: { code: 'validation_existing_index_name', message: `The index name is already used in ${owner} collection.` } },
      });
    }
    refuseUnsupported(db.dialect, index, i);
    try {
      // run() prepares exactly one statement, so the user's column list cannot smuggle in another.
      await db.run(await db.dialect.indexStatement(db, index.sql, index.operatorClasses));
    } catch (err) {
      if (db.dialect.classifyError(err).kind === 'unique') {
        throw badRequest(`Cannot create the unique index "${index.name}": existing records share a value.`, {
          indexes: { [i]: { code: 'validation_not_unique', message: `Existing records violate "${index.name}".` } },
        });
      }
      throw badRequest(`Invalid index "${index.name}": ${(err as Error).message}`, {
        indexes: { [i]: { code: 'validation_invalid_index_expression', message: `Failed to create index ${index.name}: ${(err as Error).message}` } },
      });
    }
  }
}

/**
 * An index method or operator class the engine has not: SQLite has one kind of index, so `USING gin`
 * and `gin_trgm_ops`, PostgreSQL's, are refused by name there rather than as a syntax error.
 */
function refuseUnsupported(dialect: Dialect, index: ParsedIndex, i: number): void {
  let message: string | undefined;
  if (dialect.indexMethods.length === 0 && (index.method || index.operatorClasses.length > 0)) {
    const what = [index.method && `USING ${index.method}`, ...index.operatorClasses].filter(Boolean).join(', ');
    message = `${what}: index methods and operator classes are PostgreSQL's; SQLite has one kind of index.`;
  } else if (index.method && !dialect.indexMethods.includes(index.method)) {
    message = `Unknown index method "${index.method}" (one of ${dialect.indexMethods.join(', ')}).`;
  }
  if (message) throw badRequest(`Invalid index "${index.name}": ${message}`, { indexes: { [i]: { code: 'validation_invalid_index_expression', message } } });
}
