import type { Readable } from 'node:stream';
import type { S3Config } from '../../config.ts';
import type { StoredS3 } from './check.ts';
import type { S3FileStorage } from './s3.ts';
import type { FileStorage, StoredFileInfo } from './types.ts';

/** The S3 options of a saved `s3` settings section (PocketBase's S3Config). */
export function s3Options(s3: StoredS3): S3Config {
  return {
    endpoint: s3.endpoint || undefined,
    bucket: s3.bucket,
    region: s3.region || 'us-east-1',
    accessKey: s3.accessKey || undefined,
    secret: s3.accessKey ? (s3.secret ?? '') : undefined,
    forcePathStyle: s3.forcePathStyle,
  };
}

/** One S3 client per bucket setting, made when first used (the AWS SDK is imported only then). */
export class S3Clients {
  private readonly made = new Map<string, Promise<S3FileStorage>>();

  get(options: S3Config): Promise<S3FileStorage> {
    const key = JSON.stringify(options);
    let storage = this.made.get(key);
    if (!storage) {
      storage = import('./s3.ts').then(({ S3FileStorage }) => new S3FileStorage(options));
      this.made.set(key, storage);
    }
    return storage;
  }

  close(): void {
    for (const storage of this.made.values()) void storage.then((s) => s.close(), () => undefined);
    this.made.clear();
  }
}

/**
 * Where uploaded files go, decided for each use: the `s3` settings section once saved (its bucket
 * when `enabled`, else the local storage directory), until then the environment's (`CAIRN_STORAGE`,
 * `CAIRN_S3_*`). A change saved on any node acts on the next file read or written there (settings
 * reach every node: SettingsService). Files already stored stay where they were written: switching
 * moves none.
 */
export class SettingsFileStorage implements FileStorage {
  /** Its S3 clients, which the backups share (closed with it). */
  readonly clients = new S3Clients();

  constructor(
    private readonly local: FileStorage,
    /** CAIRN_STORAGE=s3's bucket, or undefined for local. */
    private readonly environment: S3Config | undefined,
    /** The saved `s3` section, or undefined while none is saved. */
    private readonly saved: () => StoredS3 | undefined,
  ) {}

  /** The bucket in use, or undefined when files are on the local disk. */
  bucket(): S3Config | undefined {
    const saved = this.saved();
    if (saved === undefined) return this.environment;
    return saved.enabled ? s3Options(saved) : undefined;
  }

  get remote(): boolean {
    return this.bucket() !== undefined;
  }

  /** Whether the files are in the environment's bucket (no `s3` section saved). */
  get onEnvironmentS3(): boolean {
    return this.saved() === undefined && this.environment !== undefined;
  }

  private current(): Promise<FileStorage> | FileStorage {
    const bucket = this.bucket();
    return bucket ? this.clients.get(bucket) : this.local;
  }

  async put(key: string, source: string, meta: { contentType: string }): Promise<void> {
    return (await this.current()).put(key, source, meta);
  }

  async stat(key: string): Promise<StoredFileInfo | undefined> {
    return (await this.current()).stat(key);
  }

  async read(key: string, range?: { start: number; end?: number }): Promise<Readable> {
    return (await this.current()).read(key, range);
  }

  async delete(key: string): Promise<void> {
    return (await this.current()).delete(key);
  }

  async deletePrefix(prefix: string): Promise<void> {
    return (await this.current()).deletePrefix(prefix);
  }

  close(): void {
    this.clients.close();
    this.local.close?.();
  }
}
