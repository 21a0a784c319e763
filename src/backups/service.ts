import { randomBytes } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { SECRET_FILE } from '../auth/secret.ts';
import { badRequest, fieldError, notFound, validationFailed } from '../errors.ts';
import type { S3FileStorage } from '../files/storage/s3.ts';
import { nowIso } from '../lib/time.ts';
import type { DatabaseRegistry } from '../storage/index.ts';
import { checkpointsSettled } from '../storage/sqlite/checkpointer.ts';
import { readRows } from '../storage/sqlite/inspect.ts';
import { type ArchiveEntry, extractArchive, MANIFEST, manifest, writeArchive } from './archive.ts';
import { snapshotDatabase } from './snapshot.ts';
import { BACKUP_KEY as KEY, type BackupInfo, type BackupStore, LocalBackupStore, S3BackupStore } from './store.ts';
import { type Swap, swapIn } from './swap.ts';

export type { BackupInfo } from './store.ts';

/** Where files and backups are, read for each use (the `s3` and `backups.s3` settings, or the environment). */
export interface BackupPlaces {
  /** Whether uploaded files are in a bucket (then there is no storage directory to back up). */
  filesOnS3(): boolean;
  /** The bucket backups are kept in (`backups.s3` enabled), or undefined for `<dir>/backups/`. */
  bucket(): Promise<S3FileStorage> | undefined;
}

/**
 * What a restore needs from whatever runs the services (the HTTP host, `src/http/host.ts`): writes
 * refused while the data is replaced, and every service stopped, the files swapped, then every service
 * started again on the restored data.
 */
export interface ServiceRestarter {
  /** Answers every write with a 503 saying `message` until the returned function is called. */
  refuseWrites(message: string): () => void;
  /**
   * Stops every service (closing every database), runs `swap`, and starts the services again. When
   * they fail to start on the swapped data, the swap is rolled back, the services are started on the
   * previous data and the error is thrown; else the swap is committed.
   */
  restart(swap: () => Promise<Swap>): Promise<void>;
}

const BUSY = 'Try again later - another backup/restore process has already been started.';
const RESTORING = 'A backup is being restored; writes are refused until it completes. Try again in a moment.';
export const SCHEDULED_PREFIX = 'auto_cairn_backup_';

function stamp(date = new Date()): string {
  return date.toISOString().replace(/[-:T]/g, '').slice(0, 14);
}

function invalidKey() {
  return validationFailed({ name: fieldError('validation_match_invalid', 'Use 1-96 lower-case letters, digits, _ or -, ending in .zip.') });
}

/**
 * Backups of a SQLite instance (API contract §15): ZIPs of a consistent copy of every database, the
 * migrations and the uploaded files, kept in `<dir>/backups/` or, with `backups.s3` enabled in the
 * settings, in that bucket (store.ts); upload, download, delete, restore, and an optional schedule.
 * One backup or restore runs at a time.
 */
export class BackupService {
  readonly dir: string;
  /** Set by the HTTP host; without one (CLI, tests of the domain) restores are refused. */
  restarter?: ServiceRestarter;
  private active?: string;
  /** Backup names being written now (`writingTo`). */
  private readonly writing = new Set<string>();

  constructor(
    private readonly dataDir: string,
    private readonly registry: DatabaseRegistry,
    /** A backup holds the storage directory, so only files kept locally can be backed up. */
    private readonly places: BackupPlaces = { filesOnS3: () => false, bucket: () => undefined },
  ) {
    this.dir = path.join(dataDir, 'backups');
  }

  /** Where the archives are now: read for each use, so a saved `backups.s3` acts on the next one. */
  private async store(): Promise<BackupStore> {
    const bucket = this.places.bucket();
    return bucket ? new S3BackupStore(await bucket, this.dataDir) : new LocalBackupStore(this.dir);
  }

  /**
   * Why backups are not made here, or undefined: on PostgreSQL they are the database's own tools'
   * job, and files in a bucket are the bucket's (a backup ZIP holds the local storage directory).
   */
  unsupported(): string | undefined {
    if (this.registry.system.dialect.name !== 'sqlite') {
      return 'Backups of a PostgreSQL instance are made with PostgreSQL\'s own tools: pg_dump to take one, pg_restore to restore it (the uploaded files too, from their S3 bucket or storage directory).';
    }
    if (this.places.filesOnS3()) {
      return 'Backups hold the local storage directory, but the uploaded files are in an S3 bucket (CAIRN_STORAGE=s3, or the s3 settings): back the bucket up with its own tools (versioning, replication) and the data directory\'s databases with a copy taken while the server is stopped.';
    }
    return undefined;
  }

  private check(): void {
    const reason = this.unsupported();
    if (reason) throw badRequest(reason);
  }

  /** Stored backups, newest first. */
  async list(): Promise<BackupInfo[]> {
    this.check();
    const out = await (await this.store()).list();
    return out.sort((a, b) => b.modified.localeCompare(a.modified) || b.key.localeCompare(a.key));
  }

  /** Takes a backup now; `name` (optional) is its key. */
  async create(body: unknown): Promise<BackupInfo> {
    this.check();
    if (body !== undefined && body !== null && (typeof body !== 'object' || Array.isArray(body))) throw badRequest('The body must be a JSON object such as {"name": "backup.zip"}.');
    const name = (body as { name?: unknown } | null | undefined)?.name;
    if (name !== undefined && name !== null && name !== '' && (typeof name !== 'string' || !KEY.test(name))) throw invalidKey();
    const key = typeof name === 'string' && name !== '' ? name : `cairn_backup_${stamp()}.zip`;
    const taken = () => validationFailed({ name: fieldError('validation_backup_name_exists', 'The backup file name is invalid or already exists.') });
    return this.writingTo(key, taken, async () => {
      if (await (await this.store()).info(key)) throw taken();
      return this.exclusive(key, () => this.take(key));
    });
  }

  /** Stores an uploaded backup under its file name (checked when it is restored). */
  async upload(fileName: string, content: Readable): Promise<BackupInfo> {
    this.check();
    if (!KEY.test(fileName)) throw invalidKey();
    const taken = () => validationFailed({ file: fieldError('validation_backup_name_exists', 'Backup file with the specified name already exists.') });
    return this.writingTo(fileName, taken, async () => {
      const store = await this.store();
      if (await store.info(fileName)) throw taken();
      mkdirSync(this.dir, { recursive: true, mode: 0o700 });
      const partial = path.join(this.dir, `.upload-${randomBytes(6).toString('hex')}`);
      try {
        await pipeline(content, createWriteStream(partial, { mode: 0o600 }));
        if ((content as { truncated?: boolean }).truncated) throw badRequest('The uploaded backup is larger than the upload limit.');
        await store.put(fileName, partial);
      } finally {
        rmSync(partial, { force: true });
      }
      return this.info(store, fileName);
    });
  }

  /**
   * Runs `fn`, which writes the backup `key`, holding the name until it is stored: a second upload or
   * create of the name meanwhile is refused as if the first had finished (`taken`), where both would
   * otherwise pass the existence check and the last one's file silently replace the other's.
   */
  private async writingTo<T>(key: string, taken: () => Error, fn: () => Promise<T>): Promise<T> {
    if (this.writing.has(key)) throw taken();
    this.writing.add(key);
    try {
      return await fn();
    } finally {
      this.writing.delete(key);
    }
  }

  /** The file of a backup, for downloads. */
  async open(key: string): Promise<{ stream: Readable; size: number }> {
    this.check();
    const store = await this.existing(key);
    return store.open(key);
  }

  async delete(key: string): Promise<void> {
    this.check();
    const store = await this.existing(key);
    if (this.active === key) throw badRequest('The backup is currently being used and cannot be deleted.');
    await store.delete(key);
  }

  /**
   * Replaces the data with a backup's: the archive is checked in full first (a corrupt or foreign one is
   * a 400 and nothing is touched), writes are refused from then on, and the services restart on the
   * restored data. Resolves once they serve it.
   */
  async restore(key: string): Promise<void> {
    this.check();
    const store = await this.existing(key);
    const restarter = this.restarter;
    if (!restarter) throw badRequest('Restoring needs the running server (cairn serve).');
    await this.exclusive(key, async () => {
      const release = restarter.refuseWrites(RESTORING);
      const incoming = path.join(this.dataDir, `.restore-incoming-${randomBytes(6).toString('hex')}`);
      try {
        await store.withLocalFile(key, (file) => extractArchive(file, incoming));
        await restarter.restart(async () => {
          // The checkpointing thread's connections to the old files must be closed before the files
          // move: closed later, they would checkpoint into the WAL that then has the same name.
          await checkpointsSettled();
          return swapIn(this.dataDir, incoming);
        });
      } finally {
        rmSync(incoming, { recursive: true, force: true });
        release();
      }
    });
  }

  /**
   * Takes one scheduled backup and keeps the newest `keep` of them (0: all): the `__pbAutoBackup__`
   * system cron job runs it on `backups.cron` or `CAIRN_BACKUP_CRON` (backups/schedule.ts).
   */
  async takeScheduled(keep: number, log: { info(obj: unknown, msg: string): void }): Promise<void> {
    const key = `${SCHEDULED_PREFIX}${stamp()}.zip`;
    const info = await this.exclusive(key, () => this.take(key));
    log.info({ key: info.key, size: info.size }, 'scheduled backup taken');
    await this.prune(keep);
  }

  /** Deletes scheduled backups beyond the newest `keep`. */
  async prune(keep: number): Promise<void> {
    if (keep <= 0) return;
    const store = await this.store();
    const scheduled = (await this.list()).filter((b) => b.key.startsWith(SCHEDULED_PREFIX));
    for (const old of scheduled.slice(keep)) await store.delete(old.key);
  }

  /** Whether a backup could start now (none is being made or restored). */
  get idle(): boolean {
    return this.active === undefined;
  }

  private async exclusive<T>(key: string, fn: () => Promise<T>): Promise<T> {
    if (this.active !== undefined) throw badRequest(BUSY);
    this.active = key;
    try {
      return await fn();
    } finally {
      this.active = undefined;
    }
  }

  /**
   * Writes the archive: system.db first (its database list decides which databases are in the
   * backup, so one created meanwhile is left out whole), then each database and the request log, each
   * an online backup taken while writes go on; then the migrations, the uploaded files and the secret.
   */
  private async take(key: string): Promise<BackupInfo> {
    const store = await this.store();
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const work = path.join(this.dataDir, `.backup-${randomBytes(6).toString('hex')}`);
    mkdirSync(path.join(work, 'databases'), { recursive: true, mode: 0o700 });
    const partial = path.join(this.dir, `.${key}.partial`);
    try {
      const entries: ArchiveEntry[] = [];
      const copy = async (relative: string) => {
        await snapshotDatabase(path.join(this.dataDir, relative), path.join(work, relative));
        entries.push({ name: relative, file: path.join(work, relative) });
      };
      await copy('system.db');
      const names = (readRows<{ name: string }>(path.join(work, 'system.db'), 'SELECT name FROM _databases ORDER BY name') ?? []).map((r) => r.name);
      for (const name of names) await copy(`databases/${name}.db`);
      if (existsSync(path.join(this.dataDir, 'logs.db'))) await copy('logs.db');
      entries.push(...filesUnder(this.dataDir, 'migrations'), ...filesUnder(this.dataDir, 'storage').filter((e) => !e.name.startsWith('storage/.staging/')));
      if (existsSync(path.join(this.dataDir, SECRET_FILE))) entries.push({ name: SECRET_FILE, file: path.join(this.dataDir, SECRET_FILE) });
      entries.unshift({ name: MANIFEST, data: Buffer.from(JSON.stringify(manifest(nowIso(), names), null, 2)) });
      await writeArchive(partial, entries);
      await store.put(key, partial);
    } finally {
      rmSync(work, { recursive: true, force: true });
      rmSync(partial, { force: true });
    }
    return this.info(store, key);
  }

  private async info(store: BackupStore, key: string): Promise<BackupInfo> {
    const info = await store.info(key);
    if (!info) throw notFound();
    return info;
  }

  /** The store holding the backup `key`; a 404 when there is none. */
  private async existing(key: string): Promise<BackupStore> {
    if (!KEY.test(key)) throw notFound();
    const store = await this.store();
    if (!(await store.info(key))) throw notFound();
    return store;
  }
}

/** Every file under `<dataDir>/<top>`, named by its path from the data directory with `/`. */
function filesUnder(dataDir: string, top: string): ArchiveEntry[] {
  const root = path.join(dataDir, top);
  if (!existsSync(root)) return [];
  const out: ArchiveEntry[] = [];
  for (const entry of readdirSync(root, { recursive: true, withFileTypes: true })) {
    if (!entry.isFile()) continue;
    const full = path.join(entry.parentPath, entry.name);
    out.push({ name: path.relative(dataDir, full).split(path.sep).join('/'), file: full });
  }
  return out;
}
