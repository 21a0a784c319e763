import { relationTarget } from '../../collections/fields/relation.ts';
import type { Collection } from '../../collections/model.ts';
import type { CollectionSet } from '../../collections/service.ts';
import { isSuperusers } from '../../collections/superusers.ts';
import { badRequest, type FieldError, validationFailed } from '../../errors.ts';
import { quoteIdent } from '../../lib/identifiers.ts';
import { nowIso } from '../../lib/time.ts';
import { type Dialect, join, list, type Queryable, raw, type Row, type Sql, sql, type Transaction } from '../../storage/index.ts';
import { passwordErrorsFirst } from '../auth-fields.ts';
import { selectById } from '../read.ts';
import { serializeRecord } from '../serialize.ts';
import { insertSql, type RecordShape, ROOT_ALIAS, shapeOf } from '../shape.ts';
import { PRIVILEGED_VIEWER } from '../viewer.ts';
import { Change, changeWritesNothing, emit } from './change.ts';
import { enter, ExplainedAfter, txOf, type WritePlan } from './plan.ts';
import { canonical, columnValues } from './values.ts';

/**
 * Step 7, the write itself (the last link of the hooks' chain): related ids checked, the INSERT or
 * UPDATE, the files stored, a create's rule checked against the new row, and the change handed to the
 * change hooks (webhooks, realtime, files), all in the write's transaction.
 */
export async function statement(plan: WritePlan): Promise<WritePlan> {
  enter(plan, 'statement');
  return plan.action === 'create' ? insert(plan) : update(plan);
}

async function insert(plan: WritePlan): Promise<WritePlan> {
  const { deps, ctx, collection, collections, shape, privileged } = plan.scope;
  const tx = txOf(plan);
  // The related ids are checked by the INSERT itself where they can be (a statement fewer), else first.
  const related = shape.hasRelations && collection.type !== 'auth' ? relationCondition(tx.dialect, collections, shape, plan.values) : undefined;
  const relatedInInsert = related && !related.isEmpty ? related : undefined;
  if (shape.hasRelations && !related) {
    const relationErrors: Record<string, FieldError> = {};
    await checkRelations(tx, collections, shape, plan.values, relationErrors);
    if (Object.keys(relationErrors).length > 0) throw validationFailed(relationErrors, 'Failed to create record.');
  }
  if (collection.type === 'auth') await checkAuthIdFree(tx, collections, collection, plan.id);
  const columns = columnValues(shape, plan.values, plan.auth);
  const names = ['id', 'created', 'updated', ...columns.keys()];
  const now = nowIso();
  const params = [plan.id, now, now, ...columns.values()];
  const declared = plan.declared;
  const checksVerified = !privileged && plan.mayManage && plan.auth?.columns.get('verified') === true;
  // A create's rule is checked against the new row, after the INSERT, unless it reads nothing stored
  // (`@request.auth.id != ""`, `@request.body.title != ""`): it then holds or not whatever the row, and
  // the INSERT checks it as it checks related ids. `verified` is checked after the INSERT.
  const ruleInInsert = plan.rule && readsNothingStored(plan.rule) ? plan.rule : undefined;
  const ruleAfter = ruleInInsert ? undefined : plan.rule;
  const last = statementIsLast(plan) && !ruleAfter && !checksVerified;
  const conditions = [relatedInInsert, ruleInInsert].filter((c): c is Sql => c !== undefined);
  let inserted: Row;
  if (conditions.length > 0) {
    // Its row tells whether the conditions held; without one, which did not is found again for the errors.
    const condition = join(conditions.map((c) => sql`(${c})`), ' AND ');
    const row = await written(tx, last, insertSql(shape, names, true, condition.text), [...params, ...condition.params]);
    if (!row) {
      const refusal = async (q: Queryable) => {
        const relationErrors: Record<string, FieldError> = {};
        if (relatedInInsert) await checkRelations(q, collections, shape, plan.values, relationErrors);
        // The related ids held: the rule refused the create (PocketBase's message for any failed create,
        // API contract §23), or a related record came meanwhile, and it is refused all the same.
        return Object.keys(relationErrors).length > 0 ? validationFailed(relationErrors, 'Failed to create record.') : badRequest('Failed to create record.');
      };
      // A statement that ended the transaction leaves it unable to read: read once it is over.
      throw last ? new ExplainedAfter(() => refusal(ctx.db)) : await refusal(tx);
    }
    inserted = row;
  } else if (declared !== undefined && names.length === 3 + shape.fields.length && names.every((name, i) => tx.dialect.insertKeeps!(declared.get(name) ?? '', params[i]))) {
    const text = insertSql(shape, names, false);
    await (last ? tx.commitWith(text, params) : tx.run(text, params));
    inserted = rowOf(names, params);
  } else {
    const text = insertSql(shape, names, true);
    inserted = (await written(tx, last, text, params))!;
  }
  if (shape.hasFiles) await deps.files?.store(tx, ctx.dbName, collection, plan.id, plan.values);
  // As in PocketBase, the create rule is checked against the new record, before commit.
  if (ruleAfter && !(await selectById(tx, shape, plan.id, ruleAfter))) {
    // PocketBase's message for any failed create (API contract §23).
    throw badRequest('Failed to create record.');
  }
  if (checksVerified && !(await deps.access.manages(ctx, collection, collections, plan.id, tx))) {
    throw validationFailed({ verified: { code: 'validation_admin_only', message: 'Only administrators can set this field.' } }, 'Failed to create record.');
  }
  const change = new Change('create', ctx, collection, serializeRecord(inserted, shape, PRIVILEGED_VIEWER));
  await emit(deps, tx, change);
  plan.row = inserted;
  plan.change = change;
  return plan;
}

async function update(plan: WritePlan): Promise<WritePlan> {
  const { deps, ctx, collection, collections, shape } = plan.scope;
  const tx = txOf(plan);
  const before = plan.before!;
  const errors = plan.errors;
  if (!plan.derived) await checkRelations(tx, collections, shape, plan.values, errors);
  if (Object.keys(errors).length > 0) throw validationFailed(passwordErrorsFirst(errors), 'Failed to update record.');
  const columns = columnValues(shape, plan.values, plan.auth);
  columns.set('updated', nowIso());
  const sets = [...columns.keys()].map((c) => `${quoteIdent(c)} = ?`).join(', ');
  const text = `UPDATE ${shape.table} SET ${sets} WHERE id = ? RETURNING ${shape.returningList}`;
  const params = [...columns.values(), plan.id];
  const row = (await written(tx, statementIsLast(plan), text, params))!;
  if (shape.hasFiles) await deps.files?.store(tx, ctx.dbName, collection, plan.id, plan.values, canonical(shape, before));
  const change = new Change('update', ctx, collection, serializeRecord(row, shape, PRIVILEGED_VIEWER), serializeRecord(before, shape, PRIVILEGED_VIEWER));
  await emit(deps, tx, change);
  plan.row = row;
  plan.change = change;
  return plan;
}

/**
 * Whether nothing is written after the plan's statement, so that it may end the transaction (a round
 * trip fewer on PostgreSQL): the write owns its transaction, no application hook runs around it, no
 * files are stored after it and no change hook writes in the transaction.
 */
function statementIsLast(plan: WritePlan): boolean {
  const { deps, collection, shape } = plan.scope;
  return plan.alone === true && !plan.around && !shape.hasFiles && changeWritesNothing(deps, collection, plan.action);
}

/**
 * Whether a condition reads nothing stored, neither the record (its alias) nor any table: a rule over
 * the request alone, compiled to parameters and operators.
 */
function readsNothingStored(condition: Sql): boolean {
  return !ROOT_ALIAS_WORD.test(condition.text) && !/\bFROM\b/i.test(condition.text);
}

const ROOT_ALIAS_WORD = new RegExp(`\\b${ROOT_ALIAS}\\b`);

/** The write's statement and its first row: with COMMIT where it is the transaction's `last`. */
export function written(tx: Transaction, last: boolean, text: string, params: readonly unknown[]): Promise<Row | undefined> {
  return last ? tx.commitWith<Row>(text, params) : tx.get<Row>(text, params);
}

/** The row an INSERT of `params` into `names` made, when every value reads back as bound. */
function rowOf(names: readonly string[], params: readonly unknown[]): Row {
  const row: Row = {};
  for (let i = 0; i < names.length; i++) row[names[i]] = params[i];
  return row;
}

/** The related ids a write's values give, per relation field, with the collection they point at (undefined: gone). */
function* relatedIds(collections: CollectionSet, shape: RecordShape, values: Map<string, unknown>): Generator<{ name: string; target: Collection | undefined; ids: string[] }> {
  for (const f of shape.fields) {
    if (f.field.type !== 'relation' || !values.has(f.name)) continue;
    const value = values.get(f.name);
    const ids = Array.isArray(value) ? (value as string[]) : value ? [value as string] : [];
    if (ids.length > 0) yield { name: f.name, target: collections.find(relationTarget(f.field)), ids };
  }
}

/**
 * How many of `ids` the related collection holds, with those rows locked against a concurrent delete
 * until the write commits where the database locks rows (PostgreSQL's `FOR KEY SHARE`, what its own
 * foreign keys take): a delete that has read them waits for the write and then sees its reference, and
 * one that went first is seen gone.
 */
function countOf(dialect: Dialect, target: Collection, ids: string[]): Sql {
  const lock = dialect.lockToReference();
  const table = raw(quoteIdent(target.name));
  if (lock === '') return sql`SELECT COUNT(*) AS n FROM ${table} WHERE id IN (${list(ids)})`;
  return sql`SELECT COUNT(*) AS n FROM (SELECT 1 AS found FROM ${table} WHERE id IN (${list(ids)})${raw(lock)}) AS related`;
}

/**
 * The condition under which every related id of the values exists, for the INSERT to hold (empty: no
 * related id given); undefined where a field's related collection is gone (`checkRelations` reports
 * that with the other fields' problems).
 */
function relationCondition(dialect: Dialect, collections: CollectionSet, shape: RecordShape, values: Map<string, unknown>): Sql | undefined {
  const parts: Sql[] = [];
  for (const { target, ids } of relatedIds(collections, shape, values)) {
    if (!target) return undefined;
    parts.push(sql`(${countOf(dialect, target, ids)}) = ${raw(String(ids.length))}`);
  }
  return join(parts, ' AND ');
}

/** Checks that every related id exists; inside the write's transaction so the check holds at commit. */
async function checkRelations(tx: Pick<Transaction, 'get' | 'dialect'>, collections: CollectionSet, shape: RecordShape, values: Map<string, unknown>, errors: Record<string, FieldError>): Promise<void> {
  for (const { name, target, ids } of relatedIds(collections, shape, values)) {
    if (!target) {
      errors[name] = { code: 'validation_missing_rel_collection', message: 'The related collection no longer exists.' };
      continue;
    }
    const q = countOf(tx.dialect, target, ids);
    const found = await tx.get<{ n: number }>(q.text, q.params);
    if (Number(found?.n ?? 0) !== ids.length) {
      errors[name] = { code: 'validation_missing_rel_records', message: 'Failed to find all relation records with the provided ids.' };
    }
  }
}

/**
 * As PocketBase (v0.23+): an auth record's id may not be one a record of another auth collection of
 * the database has, so that a rule comparing `@request.auth.id` with an id cannot mistake one
 * collection's user for another's. Checked in the write's transaction, after the values validate.
 */
async function checkAuthIdFree(tx: Transaction, collections: CollectionSet, collection: Collection, id: string): Promise<void> {
  for (const other of collections.list) {
    if (other.type !== 'auth' || other.id === collection.id || isSuperusers(other.id)) continue;
    if (await tx.get(`SELECT 1 AS taken FROM ${shapeOf(other).table} WHERE id = ?`, [id])) {
      throw validationFailed({ id: { code: 'validation_invalid_auth_id', message: 'Invalid or duplicated auth record id.' } }, 'Failed to create record.');
    }
  }
}

/**
 * Turns a unique-constraint failure into the 400 PocketBase gives, naming the field, with its message
 * for the write (`Failed to create record.`, `Failed to update record.`: API contract §23).
 */
export function uniqueViolation(err: unknown, message: string, dialect: Transaction['dialect']): unknown {
  const kind = dialect.classifyError(err);
  if (kind.kind !== 'unique') return err;
  const data: Record<string, FieldError> = {};
  for (const column of kind.columns.length > 0 ? kind.columns : ['id']) {
    data[column] = { code: 'validation_not_unique', message: 'Value must be unique.' };
  }
  return validationFailed(data, message);
}
