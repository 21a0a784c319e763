import type { Readable } from 'node:stream';

/**
 * Where uploaded files live. Keys are `<db>/<collection>/<record id>/<file name>`, each segment already
 * checked by the caller (see `fileKey`). The local driver (local.ts) keeps them under `<dir>/storage`;
 * the S3 driver (s3.ts) uses them as object names in a bucket. A driver that cannot reach its storage
 * throws an ApiError (503), so the request that needed it fails and nothing else does.
 */
export interface FileStorage {
  /** Takes the staged local file at `source` (it is moved or copied, then no longer the caller's). */
  put(key: string, source: string, meta: { contentType: string }): Promise<void>;
  /** Size and modification time, or undefined when there is no such file. */
  stat(key: string): Promise<StoredFileInfo | undefined>;
  /**
   * The content, or the bytes `start..end` (inclusive) of it. Resolves once the content is there to
   * stream, so a failure is still an error answer, not a response cut short.
   */
  read(key: string, range?: { start: number; end?: number }): Promise<Readable>;
  delete(key: string): Promise<void>;
  /** Deletes everything under `prefix` (a record's folder: `<db>/<collection>/<record id>`). */
  deletePrefix(prefix: string): Promise<void>;
  /** Whether each call is a round trip over the network (an object store), not a local file operation. */
  readonly remote: boolean;
  /** Releases connections (called when the services stop). */
  close?(): void;
}

export interface StoredFileInfo {
  size: number;
  modified: Date;
  /** Set by drivers that keep it (object stores); otherwise the content is sniffed. */
  contentType?: string;
}
