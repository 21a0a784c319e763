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
  const fail = (collection: string, op: string | undefined, message: string): never => {
    throw badRequest(`${dbName}.${collection}${op ? ` (${op})` : ''}: ${message}`);
  };
  const state = new Map<string, Entry>();
  for (const c of before.collections) {
    state.set(lower(c.name), c.type === 'view' ? { kind: 'view', collection: c } : draftOf(c));
  }
  const fts = new Map<string, { name: string; config: FtsConfig }>();
  for (const [name, config] of Object.entries(before.fts)) fts.set(lower(name), { name, config });

  const table = (key: string, op: string): TableDraft => {
    const entry = state.get(lower(key));
    if (!entry) return fail(key, op, `collection "${key}" does not exist.`);
    if (entry.kind === 'view') return fail(key, op, `"${key}" is a view; views change through drop_views and create_views.`);
    entry.touched = true;
    return entry;
  };

  /** Adds a column definition to a draft, adopting a same-named field unless that one is being dropped. */
  const mergeField = (draft: TableDraft, spec: FieldSpec, drops: readonly string[] | undefined) => {
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
  };

  // 1. create_table (with drop_table on the same collection: replace its metadata, adopt its table).
  for (const [key, ops] of Object.entries(operations)) {
    const ct = ops.create_table;
    if (!ct) continue;
    if (lower(ct.name) !== lower(key)) fail(key, 'create_table', `the table is named "${ct.name}" under the collection "${key}".`);
    const current = state.get(lower(key));
    let draft: TableDraft;
    if (current?.kind === 'view') {
      draft = fail(key, 'create_table', `"${key}" exists as a view.`);
    } else if (current && ops.drop_table) {
      if (current.system) fail(key, 'drop_table', `"${current.name}" is a system collection and cannot be dropped.`);
      draft = newDraft(current.name, ct.type, ct.system ?? false, current.id);
      fts.delete(lower(key));
    } else if (current) {
      if (current.type !== ct.type) fail(key, 'create_table', `"${current.name}" exists as a ${current.type} collection, not ${ct.type}.`);
      draft = current;
      draft.touched = true;
    } else {
      draft = newDraft(ct.name, ct.type, ct.system ?? false);
    }
    state.set(lower(key), draft);
    for (const spec of ct.schema) mergeField(draft, spec, ops.drop_columns);
  }

  // 2. add_columns.
  for (const [key, ops] of Object.entries(operations)) {
    if (!ops.add_columns) continue;
    const draft = table(key, 'add_columns');
    for (const spec of ops.add_columns) mergeField(draft, spec, ops.drop_columns);
  }

  // 3. drop_columns: metadata only, the columns and their data stay in the table.
  for (const [key, ops] of Object.entries(operations)) {
    if (!ops.drop_columns) continue;
    const entry = state.get(lower(key));
    if (!entry) continue; // nothing left to drop
    const draft = table(key, 'drop_columns');
    for (const name of ops.drop_columns) {
      if (automaticColumns(draft.type).has(lower(name))) fail(key, 'drop_columns', `"${name}" is a system column and cannot be dropped.`);
      const old = draft.existing?.fields.find((f) => lower(f.name) === lower(name));
      if (!old || draft.existing === undefined) continue;
      if (old.system) fail(key, 'drop_columns', `"${old.name}" is a system field and cannot be dropped.`);
      draft.dropped.add(old.id);
      // By object, not id: a redefinition generated here re-adds the field under its old id.
      draft.fields = draft.fields.filter((f) => !(draft.preMigration.has(f) && f.id === old.id));
    }
  }

  // 3b. drop_table (soft: metadata goes, the table and its data stay).
  for (const [key, ops] of Object.entries(operations)) {
    if (!ops.drop_table || ops.create_table) continue;
    const entry = state.get(lower(key));
    if (!entry) continue;
    if (entry.kind === 'view') fail(key, 'drop_table', `"${key}" is a view; use drop_views.`);
    if ((entry as TableDraft).system) fail(key, 'drop_table', `"${(entry as TableDraft).name}" is a system collection and cannot be dropped.`);
    state.delete(lower(key));
    fts.delete(lower(key));
  }

  // 4. Indexes, views, full-text tables.
  for (const [key, ops] of Object.entries(operations)) {
    if (ops.drop_indexes && state.has(lower(key))) {
      const draft = table(key, 'drop_indexes');
      const gone = new Set(ops.drop_indexes.map(lower));
      draft.indexes = draft.indexes.filter((sql) => !gone.has(lower(parseIndex(sql)?.name ?? '')));
    }
    if (ops.add_indexes) {
      const draft = table(key, 'add_indexes');
      for (const index of ops.add_indexes) {
        const parsed = parseIndex(index.sql);
        if (!parsed) fail(key, 'add_indexes', `"${index.name}": the SQL must be a single CREATE [UNIQUE] INDEX name ON table (columns) statement.`);
        if (lower(parsed!.name) !== lower(index.name)) fail(key, 'add_indexes', `the SQL creates "${parsed!.name}" but the entry is named "${index.name}".`);
        const at = draft.indexes.findIndex((sql) => lower(parseIndex(sql)?.name ?? '') === lower(index.name));
        if (at >= 0) draft.indexes[at] = index.sql;
        else draft.indexes.push(index.sql);
      }
    }
  }
  for (const [key, ops] of Object.entries(operations)) {
    for (const name of ops.drop_views ?? []) {
      const entry = state.get(lower(name));
      if (!entry) continue;
      if (entry.kind !== 'view') fail(key, 'drop_views', `"${name}" is not a view.`);
      state.delete(lower(name));
    }
  }
  for (const [key, ops] of Object.entries(operations)) {
    for (const spec of ops.create_views ?? []) {
      let query: string;
      try {
        query = viewQuery(spec.name, spec.sql);
      } catch (err) {
        query = fail(key, 'create_views', (err as Error).message);
      }
      const entry = state.get(lower(spec.name));
      if (entry && entry.kind !== 'view') fail(key, 'create_views', `a collection named "${entry.name}" already exists.`);
      const now = nowIso();
      const previous = (entry as ViewEntry | undefined)?.collection;
      const collection: Collection = previous
        ? { ...previous, options: { ...previous.options, query }, updated: now }
        : {
            id: randomId(),
            name: spec.name,
            type: 'view',
            system: false,
            fields: [],
            options: { query },
            ...noRules(),
            indexes: [],
            created: now,
            updated: now,
          };
      state.set(lower(spec.name), { kind: 'view', collection });
    }
  }
  for (const [key, ops] of Object.entries(operations)) {
    if (ops.drop_fts) fts.delete(lower(key));
    if (ops.create_fts) {
      const draft = table(key, 'create_fts');
      if (ops.create_fts.tokenize !== undefined && !isValidTokenize(ops.create_fts.tokenize)) {
        fail(key, 'create_fts', 'tokenize may contain only letters, digits, "_" and spaces (e.g. "porter unicode61", "trigram").');
      }
      fts.set(lower(key), { name: draft.name, config: ops.create_fts });
    }
  }

  // 5. update_rules.
  for (const [key, ops] of Object.entries(operations)) {
    if (!ops.update_rules) continue;
    const entry = state.get(lower(key));
    if (!entry) fail(key, 'update_rules', `collection "${key}" does not exist.`);
    for (const rk of RULE_KEYS) {
      if (!(rk in ops.update_rules)) continue;
      const value = ops.update_rules[rk] ?? null;
      if (entry!.kind === 'view') {
        entry!.collection = { ...entry!.collection, [RULE_FIELD[rk]]: value, updated: nowIso() };
      } else {
        entry!.rules[RULE_FIELD[rk]] = value;
        entry!.touched = true;
      }
    }
  }

  // Validate the result: every changed collection through the collections layer's own checks.
  const finder = (nameOrId: string): Collection | undefined => {
    const entry = state.get(lower(nameOrId)) ?? [...state.values()].find((e) => (e.kind === 'view' ? e.collection.id : e.id) === nameOrId);
    if (!entry) return undefined;
    if (entry.kind === 'view') return entry.collection;
    return { id: entry.id, name: entry.name, type: entry.type } as Collection;
  };
  const collections: Collection[] = [];
  const changed: Collection[] = [];
  for (const entry of state.values()) {
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
      // Rules are checked below, once every collection of the result is known.
      const normalized = normalizeCollection(body, existing, { find: finder, validateRule: NO_RULE_CHECK, validateOptions: ctx.validateOptions });
      const result = entry.created ? { ...normalized, created: entry.created } : normalized;
      collections.push(result);
      changed.push(result);
    } catch (err) {
      if (err instanceof ApiError && err.status === 400) fail(entry.name, undefined, describeValidation(err, entry.fields));
      throw err;
    }
  }

  checkRules(dbName, changed, collections, ctx);

  const final = new Map(collections.map((c) => [lower(c.name), c]));
  for (const c of collections) {
    if (c.type === 'view') continue;
    for (const f of c.fields) {
      if (f.type !== 'relation') continue;
      const target = final.get(lower(relationTarget(f)));
      if (!target) fail(c.name, undefined, `the relation field "${f.name}" points at "${relationTarget(f)}", which would no longer exist.`);
      if (target!.type === 'view') fail(c.name, undefined, `the relation field "${f.name}" points at a view.`);
    }
  }
  const ftsOut: Record<string, FtsConfig> = {};
  for (const { name, config } of fts.values()) {
    const c = final.get(lower(name));
    if (!c || c.type === 'view') fail(name, 'create_fts', 'full-text indexes are for tables only.');
    const seen = new Set<string>();
    const fields: string[] = [];
    for (const fieldName of config.fields) {
      const field = c!.fields.find((f) => lower(f.name) === lower(fieldName));
      if (!field) fail(c!.name, 'create_fts', `the full-text index uses "${fieldName}", which is not a field of "${c!.name}" (drop_fts first to drop a field it uses).`);
      if (!SEARCHABLE_TYPES.has(field!.type)) fail(c!.name, 'create_fts', `"${field!.name}" is a ${field!.type} field; full-text indexes take ${[...SEARCHABLE_TYPES].join(', ')} fields.`);
      if (seen.has(lower(field!.name))) fail(c!.name, 'create_fts', `"${field!.name}" is listed twice.`);
      seen.add(lower(field!.name));
      fields.push(field!.name);
    }
    ftsOut[c!.name] = { ...config, fields };
  }
  return { collections, fts: ftsOut };
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
