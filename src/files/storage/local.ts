import { createReadStream, existsSync } from 'node:fs';
import { copyFile, mkdir, rename, rm, rmdir, stat, unlink } from 'node:fs/promises';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { FileStorage, StoredFileInfo } from './types.ts';

/** Files on the local disk under `root`: `<root>/<db>/<collection>/<record id>/<file name>`. */
export class LocalFileStorage implements FileStorage {
  readonly remote = false;

  constructor(readonly root: string) {}

  /** The path of a key. Keys are checked before they get here; this guards against a bug doing otherwise. */
  private pathOf(key: string): string {
    const full = path.resolve(this.root, key);
    if (!full.startsWith(this.root + path.sep)) throw new Error(`storage key escapes the storage directory: ${JSON.stringify(key)}`);
    return full;
  }

  async put(key: string, source: string): Promise<void> {
    const target = this.pathOf(key);
    await mkdir(path.dirname(target), { recursive: true });
    try {
      await rename(source, target);
    } catch (err) {
      // The staging directory can sit on another file system than the storage.
      if ((err as NodeJS.ErrnoException).code !== 'EXDEV') throw err;
      await copyFile(source, target);
      await unlink(source);
    }
  }

  async stat(key: string): Promise<StoredFileInfo | undefined> {
    try {
      const s = await stat(this.pathOf(key));
      return s.isFile() ? { size: s.size, modified: s.mtime } : undefined;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  async read(key: string, range?: { start: number; end?: number }): Promise<Readable> {
    return createReadStream(this.pathOf(key), range);
  }

  async delete(key: string): Promise<void> {
    const target = this.pathOf(key);
    await rm(target, { force: true });
    // A record folder goes with its last file (object stores have no folders to leave behind).
    await rmdir(path.dirname(target)).catch(() => {});
  }

  async deletePrefix(prefix: string): Promise<void> {
    const target = this.pathOf(prefix);
    // Every deleted record comes here, and most never had a file: one stat of the folder (some 4 µs)
    // answers for them, where rm's recursive walk of a missing path cost 70 µs of CPU and a trip
    // through the thread pool (issue 48, PocketBase's delete scenarios).
    if (!existsSync(target)) return;
    await rm(target, { recursive: true, force: true });
  }
}
