import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import { randomBytes } from 'node:crypto';
import { detectFileType, SNIFF_BYTES } from './content-type.ts';
import { storedName } from './names.ts';
import { StagedFile } from './staged.ts';
import path from 'node:path';
import type { Collection } from '../collections/model.ts';
import { type FieldError, unsupportedMediaType, validationFailed } from '../errors.ts';
import { isValidName } from '../lib/identifiers.ts';
import { changeHook, never, type RecordChangeHook, type RecordFiles } from '../records/deps.ts';
import type { Transaction } from '../storage/index.ts';
import { fileList, fileNames } from './field.ts';
import { isRecordKey } from '../lib/ids.ts';
import { fileKey, recordPrefix } from './keys.ts';
import { thumbsFolder } from './thumbs.ts';
import { isStoredName } from './names.ts';
import { isStagedFile } from './staged.ts';
import type { FileStorage } from './storage/types.ts';
import { discardStaged, type FileLimit, type MultipartForm, readMultipart, receiveBody, type UploadPart } from './uploads.ts';

export interface FileStoreOptions {
  storage: FileStorage;
  /** Local directory for uploads in flight; emptied at start. */
  stagingDir: string;
  /** Most bytes of one multipart request. */
  requestLimit: number;
}

/** A multipart record body whose uploads wait for the write; `settle` once the write is over. */
export interface UploadBatch {
  input: Record<string, unknown>;
  /** What `@request.body` shows rules: the input with uploads as their stored names. */
  body: Record<string, unknown>;
  settle(): Promise<void>;
}

/** A multipart body of several writes (a batch); `settle` once they are over. */
export interface UploadForm extends MultipartForm {
  settle(): Promise<void>;
}

/**
 * The files of records: receives uploads, stores them inside the record's transaction, and removes
 * files a committed change no longer references. Nothing is removed for a change that rolled back,
 * and no upload outlives a write that failed.
 */
export class FileStore implements RecordFiles {
  /** Removals of deleted records' folders from an object store, under way after their answers. */
  private readonly removing = new Set<Promise<void>>();

  constructor(private readonly options: FileStoreOptions) {}

  /** Where files are written before they are put in the storage. */
  get stagingDir(): string {
    return this.options.stagingDir;
  }

  get storage(): FileStorage {
    return this.options.storage;
  }

  get requestLimit(): number {
    return this.options.requestLimit;
  }

  /** Creates the staging directory and removes what a previous run left in it (a crash mid-upload). */
  async start(): Promise<void> {
    await mkdir(this.options.stagingDir, { recursive: true, mode: 0o700 });
    for (const entry of await readdir(this.options.stagingDir)) {
      await rm(path.join(this.options.stagingDir, entry), { recursive: true, force: true });
    }
  }

  /** Reads a multipart record body, streaming its files to the staging directory. */
  async receive(collection: Collection, parts: AsyncIterable<UploadPart>, declaredLength?: number): Promise<UploadBatch> {
    const { input, staged } = await receiveBody(parts, collection, this.options, declaredLength);
    return {
      input,
      body: JSON.parse(JSON.stringify(input)) as Record<string, unknown>,
      settle: () => this.settle(staged),
    };
  }

  /**
   * Reads a multipart body whose file parts go to several records (a batch): `fileLimit` says which
   * parts are files to keep. Whatever the writes do not store is removed by `settle`.
   */
  async receiveForm(parts: AsyncIterable<UploadPart>, fileLimit: FileLimit, declaredLength?: number): Promise<UploadForm> {
    const form = await readMultipart(parts, this.options, fileLimit, declaredLength);
    return { ...form, settle: () => this.settle(form.staged) };
  }

  /**
   * Files travel only in multipart bodies. A JSON body may name existing files (to keep, reorder or
   * remove them) but an object where a file field expects names is an attempt to send file content.
   */
  refuseInlineFiles(collection: Collection, body: unknown): void {
    if (typeof body !== 'object' || body === null) return;
    const input = body as Record<string, unknown>;
    for (const f of collection.fields) {
      if (f.type !== 'file') continue;
      for (const key of [f.name, `${f.name}+`, `+${f.name}`, `${f.name}-`]) {
        const value = input[key];
        if (value === undefined || value === null) continue;
        const items = Array.isArray(value) ? value : [value];
        if (items.some((item) => typeof item !== 'string')) {
          throw unsupportedMediaType(`Files must be uploaded as multipart/form-data; "${key}" accepts only file names in a JSON body.`);
        }
      }
    }
  }

  /**
   * Before the write's transaction: puts the request's uploads under the record, so that no
   * transaction waits on storage (an upload to a bucket takes as long as the file takes to send).
   * Uploads the write then refuses are removed by `settle`, like those of a write that rolled back.
   */
  async upload(database: string, collection: Collection, recordId: string, input: Record<string, unknown>): Promise<void> {
    const files: StagedFile[] = [];
    for (const value of Object.values(input)) {
      for (const v of Array.isArray(value) ? value : [value]) if (isStagedFile(v) && !v.tooLarge && v.state === 'staged') files.push(v);
    }
    // Most writes carry no file: they return here, before any promise is made. An id no record of
    // Cairn's can have is refused by the write itself.
    if (files.length === 0 || !isRecordKey(recordId)) return;
    const results = await Promise.allSettled(files.map((file) => this.put(fileKey(database, collection.name, recordId, file.name), file)));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }

  private async put(key: string, file: StagedFile): Promise<void> {
    await this.options.storage.put(key, file.tempPath, { contentType: file.contentType });
    file.key = key;
    file.state = 'stored';
  }

  /**
   * Inside the write's transaction, after the row is written: names kept must be files the record
   * already has, and uploads not already put by `upload` are put under the record. A rollback
   * leaves them to `settle`.
   */
  async store(tx: Transaction, database: string, collection: Collection, recordId: string, values: Map<string, unknown>, before?: Record<string, unknown>): Promise<void> {
    const errors: Record<string, FieldError> = {};
    const uploads: StagedFile[] = [];
    for (const f of collection.fields) {
      if (f.type !== 'file' || !values.has(f.name)) continue;
      const current = new Set(before ? fileNames(before[f.name]) : []);
      for (const item of fileList(values.get(f.name)) ?? []) {
        if (typeof item !== 'string') uploads.push(item);
        else if (!current.has(item)) errors[f.name] = { code: 'validation_invalid_file', message: `"${item}" is not a file of this record.` };
      }
    }
    if (Object.keys(errors).length > 0) throw validationFailed(errors, 'Failed to save the record files.');
    for (const file of uploads) {
      const key = fileKey(database, collection.name, recordId, file.name);
      if (file.state !== 'stored' || file.key !== key) await this.put(key, file);
      tx.afterCommit(() => {
        file.state = 'committed';
      });
    }
  }

  /** Removes the files a committed change dropped: all of a deleted record's, the replaced ones of an update. */
  readonly changeHook: RecordChangeHook = changeHook(never, async (tx, event) => {
    if (event.action === 'create') return;
    // Records Cairn did not create (adopted tables) may have ids no upload path could have used, and
    // system collections (PocketBase's `_externalAuths`, …) have names no upload path could use.
    if (!isRecordKey(event.record.id) || !isValidName(event.collection.name)) return;
    const prefix = recordPrefix(event.database, event.collection.name, event.record.id);
    if (event.action === 'delete') {
      tx.afterCommit(() => this.removeFolder(prefix));
      return;
    }
    if (event.action !== 'update' || !event.oldRecord) return;
    for (const f of event.collection.fields) {
      if (f.type !== 'file') continue;
      const kept = new Set(fileNames(event.record[f.name]));
      for (const name of fileNames(event.oldRecord[f.name])) {
        if (!kept.has(name) && isStoredName(name)) tx.afterCommit(() => this.removeFile(`${prefix}/${name}`));
      }
    }
  });

  /** Removes a file a record no longer has, and its thumbnails (first: a local record folder goes with its last file). */
  private async removeFile(key: string): Promise<void> {
    await this.options.storage.deletePrefix(thumbsFolder(key));
    await this.options.storage.delete(key);
  }

  /**
   * Removes a deleted record's folder. On the local disk that is a stat for a record without files, and
   * the answer waits for it; in an object store it is a listing of the prefix and a delete of what it
   * holds, round trips to the bucket that every deleted record would wait for, with or without files.
   * There the answer does not wait (PocketBase too removes a deleted record's files in the background):
   * the record is gone, so none of its files is served any more; a failure is a warning and leaves
   * objects nothing references, as a failure after the answer would anyway. `drain` awaits them.
   */
  private removeFolder(prefix: string): Promise<void> | undefined {
    const storage = this.options.storage;
    if (!storage.remote) return storage.deletePrefix(prefix);
    const removal: Promise<void> = storage
      .deletePrefix(prefix)
      .catch((err: Error) => process.emitWarning(`removing the files of deleted record ${prefix} failed: ${err.message}`))
      .finally(() => this.removing.delete(removal));
    this.removing.add(removal);
    return undefined;
  }

  /** Waits for the removals still under way (at shutdown, before the storage's clients close). */
  async drain(): Promise<void> {
    while (this.removing.size > 0) await Promise.all(this.removing);
  }

  /**
   * A file application code gives a record (pb_hooks' `$filesystem.fileFromBytes/Path/URL`, a route's
   * uploads): staged as an upload is, so the write validates and stores it the same way.
   */
  async stageBytes(originalName: string, bytes: Buffer): Promise<StagedFile> {
    const tempPath = path.join(this.options.stagingDir, `hook-${randomBytes(12).toString('hex')}`);
    await writeFile(tempPath, bytes, { mode: 0o600 });
    const name = String(originalName || 'file');
    const detected = await detectFileType(tempPath, bytes.subarray(0, SNIFF_BYTES), name);
    return new StagedFile({ name: storedName(name, detected.extension), originalName: name, tempPath, size: bytes.length, contentType: detected.contentType, tooLarge: false });
  }

  /** Removes the staged copies of files `stageBytes` made that no write stored. */
  discardStaged(staged: StagedFile[]): Promise<void> {
    return discardStaged(staged);
  }

  /** After a write: staged copies are removed, stored files of a write that did not commit too. */
  private async settle(staged: StagedFile[]): Promise<void> {
    for (const file of staged) {
      if (file.state !== 'stored') continue;
      await this.options.storage.delete(file.key!);
      file.state = 'discarded';
    }
    await discardStaged(staged);
  }
}
