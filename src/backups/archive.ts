import { createWriteStream, existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { badRequest } from '../errors.ts';
import { isValidDatabaseName } from '../lib/identifiers.ts';
import { checkSqliteFile, readRows } from '../storage/sqlite/inspect.ts';

/**
 * The backup archive: a ZIP laid out like the data directory, so restoring is moving its entries into
 * place. Writing streams files into the ZIP; reading checks every entry's name before anything is
 * extracted and every database after, so a corrupt or foreign archive is refused while the data is
 * untouched.
 *
 *   cairn-backup.json           what this is: {format, version, created, databases}
 *   system.db, logs.db          instance tables, request log
 *   databases/<name>.db         one per database listed in system.db
 *   migrations/<file>           the migration files
 *   storage/<db>/…              uploaded files
 *   .jwt_secret                 the generated instance secret (tokens and API keys keep working)
 */

export const MANIFEST = 'cairn-backup.json';
const FORMAT = 'cairn-backup';
const VERSION = 1;
const ROOT_FILES = new Set([MANIFEST, 'system.db', 'logs.db', '.jwt_secret']);
const MAX_ENTRIES = 1_000_000;

export interface Manifest {
  format: typeof FORMAT;
  version: number;
  created: string;
  databases: string[];
}

export function manifest(created: string, databases: string[]): Manifest {
  return { format: FORMAT, version: VERSION, created, databases };
}

export interface ArchiveEntry {
  /** Path inside the archive. */
  name: string;
  /** A file to read, or the entry's content. */
  file?: string;
  data?: Buffer;
}

/** Writes a ZIP of `entries` to `target`. */
export async function writeArchive(target: string, entries: readonly ArchiveEntry[]): Promise<void> {
  // The ZIP libraries load with the first backup or restore (src/lib/zip.ts says why).
  const { ZipFile } = await import('yazl');
  const zip = new ZipFile();
  for (const e of entries) {
    if (e.file !== undefined) zip.addFile(e.file, e.name);
    else zip.addBuffer(e.data ?? Buffer.alloc(0), e.name);
  }
  zip.end();
  await pipeline(zip.outputStream, createWriteStream(target, { mode: 0o600 }));
}

function refuse(message: string) {
  return badRequest(`Invalid backup: ${message}`);
}

/** Whether an archive path is one a backup can hold (directories end with `/`). */
export function isExpectedEntry(name: string): boolean {
  if (name.includes('\\') || name.includes('\u0000') || name.startsWith('/')) return false;
  const parts = name.split('/');
  if (parts.some((p, i) => p === '..' || p === '.' || (p === '' && i < parts.length - 1))) return false;
  const directory = name.endsWith('/');
  const [top, ...rest] = parts;
  if (parts.length === 1) return ROOT_FILES.has(name);
  if (top === 'databases') {
    if (directory) return parts.length === 2;
    const m = /^([a-z][a-z0-9_]*)\.db$/.exec(rest.join('/'));
    return rest.length === 1 && m !== null && isValidDatabaseName(m[1]);
  }
  if (top === 'migrations') return parts.length === 2;
  if (top === 'storage') return rest[0] !== '.staging';
  return false;
}

/**
 * Extracts a backup into `dir` (a new directory) after checking every entry's name, then checks what
 * it holds: the manifest, `system.db`, one file per database it lists and no other, and every database
 * file opening with `PRAGMA integrity_check` ok. Any problem is a 400 (the caller removes `dir`).
 */
export async function extractArchive(zipPath: string, dir: string): Promise<Manifest> {
  const { openPromise } = await import('yauzl');
  let zip;
  try {
    zip = await openPromise(zipPath, { lazyEntries: true, validateEntrySizes: true, strictFileNames: true });
  } catch (err) {
    throw refuse(`not a ZIP archive (${(err as Error).message.replace(/\.+$/, '')}).`);
  }
  try {
    if (zip.entryCount > MAX_ENTRIES) throw refuse(`more than ${MAX_ENTRIES} entries.`);
    const names = new Set<string>();
    // Names first, all of them: an archive with one unexpected entry is refused before a byte is written.
    for await (const entry of zip.eachEntry()) {
      if (!isExpectedEntry(entry.fileName)) throw refuse(`unexpected entry "${entry.fileName.slice(0, 200)}".`);
      if (names.has(entry.fileName)) throw refuse(`entry "${entry.fileName}" appears twice.`);
      names.add(entry.fileName);
    }
    if (!names.has(MANIFEST)) throw refuse(`no ${MANIFEST}: this is not a Cairn backup.`);
    if (!names.has('system.db')) throw refuse('no system.db.');
  } catch (err) {
    zip.close();
    if ((err as { status?: number }).status === 400) throw err;
    throw refuse(`${(err as Error).message.replace(/\.+$/, '')}.`);
  }
  zip.close();

  mkdirSync(dir, { recursive: true, mode: 0o700 });
  try {
    zip = await openPromise(zipPath, { lazyEntries: true, validateEntrySizes: true, strictFileNames: true });
    for await (const entry of zip.eachEntry()) {
      const target = path.join(dir, ...entry.fileName.split('/'));
      if (!target.startsWith(dir + path.sep)) throw refuse(`unexpected entry "${entry.fileName}".`);
      if (entry.fileName.endsWith('/')) {
        mkdirSync(target, { recursive: true, mode: 0o700 });
        continue;
      }
      mkdirSync(path.dirname(target), { recursive: true, mode: 0o700 });
      await pipeline(await zip.openReadStreamPromise(entry), createWriteStream(target, { mode: 0o600, flags: 'wx' }));
    }
  } catch (err) {
    if ((err as { status?: number }).status === 400) throw err;
    throw refuse(`${(err as Error).message.replace(/\.+$/, '')}.`);
  } finally {
    zip.close();
  }
  return checkExtracted(dir);
}

function checkExtracted(dir: string): Manifest {
  let parsed: Manifest;
  try {
    parsed = JSON.parse(readFileSync(path.join(dir, MANIFEST), 'utf8')) as Manifest;
  } catch {
    throw refuse(`${MANIFEST} is not JSON.`);
  }
  if (parsed?.format !== FORMAT) throw refuse(`${MANIFEST} does not describe a Cairn backup.`);
  if (parsed.version !== VERSION) throw refuse(`format version ${String(parsed.version)} is not supported (this Cairn reads version ${VERSION}).`);

  const files = ['system.db', ...(existsSync(path.join(dir, 'logs.db')) ? ['logs.db'] : [])];
  const listed = readRows<{ name: string }>(path.join(dir, 'system.db'), 'SELECT name FROM _databases');
  if (!listed) throw refuse('system.db is not a Cairn system database.');
  const inArchive = existsSync(path.join(dir, 'databases')) ? readdirSync(path.join(dir, 'databases')) : [];
  for (const { name } of listed) {
    if (!isValidDatabaseName(name) || !inArchive.includes(`${name}.db`)) throw refuse(`the database "${name}" is listed but its file is missing.`);
    files.push(`databases/${name}.db`);
  }
  const unlisted = inArchive.filter((f) => !listed.some((l) => `${l.name}.db` === f));
  if (unlisted.length > 0) throw refuse(`databases/${unlisted[0]} is not listed in system.db.`);
  for (const f of files) {
    const problems = checkSqliteFile(path.join(dir, f));
    if (problems.length > 0) throw refuse(`${f} is damaged (${problems[0].slice(0, 200)}).`);
  }
  return parsed;
}
