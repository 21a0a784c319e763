import type { Collection, FieldDef } from '../collections/model.ts';
import { parseIndex } from '../collections/table-sync.ts';
import { sameJson } from '../lib/canonical-json.ts';
import {
  type CollectionOps,
  type DatabaseSchema,
  EMPTY_DATABASE_SCHEMA,
  type FieldSpec,
  type FtsConfig,
  type IndexSpec,
  type InstanceSchema,
  type Migration,
  type RulesSpec,
} from './model.ts';

/**
 * The planner: a pure diff of two schemas into the operations of a migration file. Collections and
 * fields are matched by name (case-insensitive, as SQLite names are), never by id, so a plan made on
 * one instance means the same on another. A field whose definition changed is dropped and re-added
 * under the same name: the column and its data stay, the metadata is replaced.
 */

const lower = (s: string) => s.toLowerCase();

/** A field as a migration file writes it; relation targets by name (`toCollection`), ids being per instance. */
export function fieldSpecOf(field: FieldDef): FieldSpec {
  const options = { ...field.options };
  if (field.type === 'relation') delete options.collectionId;
  const spec: FieldSpec = {
    id: field.id,
    name: field.name,
    type: field.type,
    required: field.required,
    unique: field.unique,
    hidden: field.hidden,
    system: field.system,
    default: field.default ?? null,
    options,
  };
  if (field.presentable) spec.presentable = true;
  return spec;
}

function withoutId(spec: FieldSpec): FieldSpec {
  const { id: _id, ...rest } = spec;
  return { ...rest, presentable: rest.presentable === true };
}

export function sameField(a: FieldDef, b: FieldDef): boolean {
  return sameJson(withoutId(fieldSpecOf(a)), withoutId(fieldSpecOf(b)));
}

export function rulesOf(c: Collection): Required<RulesSpec> {
  return { list: c.listRule, view: c.viewRule, create: c.createRule, update: c.updateRule, delete: c.deleteRule };
}

export function indexSpecsOf(c: Collection): IndexSpec[] {
  return c.indexes.flatMap((sql) => {
    const parsed = parseIndex(sql);
    return parsed ? [{ name: parsed.name, sql }] : [];
  });
}

function sameFts(a: FtsConfig | undefined, b: FtsConfig | undefined): boolean {
  return sameJson(a ?? null, b ?? null);
}

function ftsOf(schema: DatabaseSchema, name: string): FtsConfig | undefined {
  const key = Object.keys(schema.fts).find((k) => lower(k) === lower(name));
  return key === undefined ? undefined : schema.fts[key];
}

function createdOps(c: Collection, schema: DatabaseSchema): CollectionOps {
  if (c.type === 'view') {
    const ops: CollectionOps = { create_views: [{ name: c.name, sql: String(c.options.query ?? '') }] };
    if (Object.values(rulesOf(c)).some((r) => r !== null)) ops.update_rules = rulesOf(c);
    return ops;
  }
  const ops: CollectionOps = {
    create_table: { name: c.name, type: c.type, system: c.system, schema: c.fields.map(fieldSpecOf) },
  };
  const indexes = indexSpecsOf(c);
  if (indexes.length > 0) ops.add_indexes = indexes;
  const fts = ftsOf(schema, c.name);
  if (fts) ops.create_fts = fts;
  if (Object.values(rulesOf(c)).some((r) => r !== null)) ops.update_rules = rulesOf(c);
  return ops;
}

function changedOps(from: Collection, to: Collection, fromSchema: DatabaseSchema, toSchema: DatabaseSchema): CollectionOps {
  const ops: CollectionOps = {};
  if (to.type === 'view') {
    if (from.options.query !== to.options.query) {
      ops.drop_views = [from.name];
      ops.create_views = [{ name: to.name, sql: String(to.options.query ?? '') }];
    }
  } else {
    const before = new Map(from.fields.map((f) => [lower(f.name), f]));
    const after = new Map(to.fields.map((f) => [lower(f.name), f]));
    const dropped = from.fields.filter((f) => {
      const next = after.get(lower(f.name));
      return !next || !sameField(f, next);
    });
    const added = to.fields.filter((f) => {
      const prev = before.get(lower(f.name));
      return !prev || !sameField(prev, f);
    });
    if (dropped.length > 0) ops.drop_columns = dropped.map((f) => f.name);
    if (added.length > 0) ops.add_columns = added.map(fieldSpecOf);

    const oldIndexes = new Map(indexSpecsOf(from).map((i) => [lower(i.name), i]));
    const newIndexes = new Map(indexSpecsOf(to).map((i) => [lower(i.name), i]));
    const droppedIndexes = [...oldIndexes.values()].filter((i) => newIndexes.get(lower(i.name))?.sql !== i.sql);
    const addedIndexes = [...newIndexes.values()].filter((i) => oldIndexes.get(lower(i.name))?.sql !== i.sql);
    if (droppedIndexes.length > 0) ops.drop_indexes = droppedIndexes.map((i) => i.name);
    if (addedIndexes.length > 0) ops.add_indexes = addedIndexes;

    const oldFts = ftsOf(fromSchema, from.name);
    const newFts = ftsOf(toSchema, to.name);
    if (!sameFts(oldFts, newFts)) {
      if (oldFts) ops.drop_fts = true;
      if (newFts) ops.create_fts = newFts;
    }
  }
  if (!sameJson(rulesOf(from), rulesOf(to))) ops.update_rules = rulesOf(to);
  return ops;
}

/** The operations that turn `from` into `to` for one database, by collection; unchanged ones left out. */
export function planDatabase(from: DatabaseSchema, to: DatabaseSchema): Record<string, CollectionOps> {
  const out: Record<string, CollectionOps> = {};
  const before = new Map(from.collections.map((c) => [lower(c.name), c]));
  const after = new Set(to.collections.map((c) => lower(c.name)));
  for (const c of to.collections) {
    const prev = before.get(lower(c.name));
    let ops: CollectionOps;
    if (!prev) ops = createdOps(c, to);
    else if (prev.type !== c.type) {
      // Dropped and re-created as another kind: both halves, the drop applying to the old definition.
      ops = { ...(prev.type === 'view' ? { drop_views: [prev.name] } : { drop_table: true }), ...createdOps(c, to) };
    } else ops = changedOps(prev, c, from, to);
    if (Object.keys(ops).length > 0) out[c.name] = ops;
  }
  for (const c of from.collections) {
    if (after.has(lower(c.name))) continue;
    out[c.name] = c.type === 'view' ? { drop_views: [c.name] } : { drop_table: true };
  }
  return out;
}

/** The `databases` map of a migration from `from` to `to`; databases without changes left out. */
export function planMigration(from: InstanceSchema, to: InstanceSchema): Migration['databases'] {
  const out: Migration['databases'] = {};
  for (const db of Object.keys(to).sort()) {
    const collections = planDatabase(from[db] ?? EMPTY_DATABASE_SCHEMA, to[db]);
    if (Object.keys(collections).length > 0) out[db] = { collections };
  }
  return out;
}
