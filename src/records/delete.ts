import { relationTarget } from '../collections/fields/relation.ts';
import { typeOf } from '../collections/fields/registry.ts';
import type { Collection, FieldDef } from '../collections/model.ts';
import type { CollectionSet } from '../collections/service.ts';
import type { RequestContext } from '../context.ts';
import { badRequest, notFound } from '../errors.ts';
import { quoteIdent } from '../lib/identifiers.ts';
import { raw, type Row, sql, type Transaction } from '../storage/index.ts';
import type { RecordDeps } from './deps.ts';
import { selectByIdToWrite } from './read.ts';
import { serializeRecord } from './serialize.ts';
import { type ConditionTexts, conditionText, type RecordShape, ROOT_ALIAS, shapeOf } from './shape.ts';
import { applyDerivedUpdate } from './write/update.ts';
import { PRIVILEGED_VIEWER } from './viewer.ts';
import { runHooked } from './write/chain.ts';
import { Change, changeWritesNothing, emit } from './write/change.ts';
import { type RecordWrite, type WriteScope, writeScope } from './write/plan.ts';
import { written } from './write/statement.ts';

export async function prepareDelete(deps: RecordDeps, ctx: RequestContext, collection: Collection, id: string): Promise<RecordWrite> {
  return planDelete(await writeScope(deps, ctx, collection), id);
}

export async function planDelete(s: WriteScope, id: string): Promise<RecordWrite> {
  const access = s.deps.access.condition(s.ctx, s.collection, 'delete', s.collections);
  return {
    action: 'delete',
    async apply(tx, alone = false) {
      if (deletesAlone(s)) {
        const text = deleteByIdText(s.shape, access?.text ?? '');
        const params = access ? [id, ...access.params] : [id];
        // Nothing written after the DELETE: it ends the transaction (a round trip fewer on PostgreSQL).
        const last = alone && changeWritesNothing(s.deps, s.collection, 'delete');
        const gone = await written(tx, last, text, params);
        if (!gone) throw notFound();
        return announce(s, tx, gone);
      }
      await lockReferencing(s, tx, id);
      const row = await selectByIdToWrite(tx, s.shape, id, access, 'delete');
      if (!row) throw notFound();
      await deleteWithReferences(s, tx, row, new Set());
    },
    answer: async () => undefined,
  };
}

/**
 * Whether a delete of this collection touches nothing but its own row: no application hook must see
 * the record before it goes, and no relation field points at the collection. Such a delete is one
 * statement, `DELETE … RETURNING` under the rule's condition, instead of a read and then a delete
 * (on PostgreSQL a round trip fewer); a record the caller may not delete is simply not matched (404),
 * as the read would not have found it.
 */
function deletesAlone(s: WriteScope): boolean {
  return !s.deps.events?.around('delete', s.collection) && referencesTo(s.collections, s.collection).length === 0;
}

const deleteTexts: ConditionTexts = new WeakMap();

// RETURNING names the table's columns unqualified: SQLite does not accept the alias there.
const deleteUnder = (shape: RecordShape, condition: string) =>
  `DELETE FROM ${shape.table} AS ${ROOT_ALIAS} WHERE ${ROOT_ALIAS}.id = ?${condition === '' ? '' : ` AND (${condition})`} RETURNING ${shape.returningList}`;

function deleteByIdText(shape: RecordShape, condition: string): string {
  return conditionText(deleteTexts, shape, condition, deleteUnder);
}

/**
 * Deletes a record and settles what points at it, as PocketBase does: records related through a
 * `cascadeDelete` field are deleted too, other references are cleared, and a reference from a
 * required field that would become empty refuses the whole delete. Each record deleted or changed
 * on the way is a write of its own for the application hooks (`onRecordDelete`, `onRecordUpdate`),
 * as when PocketBase's `app.Delete` cascades.
 */
async function deleteWithReferences(s: WriteScope, tx: Transaction, row: Row, visited: Set<string>): Promise<void> {
  const { deps, collection } = s;
  const key = `${collection.id}/${row.id as string}`;
  if (visited.has(key)) return;
  visited.add(key);
  const around = deps.events?.around('delete', collection);
  if (!around) return removeRecord(s, tx, row, visited);
  await runHooked(around, s, tx, () => serializeRecord(row, s.shape, PRIVILEGED_VIEWER), undefined, async () => {
    await removeRecord(s, tx, row, visited);
    return serializeRecord(row, s.shape, PRIVILEGED_VIEWER);
  });
}

/** A relation field that can point at a collection, with what the delete's lookup needs of it. */
interface Reference {
  source: Collection;
  field: FieldDef;
  multiple: boolean;
  column: string;
}

/**
 * The relation fields pointing at each collection, by lower-cased name. Collection sets are
 * immutable and replaced on every schema change, so the index is made once per set instead of
 * walking every field of every collection on each delete.
 */
const referenceIndexes = new WeakMap<CollectionSet, Map<string, Reference[]>>();

function referencesTo(collections: CollectionSet, collection: Collection): readonly Reference[] {
  let index = referenceIndexes.get(collections);
  if (!index) {
    index = new Map();
    for (const source of collections.list) {
      if (source.type === 'view') continue;
      for (const field of source.fields) {
        if (field.type !== 'relation') continue;
        const target = relationTarget(field).toLowerCase();
        const ref = { source, field, multiple: typeOf(field).multiple(field), column: `${ROOT_ALIAS}.${quoteIdent(field.name)}` };
        const list = index.get(target);
        if (list) list.push(ref);
        else index.set(target, [ref]);
      }
    }
    referenceIndexes.set(collections, index);
  }
  return index.get(collection.name.toLowerCase()) ?? [];
}

/**
 * The records pointing at `id` through `ref`, locked, in id order, and read as they are once the
 * lock is had (PostgreSQL re-reads a row a concurrent write held): a delete of another record these
 * point at, or a PATCH of one of them, that committed meanwhile is what this delete's change of them
 * is computed from, instead of being undone by it.
 */
function referencing(tx: Transaction, ref: Reference, id: string, columns: string): Promise<Row[]> {
  const match = ref.multiple
    ? sql`EXISTS (SELECT 1 FROM ${raw(tx.dialect.jsonEach(ref.column, 'jr'))} WHERE jr.value = ${id})`
    : sql`${raw(ref.column)} = ${id}`;
  const q = sql`SELECT ${raw(columns)} FROM ${raw(shapeOf(ref.source).table)} ${raw(ROOT_ALIAS)} WHERE ${match} ORDER BY ${raw(ROOT_ALIAS)}.id${raw(tx.dialect.lockForWrite(ROOT_ALIAS))}`;
  return tx.all<Row>(q.text, q.params);
}

/**
 * On PostgreSQL, the records pointing at the one about to be deleted are locked before it: a PATCH
 * of one of them locks it and then the records it points at, so taking them in that order too keeps
 * the two from waiting on each other in a circle. Records that come to point at it after this are
 * read again once it is locked (after which no write can point at it until this one ends).
 */
async function lockReferencing(s: WriteScope, tx: Transaction, id: string): Promise<void> {
  if (tx.dialect.lockForWrite(ROOT_ALIAS) === '') return;
  for (const ref of referencesTo(s.collections, s.collection)) await referencing(tx, ref, id, `${ROOT_ALIAS}.id`);
}

async function removeRecord(s: WriteScope, tx: Transaction, row: Row, visited: Set<string>): Promise<void> {
  const { collections, collection } = s;
  const id = row.id as string;
  for (const reference of referencesTo(collections, collection)) {
    const { source, field, multiple } = reference;
    const sourceShape = shapeOf(source);
    // Records pointing here are changed or deleted by Cairn itself, whoever asked for this delete.
    const sourceScope: WriteScope = { ...s, collection: source, shape: sourceShape, privileged: true };
    const refs = await referencing(tx, reference, id, sourceShape.selectList);
    for (const ref of refs) {
      if (ref.id === id && source.id === collection.id) continue;
      if (field.options.cascadeDelete === true) {
        await deleteWithReferences(sourceScope, tx, ref, visited);
        continue;
      }
      const current = typeOf(field).fromDb(ref[field.name], field);
      const next = multiple ? (current as string[]).filter((v) => v !== id) : '';
      if (field.required && (next === '' || (Array.isArray(next) && next.length === 0))) {
        throw badRequest(
          `The record is referenced by the required relation field "${source.name}.${field.name}" of record "${ref.id as string}"; delete or change that record first.`,
        );
      }
      await applyDerivedUpdate(sourceScope, tx, ref, new Map([[field.name, next]]));
    }
  }

  await tx.run(`DELETE FROM ${s.shape.table} WHERE id = ?`, [id]);
  await announce(s, tx, row);
}

/** The change a deleted record makes (realtime, outbox, the change hooks). */
async function announce(s: WriteScope, tx: Transaction, row: Row): Promise<void> {
  const record = serializeRecord(row, s.shape, PRIVILEGED_VIEWER);
  await emit(s.deps, tx, new Change('delete', s.ctx, s.collection, record, record));
}
