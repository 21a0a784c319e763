import type { Collection } from '../collections/model.ts';
import { systemContext } from '../context.ts';
import { isApiError } from '../errors.ts';
import { isRecordKey } from '../lib/ids.ts';
import type { RecordJson } from '../records/serialize.ts';
import type { RecordService } from '../records/service.ts';
import type { Database } from '../storage/index.ts';
import { fileNames } from './field.ts';
import { isStoredName } from './names.ts';

/**
 * Where the file of a view record is stored. A view holds no files of its own: its file column reads
 * a file field of a collection its SQL names (`SELECT id, avatar FROM users`), and the file is that
 * collection's, under the record that holds the name. As PocketBase (`FindRecordByViewFile`), the
 * collections the view reads are followed through other views, up to five deep, and the record is
 * the first one of them whose file field holds the name: the record of the same id first (a view
 * usually keeps its source's ids), then any record holding it.
 *
 * Who may have the file is decided on the view (its record and its view rule) before this is asked:
 * this only finds the bytes the view's value names.
 */

/** String literals first (their text is never a name), then quoted and bare identifiers. */
const SQL_TOKENS = /'(?:[^']|'')*'|"((?:[^"]|"")*)"|`([^`]*)`|\[([^\]]*)\]|([A-Za-z_][A-Za-z0-9_$]*)/g;

/** As PocketBase: a chain of views on views is followed this deep, and no deeper. */
const MAX_DEPTH = 5;

/** The collections a view's SQL names, in the order they first appear. */
function collectionsRead(view: Collection, all: readonly Collection[]): Collection[] {
  const query = typeof view.options.query === 'string' ? view.options.query : '';
  const byName = new Map(all.map((c) => [c.name.toLowerCase(), c]));
  const out: Collection[] = [];
  for (const m of query.matchAll(SQL_TOKENS)) {
    const name = m[1]?.replace(/""/g, '"') ?? m[2] ?? m[3] ?? m[4];
    const c = name === undefined ? undefined : byName.get(name.toLowerCase());
    if (c && c.id !== view.id && !out.includes(c)) out.push(c);
  }
  return out;
}

export interface ViewFileSource {
  collection: Collection;
  recordId: string;
}

export class ViewFiles {
  constructor(private readonly records: RecordService) {}

  /**
   * The collection and record whose stored file `filename` is, for the file field `fieldName` of a
   * record `recordId` of `view`; undefined when no collection the view reads holds it.
   */
  async source(dbName: string, db: Database, all: readonly Collection[], view: Collection, fieldName: string, recordId: string, filename: string): Promise<ViewFileSource | undefined> {
    if (!isStoredName(filename)) return undefined;
    const seen = new Set<string>([view.id]);
    const walk = async (current: Collection, depth: number): Promise<ViewFileSource | undefined> => {
      for (const source of collectionsRead(current, all)) {
        if (seen.has(source.id)) continue;
        seen.add(source.id);
        if (source.type === 'view') {
          if (depth >= MAX_DEPTH) continue;
          const found = await walk(source, depth + 1);
          if (found) return found;
          continue;
        }
        const found = await this.holder(dbName, db, source, fieldName, recordId, filename);
        if (found) return found;
      }
      return undefined;
    };
    return walk(view, 1);
  }

  /** The record of `collection` whose file field holds `filename`, a field named as the view's first. */
  private async holder(dbName: string, db: Database, collection: Collection, fieldName: string, recordId: string, filename: string): Promise<ViewFileSource | undefined> {
    const fields = collection.fields.filter((f) => f.type === 'file');
    if (fields.length === 0) return undefined;
    fields.sort((a, b) => Number(b.name === fieldName) - Number(a.name === fieldName));
    const ctx = systemContext(dbName, db);
    if (isRecordKey(recordId)) {
      try {
        const same = (await this.records.view(ctx, collection, recordId)) as RecordJson;
        if (fields.some((f) => fileNames(same[f.name]).includes(filename))) return { collection, recordId };
      } catch (err) {
        if (!isApiError(err) || err.status !== 404) throw err;
      }
    }
    // A stored name is letters, digits, `_`, `.` and `-` only (isStoredName): safe in a filter string.
    for (const f of fields) {
      let found;
      try {
        found = await this.records.list(ctx, collection, { filter: `${f.name} ?= "${filename}"`, perPage: 1, skipTotal: 'true', fields: 'id' });
      } catch (err) {
        // A field the filter cannot read (a name it keeps for itself) holds nothing to serve here.
        if (isApiError(err) && err.status < 500) continue;
        throw err;
      }
      const id = (found.items[0] as { id?: unknown } | undefined)?.id;
      if (typeof id === 'string') return { collection, recordId: id };
    }
    return undefined;
  }
}
