import { validationFailed } from '../../errors.ts';
import type { Queryable } from '../../storage/index.ts';
import { hashAuthCreate, passwordErrorsFirst, prepareAuthUpdate } from '../auth-fields.ts';
import { refusalsOf } from '../draft.ts';
import type { RecordShape } from '../shape.ts';
import { enter, type WritePlan } from './plan.ts';
import { authState } from './values.ts';

/**
 * Step 4, the last before the transaction: what is slow, or refuses the write for good, done while no
 * writer waits. A create's problems are thrown here (with hooks, only those no hook can fix: what the
 * caller may not ask for), then its password hashed with the hasher handed in (`RecordDeps.passwords`).
 * An update verifies the old password and hashes the new one against the account as it is now (load
 * checks it is still so). Uploads go to storage under the record.
 */
export async function stage(plan: WritePlan): Promise<WritePlan> {
  enter(plan, 'stage');
  const { deps, ctx, collection, shape } = plan.scope;
  if (plan.action === 'create') {
    if (plan.around) {
      const refusals = refusalsOf({ ...plan.errors, ...plan.auth?.errors });
      if (refusals) throw validationFailed(refusals, 'Failed to create record.');
    } else {
      Object.assign(plan.errors, plan.auth?.errors);
      if (Object.keys(plan.errors).length > 0) throw validationFailed(passwordErrorsFirst(plan.errors), 'Failed to create record.');
    }
    if (plan.auth) plan.auth = await hashAuthCreate(plan.auth, deps);
    await deps.files?.upload?.(ctx.dbName, collection, plan.id, plan.input);
    plan.declared = await declaredTypes(ctx.db, shape);
    return plan;
  }
  // A record not found now is a 404 in `load`, unless an earlier write of the same transaction creates it.
  const reader = plan.reader ?? ctx.db;
  if (collection.type === 'auth') {
    // Administrators, and callers the collection's manage rule lets through, change the account's
    // email, password and `verified` as administrators do.
    plan.manager = plan.scope.privileged || (deps.access.mayManage(ctx, collection) && (await deps.access.manages(ctx, collection, plan.scope.collections, plan.id, reader)));
    const state = await authState(reader, shape, plan.id, plan.rule);
    if (state) {
      plan.authState = state;
      plan.auth = await prepareAuthUpdate(plan.input, state, plan.manager, deps);
    }
  }
  // Before the record is read and checked (inside the transaction): a refused update's uploads are
  // removed when its request settles.
  await deps.files?.upload?.(ctx.dbName, collection, plan.id, plan.input);
  return plan;
}

const declaredTypesOf = new WeakMap<RecordShape, Promise<Map<string, string> | undefined>>();

/**
 * The declared types of a collection's columns where the dialect can tell what an insert keeps
 * (`Dialect.insertKeeps`), loaded once per collection version; undefined where it cannot, and for
 * auth collections, whose records show columns no field stands for.
 */
function declaredTypes(db: Queryable, shape: RecordShape): Promise<Map<string, string> | undefined> {
  let types = declaredTypesOf.get(shape);
  if (types === undefined) {
    types = (async () => {
      if (db.dialect.insertKeeps === undefined || shape.collection.type !== 'base') return undefined;
      const columns = await db.dialect.tableColumns(db, shape.collection.name);
      if (columns.length === 0) {
        // A table this connection cannot see yet (made by a transaction not yet committed): the
        // insert reads its row back, and the next create asks again.
        declaredTypesOf.delete(shape);
        return undefined;
      }
      return new Map(columns.map((c) => [c.name, c.type]));
    })();
    declaredTypesOf.set(shape, types);
    // A failed read is not remembered: the next create asks again.
    types.catch(() => declaredTypesOf.delete(shape));
  }
  return types;
}
