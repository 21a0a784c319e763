import type { Readable } from 'node:stream';

/**
 * Where uploaded files live. Keys are `<db>/<collection>/<record id>/<file name>`, each segment already
 * checked by the caller (see `fileKey`). The local driver keeps them under `<dir>/storage`; an
 * S3-compatible driver would map keys to object names and `put` to an upload of the staged file.
 */
export interface FileStorage {
  /** Takes the staged local file at `source` (it is moved or copied, then no longer the caller's). */
  put(key: string, source: string, meta: { contentType: string }): Promise<void>;
  /** Size and modification time, or undefined when there is no such file. */
  stat(key: string): Promise<StoredFileInfo | undefined>;
  /** The content, or the bytes `start..end` (inclusive) of it. */
  read(key: string, range?: { start: number; end?: number }): Readable;
  delete(key: string): Promise<void>;
  /** Deletes everything under `prefix` (a record's folder: `<db>/<collection>/<record id>`). */
  deletePrefix(prefix: string): Promise<void>;
}

export interface StoredFileInfo {
  size: number;
  modified: Date;
  /** Set by drivers that keep it (object stores); otherwise the content is sniffed. */
  contentType?: string;
}
