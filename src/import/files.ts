import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { copyFile, mkdir, open, rm } from 'node:fs/promises';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { detectFileType, SNIFF_BYTES } from '../files/content-type.ts';
import { fileKey } from '../files/keys.ts';
import { isStoredName } from '../files/names.ts';
import type { FileStorage } from '../files/storage/types.ts';
import { isRecordKey } from '../lib/ids.ts';
import type { PlannedCollection } from './plan.ts';
import type { PocketBaseSource } from './source.ts';
import { fileNamesOf } from './values.ts';

/**
 * Record files: PocketBase keeps them at `storage/<collection id>/<record id>/<name>` of its data
 * directory or, with its S3 storage on, under the same key in its bucket; Cairn at
 * `<db>/<collection name>/<record id>/<name>` of its file storage (local or S3). They are copied
 * before the import's transaction (no transaction waits on file copies) and removed again if it fails.
 */

export interface FileRef {
  collection: string;
  recordId: string;
  name: string;
  /** Where PocketBase has it: a file of its `storage/`, or an object of its bucket. */
  from: { file: string } | { object: string; bucket: FileStorage };
}

export interface FileScan {
  /** Files present in `storage/` or the bucket, per collection name. */
  present: Map<string, FileRef[]>;
  /** Names records hold whose file is in neither (or is not a name Cairn can store), per collection. */
  missing: Map<string, number>;
}

/** PocketBase's S3 bucket (its `s3` settings on) and the keys of the planned collections' objects in it. */
export interface PocketBaseBucket {
  storage: FileStorage;
  keys: ReadonlySet<string>;
}

/** Finds the files the records of the planned collections name, in `storage/`, then in the bucket. */
export function scanFiles(source: PocketBaseSource, planned: readonly PlannedCollection[], bucket?: PocketBaseBucket): FileScan {
  const scan: FileScan = { present: new Map(), missing: new Map() };
  for (const p of planned) {
    if (p.files.length === 0) continue;
    const name = p.collection.name;
    const found: FileRef[] = [];
    let missing = 0;
    const columns = ['id', ...p.files.map((f) => p.columns[f.index].source)];
    for (const row of source.rows(p.draft.pb.name, columns)) {
      const id = row[0];
      if (!isRecordKey(id)) continue;
      for (let i = 1; i < row.length; i++) {
        for (const file of fileNamesOf(row[i])) {
          const ref = { collection: name, recordId: id, name: file };
          const object = `${p.draft.pb.id}/${id}/${file}`;
          if (!isStoredName(file)) missing++;
          else if (source.fileExists(p.draft.pb.id, id, file)) found.push({ ...ref, from: { file: source.filePath(p.draft.pb.id, id, file) } });
          else if (bucket?.keys.has(object)) found.push({ ...ref, from: { object, bucket: bucket.storage } });
          else missing++;
        }
      }
    }
    scan.present.set(name, found);
    if (missing > 0) scan.missing.set(name, missing);
  }
  return scan;
}

async function contentType(file: string, name: string): Promise<string> {
  const handle = await open(file, 'r');
  try {
    const head = new Uint8Array(SNIFF_BYTES);
    const { bytesRead } = await handle.read(head, 0, SNIFF_BYTES, 0);
    return (await detectFileType(file, head.subarray(0, bytesRead), name)).contentType;
  } finally {
    await handle.close();
  }
}

/**
 * Copies the files into Cairn's storage (`removeFiles` undoes it), those of the bucket through a
 * local copy. `staging` is a directory for the copies `FileStorage.put` takes over.
 */
export async function copyFiles(storage: FileStorage, db: string, scan: FileScan, staging: string): Promise<void> {
  await mkdir(staging, { recursive: true, mode: 0o700 });
  try {
    for (const refs of scan.present.values()) {
      for (const ref of refs) {
        const temp = path.join(staging, randomBytes(8).toString('hex'));
        if ('file' in ref.from) await copyFile(ref.from.file, temp);
        else await pipeline(await ref.from.bucket.read(ref.from.object), createWriteStream(temp, { mode: 0o600 }));
        const type = await contentType(temp, ref.name);
        await storage.put(fileKey(db, ref.collection, ref.recordId, ref.name), temp, { contentType: type });
      }
    }
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * Removes what `copyFiles` wrote (the import failed after it): the folders of the imported
 * collections, which the clash rule guarantees held nothing before, and of a database made for it.
 */
export async function removeFiles(storage: FileStorage, db: string, scan: FileScan, databaseCreated: boolean): Promise<void> {
  const prefixes = databaseCreated ? [db] : [...scan.present.keys()].map((collection) => `${db}/${collection}`);
  for (const prefix of prefixes) await storage.deletePrefix(prefix).catch(() => undefined);
}
