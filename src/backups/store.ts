import { createReadStream, createWriteStream, existsSync, readdirSync, renameSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type { S3FileStorage } from '../files/storage/s3.ts';
import { pbDate } from '../lib/time.ts';

/** A stored backup, as PocketBase v0.22 lists them. */
export interface BackupInfo {
  key: string;
  size: number;
  /** PocketBase's date form, UTC. */
  modified: string;
}

// PocketBase's rule for backup names.
export const BACKUP_KEY = /^[a-z0-9_-]{1,96}\.zip$/;

function info(key: string, size: number, modified: Date): BackupInfo {
  return { key, size, modified: pbDate(modified.toISOString()) as string };
}

/**
 * Where backup archives are kept: `<dir>/backups/` (local), or the bucket of the `backups.s3`
 * settings, each archive an object named by its key at the bucket's top, as PocketBase keeps them.
 * Keys reaching a store match BACKUP_KEY.
 */
export interface BackupStore {
  list(): Promise<BackupInfo[]>;
  info(key: string): Promise<BackupInfo | undefined>;
  /** Takes the finished archive at the local path `file` (moved, or uploaded then removed). */
  put(key: string, file: string): Promise<void>;
  open(key: string): Promise<{ stream: Readable; size: number }>;
  /** A local file of the backup for as long as `use` runs (a restore reads it in full). */
  withLocalFile<T>(key: string, use: (file: string) => Promise<T>): Promise<T>;
  delete(key: string): Promise<void>;
}

export class LocalBackupStore implements BackupStore {
  constructor(private readonly dir: string) {}

  private fileOf(key: string): string {
    // Only keys matching BACKUP_KEY get here: no separators, no dot segments.
    return path.join(this.dir, key);
  }

  async list(): Promise<BackupInfo[]> {
    if (!existsSync(this.dir)) return [];
    const out: BackupInfo[] = [];
    for (const name of readdirSync(this.dir)) {
      if (!BACKUP_KEY.test(name)) continue;
      const st = statSync(this.fileOf(name));
      if (st.isFile()) out.push(info(name, st.size, st.mtime));
    }
    return out;
  }

  async info(key: string): Promise<BackupInfo | undefined> {
    const file = this.fileOf(key);
    if (!existsSync(file)) return undefined;
    const st = statSync(file);
    return info(key, st.size, st.mtime);
  }

  async put(key: string, file: string): Promise<void> {
    renameSync(file, this.fileOf(key));
  }

  async open(key: string): Promise<{ stream: Readable; size: number }> {
    const file = this.fileOf(key);
    return { stream: createReadStream(file), size: statSync(file).size };
  }

  withLocalFile<T>(key: string, use: (file: string) => Promise<T>): Promise<T> {
    return use(this.fileOf(key));
  }

  async delete(key: string): Promise<void> {
    rmSync(this.fileOf(key), { force: true });
  }
}

export class S3BackupStore implements BackupStore {
  constructor(
    private readonly bucket: S3FileStorage,
    /** A local folder for a restore's download. */
    private readonly scratch: string,
  ) {}

  async list(): Promise<BackupInfo[]> {
    return (await this.bucket.list()).filter((o) => BACKUP_KEY.test(o.key)).map((o) => info(o.key, o.size, o.modified));
  }

  async info(key: string): Promise<BackupInfo | undefined> {
    const st = await this.bucket.stat(key);
    return st ? info(key, st.size, st.modified) : undefined;
  }

  put(key: string, file: string): Promise<void> {
    return this.bucket.put(key, file, { contentType: 'application/zip' });
  }

  async open(key: string): Promise<{ stream: Readable; size: number }> {
    const st = await this.bucket.stat(key);
    return { stream: await this.bucket.read(key), size: st?.size ?? 0 };
  }

  async withLocalFile<T>(key: string, use: (file: string) => Promise<T>): Promise<T> {
    const file = path.join(this.scratch, `.download-${Date.now()}-${key}`);
    try {
      await pipeline(await this.bucket.read(key), createWriteStream(file, { mode: 0o600 }));
      return await use(file);
    } finally {
      rmSync(file, { force: true });
    }
  }

  delete(key: string): Promise<void> {
    return this.bucket.delete(key);
  }
}
