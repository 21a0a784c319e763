import { relationTarget } from '../collections/fields/relation.ts';
import { AUTH_SYSTEM_COLUMNS, BASE_SYSTEM_FIELDS, type Collection, type CollectionOptions, RULE_NAMES, type RuleName } from '../collections/model.ts';
import { normalizeCollection, type OptionsValidator } from '../collections/normalize.ts';
import { parseIndex } from '../collections/table-sync.ts';
import { ApiError, badRequest } from '../errors.ts';
import { randomId } from '../lib/ids.ts';
import { nowIso } from '../lib/time.ts';
import { isValidTokenize, SEARCHABLE_TYPES } from './fts.ts';
import { type CollectionOps, type DatabaseSchema, type FieldSpec, type FtsConfig, RULE_KEYS } from './model.ts';
import { viewQuery } from './views.ts';

/**
 * Applies a migration's operations for one database to its schema, in memory: the result is the
 * schema the database must have afterwards, fully validated (field types and options, relations,
 * index statements, rules) before any SQL runs. Steps follow the spec's apply order; within a
 * collection `drop_columns` removes fields as they were before the migration, so dropping and
 * re-adding a name in one migration redefines the field (its column and data stay).
 *
 * Adoption (API contract §8): `create_table` of a collection that exists merges into it, and
 * `add_columns` of a field that exists takes the file's definition if the type is the same, so a
 * migration generated from this very schema changes nothing. Drops of things already gone are no-ops.
 */

/** Checks a rule against its collection and the other collections of the database (for `@collection.*`). */
export type MigrationRuleValidator = (collection: Collection, rule: string, others: readonly Collection[]) => string | undefined;

export interface TransformContext {
  validateRule: MigrationRuleValidator;
  validateOptions: readonly OptionsValidator[];
}

const NO_RULE_CHECK = () => undefined;

/** Checks the rules of the given collections against the whole resulting schema of their database. */
function checkRules(dbName: string, targets: readonly Collection[], all: readonly Collection[], ctx: TransformContext): void {
  for (const c of targets) {
    for (const rule of RULE_NAMES) {
      const text = c[rule];
      if (typeof text !== 'string' || text.trim() === '') continue;
      const problem = ctx.validateRule(c, text, all);
      if (problem) throw badRequest(`${dbName}.${c.name} (update_rules): ${rule}: ${problem}`);
    }
  }
}

type FieldBody = Record<string, unknown> & { id?: string; name: string };

interface TableDraft {
  kind: 'table';
  name: string;
  id: string;
  type: 'base' | 'auth';
  system: boolean;
  /** The collection as it was before the migration (absent for new or replaced collections). */
  existing?: Collection;
  /** Ids of pre-migration fields removed by drop_columns. */
  dropped: Set<string>;
  /** The field bodies that stand for the pre-migration fields (adopting one replaces it). */
  preMigration: Set<FieldBody>;
  fields: FieldBody[];
  indexes: string[];
  rules: Record<RuleName, string | null>;
  options: CollectionOptions;
  created?: string;
  touched: boolean;
}

interface ViewEntry {
  kind: 'view';
  collection: Collection;
}

type Entry = TableDraft | ViewEntry;

const BASE_COLUMNS = new Set(BASE_SYSTEM_FIELDS.map((n) => n.toLowerCase()));
const AUTH_COLUMNS = new Set([...BASE_SYSTEM_FIELDS, ...AUTH_SYSTEM_COLUMNS].map((n) => n.toLowerCase()));
/** Columns Cairn makes itself in a table of `type`: a base table's `email` or `tokenKey` is a field of its own. */
const automaticColumns = (type: 'base' | 'auth') => (type === 'auth' ? AUTH_COLUMNS : BASE_COLUMNS);
const lower = (s: string) => s.toLowerCase();

const RULE_FIELD: Record<(typeof RULE_KEYS)[number], RuleName> = {
  list: 'listRule',
  view: 'viewRule',
  create: 'createRule',
  update: 'updateRule',
  delete: 'deleteRule',
};

function rulesOf(c: Collection): Record<RuleName, string | null> {
  return Object.fromEntries(RULE_NAMES.map((r) => [r, c[r]])) as Record<RuleName, string | null>;
}

function noRules(): Record<RuleName, string | null> {
  return Object.fromEntries(RULE_NAMES.map((r) => [r, null])) as Record<RuleName, string | null>;
}

function draftOf(c: Collection): TableDraft {
  const fields = c.fields.map((f) => ({ ...f }));
  return {
    kind: 'table',
    name: c.name,
    id: c.id,
    type: c.type as 'base' | 'auth',
    system: c.system,
    existing: c,
    dropped: new Set(),
    preMigration: new Set(fields),
    fields,
    indexes: [...c.indexes],
    rules: rulesOf(c),
    options: c.options,
    created: c.created,
    touched: false,
  };
}

function newDraft(name: string, type: 'base' | 'auth', system: boolean, id = randomId()): TableDraft {
  return { kind: 'table', name, id, type, system, dropped: new Set(), preMigration: new Set(), fields: [], indexes: [], rules: noRules(), options: {}, touched: true };
}

/** Flattens a validation error's nested `data` into `field "title".type: message` parts. */
function describeValidation(err: ApiError, fields: FieldBody[]): string {
  const parts: string[] = [];
  const walk = (value: unknown, labels: string[], underFields: boolean) => {
    if (!value || typeof value !== 'object') return;
    const v = value as Record<string, unknown>;
    if (typeof v.code === 'string' && typeof v.message === 'string') {
      parts.push(labels.length > 0 ? `${labels.join('.')}: ${v.message}` : v.message);
      return;
    }
    for (const [k, child] of Object.entries(v)) {
      if (labels.length === 0 && !underFields && k === 'fields') walk(child, labels, true);
      else if (underFields) walk(child, [`field "${fields[Number(k)]?.name ?? k}"`], false);
      else walk(child, [...labels, k], false);
    }
  };
  walk(err.data, [], false);
  return parts.length > 0 ? parts.join('; ') : err.message;
}

/** A field body from a file's column definition; adopting `existing` keeps its id. */
function bodyOf(spec: FieldSpec, existing?: FieldBody): FieldBody {
  const body: FieldBody = { ...spec };
  if (existing?.id) body.id = existing.id;
  return body;
}

export function transformDatabase(dbName: string, before: DatabaseSchema, operations: Record<string, CollectionOps>, ctx: TransformContext): DatabaseSchema {
  const draft = new SchemaDraft(dbName, before);
  const each = Object.entries(operations);
  // The spec's apply order: each kind of operation over every collection before the next kind.
  for (const [key, ops] of each) draft.createTable(key, ops);
  for (const [key, ops] of each) draft.addColumns(key, ops);
  for (const [key, ops] of each) draft.dropColumns(key, ops);
  for (const [key, ops] of each) draft.dropTable(key, ops);
  for (const [key, ops] of each) draft.changeIndexes(key, ops);
  for (const [key, ops] of each) draft.dropViews(key, ops);
  for (const [key, ops] of each) draft.createViews(key, ops);
  for (const [key, ops] of each) draft.changeFts(key, ops);
  for (const [key, ops] of each) draft.updateRules(key, ops);
  const { collections, changed } = draft.normalized(ctx);
  checkRules(dbName, changed, collections, ctx);
  draft.checkRelations(collections);
  return { collections, fts: draft.ftsOf(collections) };
}

/** One database's schema while a migration's operations are applied to it: each step a method. */
class SchemaDraft {
  private readonly state = new Map<string, Entry>();
  private readonly fts = new Map<string, { name: string; config: FtsConfig }>();

  constructor(
    private readonly dbName: string,
    before: DatabaseSchema,
  ) {
    for (const c of before.collections) this.state.set(lower(c.name), c.type === 'view' ? { kind: 'view', collection: c } : draftOf(c));
    for (const [name, config] of Object.entries(before.fts)) this.fts.set(lower(name), { name, config });
  }

  private fail(collection: string, op: string | undefined, message: string): never {
    throw badRequest(`${this.dbName}.${collection}${op ? ` (${op})` : ''}: ${message}`);
  }

  /** The table `key` names, marked as changed; a missing collection or a view fails `op`. */
  private table(key: string, op: string): TableDraft {
    const entry = this.state.get(lower(key));
    if (!entry) return this.fail(key, op, `collection "${key}" does not exist.`);
    if (entry.kind === 'view') return this.fail(key, op, `"${key}" is a view; views change through drop_views and create_views.`);
    entry.touched = true;
    return entry;
  }

  /** Adds a column definition to a draft, adopting a same-named field unless that one is being dropped. */
  private mergeField(draft: TableDraft, spec: FieldSpec, drops: readonly string[] | undefined): void {
    if (automaticColumns(draft.type).has(lower(spec.name))) return; // system and auth columns are handled automatically
    const redefined = new Set((drops ?? []).map(lower));
    const at = draft.fields.findIndex((f) => lower(f.name) === lower(spec.name) && !(redefined.has(lower(f.name)) && draft.preMigration.has(f)));
    if (at >= 0) {
      draft.fields[at] = bodyOf(spec, draft.fields[at]);
      return;
    }
    // A redefined field keeps its place, right after the definition it replaces.
    const replaced = draft.fields.findIndex((f) => lower(f.name) === lower(spec.name));
    if (replaced >= 0) draft.fields.splice(replaced + 1, 0, bodyOf(spec));
    else draft.fields.push(bodyOf(spec));
  }

  /** create_table (with drop_table on the same collection: replace its metadata, adopt its table). */
  createTable(key: string, ops: CollectionOps): void {
    const ct = ops.create_table;
    if (!ct) return;
    if (lower(ct.name) !== lower(key)) this.fail(key, 'create_table', `the table is named "${ct.name}" under the collection "${key}".`);
    const current = this.state.get(lower(key));
    let draft: TableDraft;
    if (current?.kind === 'view') {
      draft = this.fail(key, 'create_table', `"${key}" exists as a view.`);
    } else if (current && ops.drop_table) {
      if (current.system) this.fail(key, 'drop_table', `"${current.name}" is a system collection and cannot be dropped.`);
      draft = newDraft(current.name, ct.type, ct.system ?? false, current.id);
      this.fts.delete(lower(key));
    } else if (current) {
      if (current.type !== ct.type) this.fail(key, 'create_table', `"${current.name}" exists as a ${current.type} collection, not ${ct.type}.`);
      draft = current;
      draft.touched = true;
    } else {
      draft = newDraft(ct.name, ct.type, ct.system ?? false);
    }
    this.state.set(lower(key), draft);
    for (const spec of ct.schema) this.mergeField(draft, spec, ops.drop_columns);
  }

  addColumns(key: string, ops: CollectionOps): void {
    if (!ops.add_columns) return;
    const draft = this.table(key, 'add_columns');
    for (const spec of ops.add_columns) this.mergeField(draft, spec, ops.drop_columns);
  }

  /** drop_columns: metadata only, the columns and their data stay in the table. */
  dropColumns(key: string, ops: CollectionOps): void {
    if (!ops.drop_columns || !this.state.has(lower(key))) return; // nothing left to drop
    const draft = this.table(key, 'drop_columns');
    for (const name of ops.drop_columns) {
      if (automaticColumns(draft.type).has(lower(name))) this.fail(key, 'drop_columns', `"${name}" is a system column and cannot be dropped.`);
      const old = draft.existing?.fields.find((f) => lower(f.name) === lower(name));
      if (!old || draft.existing === undefined) continue;
      if (old.system) this.fail(key, 'drop_columns', `"${old.name}" is a system field and cannot be dropped.`);
      draft.dropped.add(old.id);
      // By object, not id: a redefinition generated here re-adds the field under its old id.
      draft.fields = draft.fields.filter((f) => !(draft.preMigration.has(f) && f.id === old.id));
    }
  }

  /** drop_table (soft: metadata goes, the table and its data stay); with create_table, that one replaced it. */
  dropTable(key: string, ops: CollectionOps): void {
    if (!ops.drop_table || ops.create_table) return;
    const entry = this.state.get(lower(key));
    if (!entry) return;
    if (entry.kind === 'view') this.fail(key, 'drop_table', `"${key}" is a view; use drop_views.`);
    if (entry.system) this.fail(key, 'drop_table', `"${entry.name}" is a system collection and cannot be dropped.`);
    this.state.delete(lower(key));
    this.fts.delete(lower(key));
  }

  /** drop_indexes, then add_indexes (an index of the same name is replaced). */
  changeIndexes(key: string, ops: CollectionOps): void {
    if (ops.drop_indexes && this.state.has(lower(key))) {
      const draft = this.table(key, 'drop_indexes');
      const gone = new Set(ops.drop_indexes.map(lower));
      draft.indexes = draft.indexes.filter((sql) => !gone.has(lower(parseIndex(sql)?.name ?? '')));
    }
    if (!ops.add_indexes) return;
    const draft = this.table(key, 'add_indexes');
    for (const index of ops.add_indexes) {
      const parsed = parseIndex(index.sql);
      if (!parsed) this.fail(key, 'add_indexes', `"${index.name}": the SQL must be a single CREATE [UNIQUE] INDEX name ON table (columns) statement.`);
      if (lower(parsed.name) !== lower(index.name)) this.fail(key, 'add_indexes', `the SQL creates "${parsed.name}" but the entry is named "${index.name}".`);
      const at = draft.indexes.findIndex((sql) => lower(parseIndex(sql)?.name ?? '') === lower(index.name));
      if (at >= 0) draft.indexes[at] = index.sql;
      else draft.indexes.push(index.sql);
    }
  }

  dropViews(key: string, ops: CollectionOps): void {
    for (const name of ops.drop_views ?? []) {
      const entry = this.state.get(lower(name));
      if (!entry) continue;
      if (entry.kind !== 'view') this.fail(key, 'drop_views', `"${name}" is not a view.`);
      this.state.delete(lower(name));
    }
  }

  /** create_views: a view of the same name gets the new query and keeps its id and rules. */
  createViews(key: string, ops: CollectionOps): void {
    for (const spec of ops.create_views ?? []) {
      let query: string;
      try {
        query = viewQuery(spec.name, spec.sql);
      } catch (err) {
        query = this.fail(key, 'create_views', (err as Error).message);
      }
      const entry = this.state.get(lower(spec.name));
      if (entry && entry.kind !== 'view') this.fail(key, 'create_views', `a collection named "${entry.name}" already exists.`);
      const now = nowIso();
      const previous = entry?.collection;
      const collection: Collection = previous
        ? { ...previous, options: { ...previous.options, query }, updated: now }
        : { id: randomId(), name: spec.name, type: 'view', system: false, fields: [], options: { query }, ...noRules(), indexes: [], created: now, updated: now };
      this.state.set(lower(spec.name), { kind: 'view', collection });
    }
  }

  /** drop_fts, then create_fts (checked against the fields once the schema is final: ftsOf). */
  changeFts(key: string, ops: CollectionOps): void {
    if (ops.drop_fts) this.fts.delete(lower(key));
    if (!ops.create_fts) return;
    const draft = this.table(key, 'create_fts');
    if (ops.create_fts.tokenize !== undefined && !isValidTokenize(ops.create_fts.tokenize)) {
      this.fail(key, 'create_fts', 'tokenize may contain only letters, digits, "_" and spaces (e.g. "porter unicode61", "trigram").');
    }
    this.fts.set(lower(key), { name: draft.name, config: ops.create_fts });
  }

  /** update_rules: only the rules the file names change (a view's too). */
  updateRules(key: string, ops: CollectionOps): void {
    if (!ops.update_rules) return;
    const entry = this.state.get(lower(key));
    if (!entry) return this.fail(key, 'update_rules', `collection "${key}" does not exist.`);
    for (const rk of RULE_KEYS) {
      if (!(rk in ops.update_rules)) continue;
      const value = ops.update_rules[rk] ?? null;
      if (entry.kind === 'view') {
        entry.collection = { ...entry.collection, [RULE_FIELD[rk]]: value, updated: nowIso() };
      } else {
        entry.rules[RULE_FIELD[rk]] = value;
        entry.touched = true;
      }
    }
  }

  /**
   * The resulting collections, each changed one through the collections layer's own checks (rules
   * left to the caller, once every collection of the result is known); `changed` are those.
   */
  normalized(ctx: TransformContext): { collections: Collection[]; changed: Collection[] } {
    const finder = (nameOrId: string): Collection | undefined => {
      const entry = this.state.get(lower(nameOrId)) ?? [...this.state.values()].find((e) => (e.kind === 'view' ? e.collection.id : e.id) === nameOrId);
      if (!entry) return undefined;
      if (entry.kind === 'view') return entry.collection;
      return { id: entry.id, name: entry.name, type: entry.type } as Collection;
    };
    const collections: Collection[] = [];
    const changed: Collection[] = [];
    for (const entry of this.state.values()) {
      if (entry.kind === 'view') {
        // Its fields are known once the view exists: checkViewRules runs after realizeDatabase.
        collections.push(entry.collection);
        continue;
      }
      if (!entry.touched) {
        collections.push(entry.existing!);
        continue;
      }
      const existing = entry.existing ? { ...entry.existing, fields: entry.existing.fields.filter((f) => !entry.dropped.has(f.id)) } : undefined;
      const body = { id: entry.id, name: entry.name, type: entry.type, system: entry.system, fields: entry.fields, indexes: entry.indexes, options: entry.options, ...entry.rules };
      try {
        const normalized = normalizeCollection(body, existing, { find: finder, validateRule: NO_RULE_CHECK, validateOptions: ctx.validateOptions });
        const result = entry.created ? { ...normalized, created: entry.created } : normalized;
        collections.push(result);
        changed.push(result);
      } catch (err) {
        if (err instanceof ApiError && err.status === 400) this.fail(entry.name, undefined, describeValidation(err, entry.fields));
        throw err;
      }
    }
    return { collections, changed };
  }

  /** Every relation of the result points at a table of the result. */
  checkRelations(collections: readonly Collection[]): void {
    const final = new Map(collections.map((c) => [lower(c.name), c]));
    for (const c of collections) {
      if (c.type === 'view') continue;
      for (const f of c.fields) {
        if (f.type !== 'relation') continue;
        const target = final.get(lower(relationTarget(f)));
        if (!target) this.fail(c.name, undefined, `the relation field "${f.name}" points at "${relationTarget(f)}", which would no longer exist.`);
        if (target.type === 'view') this.fail(c.name, undefined, `the relation field "${f.name}" points at a view.`);
      }
    }
  }

  /** The full-text tables of the result, their fields checked against the final fields and spelled as those are. */
  ftsOf(collections: readonly Collection[]): Record<string, FtsConfig> {
    const final = new Map(collections.map((c) => [lower(c.name), c]));
    const out: Record<string, FtsConfig> = {};
    for (const { name, config } of this.fts.values()) {
      const c = final.get(lower(name));
      if (!c || c.type === 'view') return this.fail(name, 'create_fts', 'full-text indexes are for tables only.');
      const seen = new Set<string>();
      const fields: string[] = [];
      for (const fieldName of config.fields) {
        const field = c.fields.find((f) => lower(f.name) === lower(fieldName));
        if (!field) return this.fail(c.name, 'create_fts', `the full-text index uses "${fieldName}", which is not a field of "${c.name}" (drop_fts first to drop a field it uses).`);
        if (!SEARCHABLE_TYPES.has(field.type)) this.fail(c.name, 'create_fts', `"${field.name}" is a ${field.type} field; full-text indexes take ${[...SEARCHABLE_TYPES].join(', ')} fields.`);
        if (seen.has(lower(field.name))) this.fail(c.name, 'create_fts', `"${field.name}" is listed twice.`);
        seen.add(lower(field.name));
        fields.push(field.name);
      }
      out[c.name] = { ...config, fields };
    }
    return out;
  }
}

/** Checks the rules of a database's views, whose fields are inferred when the views are created. */
export function checkViewRules(dbName: string, schema: DatabaseSchema, ctx: TransformContext): void {
  checkRules(
    dbName,
    schema.collections.filter((c) => c.type === 'view'),
    schema.collections,
    ctx,
  );
}
