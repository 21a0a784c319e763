import { typeOf } from '../collections/fields/registry.ts';
import type { Collection, FieldDef } from '../collections/model.ts';
import { normalizeCollection } from '../collections/normalize.ts';
import { deleteCollectionRow, insertCollection } from '../collections/store.ts';
import { syncTable } from '../collections/table-sync.ts';
import { badRequest } from '../errors.ts';
import { isRecordKey } from '../lib/ids.ts';
import { quoteIdent } from '../lib/identifiers.ts';
import { createView, viewQuery } from '../migrations/views.ts';
import type { Queryable, Transaction } from '../storage/index.ts';
import { checkRules, type PlannedCollection, type PlanTarget } from './plan.ts';
import type { Note } from './schema.ts';
import type { PbAuthOrigin, PbExternalAuth, PocketBaseSource } from './source.ts';
import { toDate } from './values.ts';

/**
 * Writing the planned collections in the import's transaction: tables through the collections
 * domain's `syncTable` (never DDL of its own, except dropping an empty default `users` column whose
 * type PocketBase's field changes), records with multi-row INSERTs, then the collections' indexes
 * (after the data: faster, and an index the data violates is reported instead of failing the import),
 * views, metadata rows, OAuth2 links and sign-in origins.
 */

/** Rows per INSERT: many rows per statement is what makes a large copy fast; both databases take
 * tens of thousands of parameters per statement (SQLite 32,766, PostgreSQL 65,535). */
const MAX_ROWS_PER_INSERT = 500;
const MAX_PARAMS_PER_INSERT = 30_000;

/** Records copied per collection, and the ids of auth records (OAuth2 links need them). */
export interface CopyResult {
  records: number;
  skipped: string[];
  ids?: Set<string>;
  /** Auth records without an email (they cannot sign in with a password on Cairn). */
  withoutEmail: number;
}

/**
 * Creates a planned table, or for PocketBase's `users` reshapes Cairn's empty default one. The
 * collection's own indexes come later (`addIndexes`).
 */
export async function createTable(tx: Transaction, p: PlannedCollection): Promise<void> {
  const bare = { ...p.collection, indexes: [] };
  if (!p.replaces) {
    await syncTable(tx, undefined, bare);
    return;
  }
  // The table is empty: a column whose storage PocketBase's field of that name changes (Cairn's text
  // `role` becoming a multiple select) is dropped, and syncTable adds it back with its new type.
  const before = new Map(p.replaces.fields.map((f) => [f.name.toLowerCase(), f]));
  for (const field of p.collection.fields) {
    const old = before.get(field.name.toLowerCase());
    if (!old || old.id === field.id) continue;
    const definition = (f: typeof field) => tx.dialect.columnDefinition(typeOf(f).kind, typeOf(f).multiple(f));
    if (definition(old) !== definition(field)) await tx.exec(`ALTER TABLE ${quoteIdent(p.collection.name)} DROP COLUMN ${quoteIdent(old.name)}`);
  }
  await syncTable(tx, p.replaces, bare);
  await deleteCollectionRow(tx, p.replaces.id);
}

function valuesList(rows: number, columns: number): string {
  const row = `(${new Array(columns).fill('?').join(', ')})`;
  return new Array(rows).fill(row).join(', ');
}

/** Copies a collection's records in PocketBase's insertion order. */
export async function copyRecords(tx: Queryable, source: PocketBaseSource, p: PlannedCollection): Promise<CopyResult> {
  const table = p.collection.name;
  const names = p.columns.map((c) => quoteIdent(c.column)).join(', ');
  const perInsert = Math.max(1, Math.min(MAX_ROWS_PER_INSERT, Math.floor(MAX_PARAMS_PER_INSERT / p.columns.length)));
  const fullText = `INSERT INTO ${quoteIdent(table)} (${names}) VALUES ${valuesList(perInsert, p.columns.length)}`;
  const converters = p.columns.map((c) => c.convert);
  const result: CopyResult = { records: 0, skipped: [], ids: p.collection.type === 'auth' ? new Set() : undefined, withoutEmail: 0 };
  const email = p.collection.type === 'auth' ? p.columns.findIndex((c) => c.column === 'email') : -1;
  let params: unknown[] = [];
  let rows = 0;
  const flush = async () => {
    if (rows === 0) return;
    try {
      await tx.run(rows === perInsert ? fullText : `INSERT INTO ${quoteIdent(table)} (${names}) VALUES ${valuesList(rows, p.columns.length)}`, params);
    } catch (err) {
      const kind = tx.dialect.classifyError(err);
      if (kind.kind === 'unique') {
        throw badRequest(`Records of "${table}" share a value that Cairn keeps unique (${kind.columns.join(', ') || 'a unique column'}): nothing was imported.`);
      }
      throw err;
    }
    result.records += rows;
    params = [];
    rows = 0;
  };
  for (const raw of source.rows(p.draft.pb.name, p.columns.map((c) => c.source))) {
    const id = raw[0];
    // An id that cannot name the record's folder of files (a `/`, a `.`, whitespace …) is not carried.
    if (!isRecordKey(id)) {
      result.skipped.push(String(id));
      continue;
    }
    result.ids?.add(id);
    if (email >= 0 && (raw[email] === '' || raw[email] === null)) result.withoutEmail++;
    for (let i = 0; i < raw.length; i++) params.push(converters[i](raw[i]));
    if (++rows === perInsert) await flush();
  }
  await flush();
  return result;
}

/** Adds the collection's PocketBase indexes one by one; one that fails is reported, not fatal. */
export async function addIndexes(tx: Transaction, p: PlannedCollection, notes: Note[]): Promise<void> {
  let current: Collection = { ...p.collection, indexes: [] };
  for (const sql of p.draft.indexes) {
    let next: Collection;
    try {
      // The collections API's checks: one CREATE INDEX on this table, no name Cairn keeps for itself.
      next = { ...current, indexes: normalizeCollection({ indexes: [...current.indexes, sql] }, current, { find: () => undefined, validateRule: () => undefined, validateOptions: [] }).indexes };
    } catch (err) {
      notes.push({ what: `${p.collection.name} index`, why: `${JSON.stringify(sql)} is not carried: ${firstMessage(err)}`, kind: 'not-carried' });
      continue;
    }
    try {
      // A savepoint: on PostgreSQL a failed statement would otherwise abort the whole import.
      await tx.transaction((inner) => syncTable(inner, current, next));
      current = next;
    } catch (err) {
      notes.push({ what: `${p.collection.name} index`, why: `${JSON.stringify(sql)} is not carried: ${firstMessage(err)}`, kind: 'not-carried' });
    }
  }
  p.collection = { ...p.collection, indexes: current.indexes };
}

function firstMessage(err: unknown): string {
  const e = err as { message?: string; data?: Record<string, unknown> };
  const data = e.data ? Object.values(e.data).flatMap((v) => (typeof v === 'object' && v !== null ? Object.values(v as object) : [])) : [];
  const detail = data.find((d): d is { message: string } => typeof (d as { message?: unknown })?.message === 'string');
  return detail?.message ?? e.message ?? String(err);
}

/**
 * PocketBase's definition of a view column (its type and options: a relation, a select, a file …)
 * where Cairn can hold it; Cairn's inferred one otherwise.
 */
function viewField(inferred: FieldDef, p: PlannedCollection, all: readonly Collection[]): FieldDef {
  const pb = p.draft.fields.find((f) => f.body.name === inferred.name);
  if (!pb || pb.body.type === inferred.type) return pb ? { ...inferred, id: String(pb.body.id ?? inferred.id) } : inferred;
  const lower = (s: string) => s.toLowerCase();
  try {
    const [field] = normalizeCollection({ name: p.collection.name, type: 'base', fields: [pb.body] }, undefined, {
      find: (nameOrId) => all.find((c) => lower(c.name) === lower(nameOrId) || c.id === nameOrId),
      validateRule: () => undefined,
      validateOptions: [],
    }).fields;
    return field ?? inferred;
  } catch {
    return inferred;
  }
}

/** Creates a view (its fields inferred from its columns, PocketBase's definitions laid over them); one Cairn cannot create is reported. */
export async function createViewCollection(tx: Transaction, p: PlannedCollection, all: () => readonly Collection[], target: Pick<PlanTarget, 'checkRule'>, notes: Note[]): Promise<boolean> {
  try {
    const query = viewQuery(p.collection.name, String(p.collection.options.query ?? ''));
    const inferred = await tx.transaction((inner) => createView(inner, p.collection.name, query));
    const fields = inferred.map((f) => viewField(f, p, all()));
    p.collection = { ...p.collection, fields, options: { ...p.collection.options, query } };
    const held = new Map(fields.map((f) => [f.name, f.type]));
    const changed = p.draft.pb.fields.filter((f) => held.has(f.name) && held.get(f.name) !== f.type);
    if (changed.length > 0) {
      notes.push({
        what: p.collection.name,
        why: `a view's fields are what Cairn reads from its columns: ${changed.map((f) => `${f.name} is ${held.get(f.name)} (${f.type} in PocketBase)`).join(', ')}`,
        kind: 'changed',
      });
    }
  } catch (err) {
    notes.push({ what: p.collection.name, why: `view not carried: ${firstMessage(err)}`, kind: 'not-carried' });
    return false;
  }
  checkRules(p, all(), target, notes);
  await insertCollection(tx, p.collection);
  return true;
}

/** Copies OAuth2 links of carried auth records into `_externalAuths`. */
export async function copyLinks(tx: Queryable, links: readonly PbExternalAuth[], carried: Map<string, { collectionId: string; ids: Set<string> }>): Promise<{ carried: number; skipped: number }> {
  let count = 0;
  let skipped = 0;
  for (const link of links) {
    const owner = carried.get(link.collectionId);
    if (!owner || !owner.ids.has(link.recordId)) {
      skipped++;
      continue;
    }
    const now = new Date().toISOString();
    await tx.run('INSERT INTO _externalAuths (id, collectionRef, recordRef, provider, providerId, created, updated) VALUES (?, ?, ?, ?, ?, ?, ?)', [
      link.id,
      owner.collectionId,
      link.recordId,
      link.provider,
      link.providerId,
      toDate(link.created) || now,
      toDate(link.updated) || now,
    ]);
    count++;
  }
  return { carried: count, skipped };
}

/** Where a PocketBase account is in Cairn: its collection's id and its record's (an administrator's) id there. */
export type OwnerOf = (collectionId: string, recordId: string) => { collectionRef: string; recordRef: string } | undefined;

/**
 * Copies the sign-in origins (`_authOrigins`: the devices accounts signed in from) of carried
 * accounts, with their ids and dates. A row the target database already holds (the same id, or the
 * same account and device) is kept as it is.
 */
export async function copyOrigins(tx: Queryable, origins: readonly PbAuthOrigin[], ownerOf: OwnerOf): Promise<{ carried: number; skipped: number }> {
  let count = 0;
  let skipped = 0;
  for (const origin of origins) {
    const owner = ownerOf(origin.collectionId, origin.recordId);
    if (!owner || !isRecordKey(origin.id)) {
      skipped++;
      continue;
    }
    const now = new Date().toISOString();
    const res = await tx.run(
      'INSERT INTO _authOrigins (id, collectionRef, recordRef, fingerprint, created, updated) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING',
      [origin.id, owner.collectionRef, owner.recordRef, String(origin.fingerprint ?? ''), toDate(origin.created) || now, toDate(origin.updated) || now],
    );
    if (res.changes > 0) count++;
    else skipped++;
  }
  return { carried: count, skipped };
}
