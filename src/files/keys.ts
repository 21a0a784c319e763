import { isRecordKey } from '../lib/ids.ts';
import { isValidDatabaseName, isValidName } from '../lib/identifiers.ts';
import { isStoredName } from './names.ts';

/**
 * Storage keys: `<db>/<collection>/<record id>[/<file name>]`. Every segment is checked here, so no
 * value from a request can name a path outside its record's folder.
 */

function check(db: string, collection: string, recordId: string): void {
  if (!isValidDatabaseName(db) || !isValidName(collection) || !isRecordKey(recordId)) {
    throw new Error(`invalid storage key segments: ${JSON.stringify([db, collection, recordId])}`);
  }
}

export function recordPrefix(db: string, collection: string, recordId: string): string {
  check(db, collection, recordId);
  return `${db}/${collection}/${recordId}`;
}

export function fileKey(db: string, collection: string, recordId: string, name: string): string {
  if (!isStoredName(name)) throw new Error(`invalid stored file name: ${JSON.stringify(name)}`);
  return `${recordPrefix(db, collection, recordId)}/${name}`;
}
