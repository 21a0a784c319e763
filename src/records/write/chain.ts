import { markWorkError } from '../../lib/chain.ts';
import type { Transaction } from '../../storage/index.ts';
import type { AroundWrite } from '../deps.ts';
import { Draft } from '../draft.ts';
import type { RecordJson } from '../serialize.ts';
import type { WriteScope } from './plan.ts';

const NO_CHANGES: ReadonlyMap<string, unknown> = new Map();

/**
 * Runs `write` as the last link of `around` (the application hooks bound to this write): they see the
 * record `makeRecord` makes (the values to write) on first use, and the stored record after their
 * `next()`. `write` gets the keys they changed (none when no handler looked at the record) and the
 * record as they left it, and returns the stored record. The hooks step and deletes share it.
 */
export async function runHooked(
  around: AroundWrite,
  s: Pick<WriteScope, 'ctx' | 'collection'>,
  tx: Transaction,
  makeRecord: () => Record<string, unknown>,
  original: (() => RecordJson) | undefined,
  write: (changes: ReadonlyMap<string, unknown>, record: Record<string, unknown> | undefined) => Promise<RecordJson>,
): Promise<void> {
  let draft: Draft | undefined;
  let stored: RecordJson | undefined;
  const record = {
    get: (): Record<string, unknown> => (draft ? draft.record : stored ?? (draft = new Draft(makeRecord())).record),
    set: (value: Record<string, unknown>): void => {
      if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new TypeError('e.record must be an object');
      (draft ??= new Draft(makeRecord())).record = value;
    },
  };
  await around({ ctx: s.ctx, tx, collection: s.collection, record, original }, async () => {
    try {
      const result = await write(draft ? draft.changes() : NO_CHANGES, draft?.record);
      if (draft) draft.settle(result);
      else stored = result;
    } catch (err) {
      // The write's own failure (a validation error, a database fault) is not the hooks'.
      markWorkError(err);
      throw err;
    }
  });
}
