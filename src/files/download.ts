import type { Collection } from '../collections/model.ts';
import type { CollectionService } from '../collections/service.ts';
import { GUEST, inRuleContext, type RequestContext, type RequestInfo, systemContext } from '../context.ts';
import { forbidden, isApiError, notFound } from '../errors.ts';
import { isRecordKey } from '../lib/ids.ts';
import type { RecordJson } from '../records/serialize.ts';
import type { RecordService } from '../records/service.ts';
import type { Database } from '../storage/index.ts';
import type { Readable } from 'node:stream';
import { detectStoredType } from './content-type.ts';
import { fileNames, fileOptions } from './field.ts';
import { fileKey } from './keys.ts';
import { isStoredName } from './names.ts';
import type { FileTokens } from './tokens.ts';
import type { FileStorage } from './storage/types.ts';
import type { Thumbnails } from './thumbs.ts';
import { ViewFiles } from './view-files.ts';

export interface FileRequest {
  dbName: string;
  db: Database;
  /** Collection name or id, as PocketBase's SDK puts it in URLs. */
  collection: string;
  recordId: string;
  filename: string;
  /** `?token=` from POST /api/files/token, for protected files. */
  token?: string;
  /** `?thumb=`: a thumbnail size (thumbs.ts). */
  thumb?: string;
  request: RequestInfo;
}

export interface FileDownload {
  name: string;
  size: number;
  modified: Date;
  contentType: string;
  protected: boolean;
  read(range?: { start: number; end: number }): Promise<Readable>;
}

const TYPE_CACHE_LIMIT = 10_000;

/** A collection name or id in a URL: names, Cairn's ids and PocketBase's (`_pb_users_auth_`, `pbc_3142635823`). */
const COLLECTION_REF = /^[A-Za-z0-9_]{1,100}$/;

/**
 * Runs before a file is sent (application hooks' `onFileDownloadRequest`): the name to send it under,
 * or undefined when a handler did not go on (the file is then not there); throwing refuses it.
 */
export type FileDownloadHook = (ctx: RequestContext, collection: Collection, record: RecordJson, field: string, servedName: string) => Promise<string | undefined>;

/** Finds a record's file for download and decides whether the caller may have it. */
export class FileService {
  /** Set by the hooks domain. */
  onDownload?: FileDownloadHook;

  // Stored names are never reused for other content, so a sniffed type stays true for its key.
  private readonly types = new Map<string, string>();
  private readonly viewFiles: ViewFiles;

  constructor(
    private readonly storage: FileStorage,
    private readonly collections: CollectionService,
    private readonly records: RecordService,
    readonly tokens: FileTokens,
    readonly thumbs?: Thumbnails,
  ) {
    this.viewFiles = new ViewFiles(records);
  }

  /**
   * The file, if `filename` is a value of one of the record's file fields. Public files need nothing
   * more (the random part of the name is the secret, as in PocketBase); a protected file needs a file
   * token whose owner passes the collection's view rule, checked through the records domain's view.
   * Anything malformed or unknown, and a protected file the caller may not see, is a 404.
   *
   * A view record's file (a view column reading a file field) is the view's to give: its record, its
   * field's `protected` flag and its view rule decide, as for any collection; the bytes are those of
   * the record the view read it from (view-files.ts).
   */
  async open(req: FileRequest): Promise<FileDownload> {
    if (!COLLECTION_REF.test(req.collection) || !isRecordKey(req.recordId) || !isStoredName(req.filename)) throw notFound();
    const collection = await this.collections.find(req.db, req.collection);
    if (!collection) throw notFound();

    let record: RecordJson;
    try {
      record = (await this.records.view(systemContext(req.dbName, req.db), collection, req.recordId)) as RecordJson;
    } catch (err) {
      if (isApiError(err) && err.status === 404) throw notFound();
      throw err;
    }
    const field = collection.fields.find((f) => f.type === 'file' && fileNames(record[f.name]).includes(req.filename));
    if (!field) throw notFound();

    const isProtected = fileOptions(field).protected;
    // The caller, for the rule of a protected file, and for the hooks (a public file needs no token:
    // one that is no good makes the caller a guest there).
    const resolve = (token: string) => this.tokens.resolve(token, req.dbName, req.db, req.request.ip);
    const auth = !req.token ? GUEST : isProtected ? await resolve(req.token) : this.onDownload ? await resolve(req.token).catch(() => GUEST) : GUEST;
    if (isProtected) {
      try {
        await this.records.view(inRuleContext({ dbName: req.dbName, db: req.db, auth, request: req.request }, 'protectedFile'), collection, req.recordId);
      } catch (err) {
        // As PocketBase: a file the caller may not see is not there (no hint that it exists).
        if (isApiError(err) && err.status >= 400 && err.status < 500) throw notFound();
        throw err;
      }
    }

    let holder = { collection, recordId: req.recordId };
    if (collection.type === 'view') {
      const all = (await this.collections.all(req.db)).list;
      const source = await this.viewFiles.source(req.dbName, req.db, all, collection, field.name, req.recordId, req.filename);
      if (!source) throw notFound();
      holder = source;
    }

    let key = fileKey(req.dbName, holder.collection.name, holder.recordId, req.filename);
    let info = await this.storage.stat(key);
    if (!info) throw notFound();
    let name = req.filename;
    let contentType = info.contentType;
    if (req.thumb && this.thumbs) {
      const type = contentType ?? (await this.contentTypeOf(key, req.filename));
      const thumb = await this.thumbs.find(key, req.filename, type, req.thumb, fileOptions(field).thumbs ?? [], info.size);
      if (thumb) ({ key, name, contentType, info } = thumb);
      else contentType = type;
    }
    if (this.onDownload) {
      const served = await this.onDownload({ dbName: req.dbName, db: req.db, auth, request: req.request }, collection, record, field.name, name);
      if (served === undefined) throw notFound();
      name = served;
    }
    contentType ??= await this.contentTypeOf(key, req.filename);
    return {
      name,
      size: info.size,
      modified: info.modified,
      contentType,
      protected: isProtected,
      read: (range) => this.storage.read(key, range),
    };
  }

  private async contentTypeOf(key: string, name: string): Promise<string> {
    let type = this.types.get(key);
    if (type === undefined) {
      type = await detectStoredType((end) => this.storage.read(key, end === undefined ? undefined : { start: 0, end }), name);
      if (this.types.size >= TYPE_CACHE_LIMIT) this.types.clear();
      this.types.set(key, type);
    }
    return type;
  }
}
