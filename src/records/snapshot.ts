import { isoDate } from '../lib/time.ts';
import type { ColumnKind, Queryable, Row, Sql } from '../storage/index.ts';
import type { RecordJson } from './serialize.ts';
import { ROOT_ALIAS, type RecordShape } from './shape.ts';

/**
 * A record that is no longer in its table (a delete, seen after it committed) read as the row it was:
 * its administrator's-view JSON turned back into column values, which a one-row derived table aliased
 * like the table (`t0`) offers to the same compiled rule conditions as the table's rows.
 */

interface SnapshotColumn {
  name: string;
  kind: ColumnKind;
  multiple: boolean;
  value(record: RecordJson): unknown;
}

interface Snapshot {
  columns: SnapshotColumn[];
  /** `SELECT 1 AS found FROM (SELECT ? AS "id", …) t0 WHERE `, per dialect. */
  select: Map<string, string>;
}

const snapshots = new WeakMap<RecordShape, Snapshot>();

const text = (name: string, kind: ColumnKind = 'text'): SnapshotColumn => ({ name, kind, multiple: false, value: (r) => r[name] ?? '' });
// Dates go out as PocketBase writes them and are stored ISO 8601: conditions compare the stored form.
const date = (name: string): SnapshotColumn => ({ name, kind: 'text', multiple: false, value: (r) => isoDate(r[name] ?? '') });
const flag = (name: string): SnapshotColumn => ({ name, kind: 'bool', multiple: false, value: (r) => r[name] === true });

/** The columns of `shape.selectList`, in order, with how each is stored. */
function snapshotOf(shape: RecordShape): Snapshot {
  let snapshot = snapshots.get(shape);
  if (snapshot) return snapshot;
  const columns: SnapshotColumn[] = [text('id'), date('created'), date('updated')];
  if (shape.collection.type === 'auth') columns.push(text('email', 'citext'), flag('emailVisibility'), flag('verified'));
  for (const f of shape.fields) {
    const stored = f.date ? (r: RecordJson) => isoDate(r[f.name] ?? f.type.zero(f.field)) : (r: RecordJson) => r[f.name] ?? f.type.zero(f.field);
    columns.push({ name: f.name, kind: f.type.kind, multiple: f.multiple, value: (r) => f.type.toDb(stored(r), f.field) });
  }
  snapshot = { columns, select: new Map() };
  snapshots.set(shape, snapshot);
  return snapshot;
}

/** The row a record's administrator's-view JSON was read from (what `serializeRecord` takes). */
export function rowOfRecord(shape: RecordShape, record: RecordJson): Row {
  const row: Row = {};
  for (const c of snapshotOf(shape).columns) row[c.name] = c.value(record);
  return row;
}

/**
 * Whether the record, as it was, meets `condition` (over `t0`, as compiled for the table): the
 * condition runs against the snapshot's values instead of the table, where the row no longer is.
 * Paths through relations and `@collection` still read the other tables as they are now.
 */
export async function snapshotMeets(q: Queryable, shape: RecordShape, record: RecordJson, condition: Sql): Promise<boolean> {
  const snapshot = snapshotOf(shape);
  let prefix = snapshot.select.get(q.dialect.name);
  if (prefix === undefined) {
    prefix = `SELECT 1 AS found FROM (${q.dialect.typedRow(snapshot.columns)}) ${ROOT_ALIAS} WHERE `;
    snapshot.select.set(q.dialect.name, prefix);
  }
  const params = [...snapshot.columns.map((c) => c.value(record)), ...condition.params];
  return (await q.get(prefix + condition.text, params)) !== undefined;
}
