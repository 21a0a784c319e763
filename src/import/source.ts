import Sqlite from 'better-sqlite3';
import { copyFileSync, constants, existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { badRequest } from '../errors.ts';
import { isValidName } from '../lib/identifiers.ts';
import { isPlainObject } from '../lib/objects.ts';

/**
 * Reading a PocketBase data directory (`pb_data`: `data.db` and `storage/`). The file is PocketBase's,
 * not Cairn's: it is opened read-only with a connection of its own (none of Cairn's pragmas, no WAL
 * switch), so importing never changes it. Both schema generations are read:
 *
 * - `legacy`: PocketBase before 0.23 — `_collections.schema` with options nested per field, auth
 *   records' `passwordHash` and `username`, administrators in `_admins`.
 * - `current`: PocketBase 0.23 and later — `_collections.fields` with options flat on the field,
 *   system fields listed (`id`, `password`, `tokenKey`, `email`, …, `created`/`updated` as `autodate`),
 *   auth records' `password`, administrators as records of the `_superusers` auth collection.
 */

export type Generation = 'legacy' | 'current';

/** A field as PocketBase stores it; the options of both generations gathered in `options`. */
export interface PbField {
  id: string;
  name: string;
  type: string;
  system: boolean;
  required: boolean;
  presentable: boolean;
  hidden: boolean;
  unique: boolean;
  options: Record<string, unknown>;
  /** The definition as PocketBase stored it. */
  raw: Record<string, unknown>;
}

/** A row of PocketBase's `_collections`. */
export interface PbCollection {
  id: string;
  name: string;
  type: string;
  system: boolean;
  fields: PbField[];
  indexes: string[];
  listRule: string | null;
  viewRule: string | null;
  createRule: string | null;
  updateRule: string | null;
  deleteRule: string | null;
  options: Record<string, unknown>;
  created: string;
  updated: string;
}

export interface PbAdmin {
  id: string;
  email: string;
  passwordHash: string;
  /** With the instance's admin (or `_superusers`) token secret, what PocketBase signed the admin's tokens with. */
  tokenKey: string;
  avatar: number;
  created: string;
  updated: string;
}

export interface PbExternalAuth {
  id: string;
  collectionId: string;
  recordId: string;
  provider: string;
  providerId: string;
  created: string;
  updated: string;
}

/** A row of PocketBase's `_authOrigins` (0.23 and later): a device an account signed in from. */
export interface PbAuthOrigin {
  id: string;
  collectionId: string;
  recordId: string;
  fingerprint: string;
  created: string;
  updated: string;
}

/** The keys every field has; in the current generation everything else on a field is an option. */
const FIELD_KEYS = new Set(['id', 'name', 'type', 'system', 'required', 'presentable', 'hidden', 'unique', 'options']);

function parseJson(raw: unknown, fallback: unknown): unknown {
  // PocketBase's JSON columns hold text, or (written by some versions) a blob of the same bytes.
  const text = Buffer.isBuffer(raw) ? raw.toString('utf8') : raw;
  if (typeof text !== 'string' || text === '') return fallback;
  try {
    return JSON.parse(text);
  } catch {
    return fallback;
  }
}

function refuse(message: string): Error {
  return badRequest(message);
}

function fieldOf(raw: unknown, generation: Generation): PbField | undefined {
  if (!isPlainObject(raw) || typeof raw.name !== 'string' || typeof raw.type !== 'string') return undefined;
  let options: Record<string, unknown>;
  if (generation === 'legacy') options = isPlainObject(raw.options) ? { ...raw.options } : {};
  else options = Object.fromEntries(Object.entries(raw).filter(([k]) => !FIELD_KEYS.has(k)));
  return {
    id: typeof raw.id === 'string' ? raw.id : '',
    name: raw.name,
    type: raw.type,
    system: raw.system === true,
    required: raw.required === true,
    presentable: raw.presentable === true,
    hidden: raw.hidden === true,
    unique: raw.unique === true,
    options,
    raw,
  };
}

/** An open PocketBase data file. `close()` it when done. */
export class PocketBaseSource {
  private readonly db: Sqlite.Database;
  readonly generation: Generation;
  /** The `storage/` directory beside `data.db` (it may not exist: PocketBase may keep files in S3). */
  readonly storageDir: string;

  private constructor(
    readonly dataFile: string,
    db: Sqlite.Database,
    generation: Generation,
    private readonly copyDir: string,
  ) {
    this.db = db;
    this.generation = generation;
    this.storageDir = path.join(path.dirname(dataFile), 'storage');
  }

  /**
   * Opens `input`: a `pb_data` directory or its `data.db`. Refuses (400) a missing path, a file that
   * is not SQLite, and an SQLite file that is not PocketBase's.
   *
   * What is read is a private copy (with the `-wal` beside it, when there is one, so that SQLite reads
   * what PocketBase committed last): PocketBase keeps its file in WAL mode, and SQLite opens such a
   * file, even read-only, by making `-wal` and `-shm` files beside it (better-sqlite3 has no
   * `immutable` URI). The source file and its directory stay byte for byte as they were.
   */
  static open(input: string): PocketBaseSource {
    const resolved = path.resolve(input);
    if (!existsSync(resolved)) throw refuse(`${input}: no such file or directory.`);
    const file = statSync(resolved).isDirectory() ? path.join(resolved, 'data.db') : resolved;
    if (!existsSync(file)) throw refuse(`${input} is a directory without a data.db: give a PocketBase pb_data directory or its data.db.`);
    const copyDir = mkdtempSync(path.join(tmpdir(), 'cairn-pb-import-'));
    const copy = path.join(copyDir, 'data.db');
    let db: Sqlite.Database;
    try {
      copyFileSync(file, copy, constants.COPYFILE_FICLONE);
      if (existsSync(`${file}-wal`)) copyFileSync(`${file}-wal`, `${copy}-wal`, constants.COPYFILE_FICLONE);
      db = new Sqlite(copy, { fileMustExist: true });
      // Opening is lazy: the first read is what finds out whether this is a database at all.
      db.prepare('SELECT name FROM sqlite_master LIMIT 1').get();
    } catch (err) {
      rmSync(copyDir, { recursive: true, force: true });
      throw refuse(`${input} is not an SQLite database (${(err as Error).message}), so not a PocketBase data file.`);
    }
    try {
      const columns = new Set((db.prepare("SELECT name FROM pragma_table_info('_collections')").all() as { name: string }[]).map((c) => c.name));
      let generation: Generation;
      if (columns.has('fields')) generation = 'current';
      else if (columns.has('schema') && columns.has('type')) generation = 'legacy';
      else if (columns.has('schema')) throw refuse(`${input} is from PocketBase before 0.8 (collections without types), which cannot be imported; upgrade it with PocketBase first.`);
      else throw refuse(`${input} is an SQLite database but not PocketBase's: it has no _collections table.`);
      return new PocketBaseSource(file, db, generation, copyDir);
    } catch (err) {
      db.close();
      rmSync(copyDir, { recursive: true, force: true });
      throw err;
    }
  }

  close(): void {
    this.db.close();
    rmSync(this.copyDir, { recursive: true, force: true });
  }

  /**
   * The pb_migrations files PocketBase recorded as applied (`_migrations` rows of `.js` and `.ts`
   * files; its own Go migrations are left out, Cairn has its own schema steps).
   */
  migrationHistory(): Array<{ file: string; applied: number }> {
    if (!this.hasTable('_migrations')) return [];
    const rows = this.db.prepare('SELECT file, applied FROM _migrations').all() as Array<{ file: string; applied: number | bigint }>;
    return rows.filter((r) => /\.(js|ts)$/.test(r.file)).map((r) => ({ file: r.file, applied: Number(r.applied) }));
  }

  /** Whether the file has a table of that name. */
  hasTable(name: string): boolean {
    return this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
  }

  /** Columns of a PocketBase table, as named there. */
  columns(table: string): Set<string> {
    return new Set((this.db.prepare('SELECT name FROM pragma_table_info(?)').all(table) as { name: string }[]).map((c) => c.name));
  }

  collections(): PbCollection[] {
    const columns = this.columns('_collections');
    const rows = this.db.prepare('SELECT * FROM _collections ORDER BY created, rowid').all() as Record<string, unknown>[];
    return rows.map((row) => {
      const rawFields = parseJson(row[this.generation === 'current' ? 'fields' : 'schema'], []);
      const rule = (k: string) => (typeof row[k] === 'string' ? (row[k] as string) : null);
      return {
        id: String(row.id),
        name: String(row.name),
        type: String(row.type ?? 'base'),
        system: row.system === 1 || row.system === true,
        fields: (Array.isArray(rawFields) ? rawFields : []).map((f) => fieldOf(f, this.generation)).filter((f): f is PbField => f !== undefined),
        indexes: columns.has('indexes') ? (parseJson(row.indexes, []) as unknown[]).filter((i): i is string => typeof i === 'string') : [],
        listRule: rule('listRule'),
        viewRule: rule('viewRule'),
        createRule: rule('createRule'),
        updateRule: rule('updateRule'),
        deleteRule: rule('deleteRule'),
        options: (() => {
          const o = parseJson(row.options, {});
          return isPlainObject(o) ? o : {};
        })(),
        created: String(row.created ?? ''),
        updated: String(row.updated ?? ''),
      };
    });
  }

  /** Administrators: `_admins` (legacy) or the records of `_superusers` (current). */
  admins(): PbAdmin[] {
    const table = this.generation === 'current' ? '_superusers' : '_admins';
    if (!this.hasTable(table)) return [];
    const hash = this.generation === 'current' ? 'password' : 'passwordHash';
    const avatar = this.columns(table).has('avatar') ? 'avatar' : '0';
    return this.db.prepare(`SELECT id, email, ${hash} AS passwordHash, tokenKey, ${avatar} AS avatar, created, updated FROM ${table} ORDER BY created, rowid`).all() as PbAdmin[];
  }

  /**
   * PocketBase's settings (`_params`, key `settings`): the JSON document, or, when PocketBase wrote it
   * encrypted (`--encryptionEnv`), the encrypted text.
   */
  settings(): { json?: Record<string, unknown>; encrypted?: string } {
    if (!this.hasTable('_params')) return {};
    // Before 0.23 the row is keyed by a `key` column, since by its id.
    const key = this.columns('_params').has('key') ? 'key' : 'id';
    const row = this.db.prepare(`SELECT value FROM _params WHERE ${key} = 'settings'`).get() as { value: unknown } | undefined;
    // PocketBase writes the document as text or as a blob of its bytes.
    const value = Buffer.isBuffer(row?.value) ? row.value.toString('utf8') : row?.value;
    if (typeof value !== 'string' || value === '') return {};
    const parsed = parseJson(value, undefined);
    if (isPlainObject(parsed)) return { json: parsed };
    // An encrypted document is stored as a JSON string of base64 text, or as that text itself.
    return { encrypted: typeof parsed === 'string' ? parsed : value };
  }

  /** OAuth2 links: `_externalAuths` (its columns were renamed in 0.23). */
  externalAuths(): PbExternalAuth[] {
    if (!this.hasTable('_externalAuths')) return [];
    const current = this.columns('_externalAuths').has('collectionRef');
    const [collection, record] = current ? ['collectionRef', 'recordRef'] : ['collectionId', 'recordId'];
    return this.db
      .prepare(`SELECT id, ${collection} AS collectionId, ${record} AS recordId, provider, providerId, created, updated FROM _externalAuths ORDER BY created, rowid`)
      .all() as PbExternalAuth[];
  }

  /** The devices accounts signed in from: `_authOrigins` (0.23 and later; none before). */
  authOrigins(): PbAuthOrigin[] {
    if (!this.hasTable('_authOrigins')) return [];
    return this.db
      .prepare('SELECT id, collectionRef AS collectionId, recordRef AS recordId, fingerprint, created, updated FROM _authOrigins ORDER BY created, rowid')
      .all() as PbAuthOrigin[];
  }

  /** The number of rows of a collection's table. */
  count(table: string): number {
    return (this.db.prepare(`SELECT COUNT(*) AS n FROM ${quoted(table)}`).get() as { n: number }).n;
  }

  /**
   * The rows of a collection's table in insertion order, as arrays of the named columns (a column the
   * table lacks reads as NULL), one at a time: a large table is never held in memory.
   */
  rows(table: string, columns: readonly string[]): IterableIterator<unknown[]> {
    const present = this.columns(table);
    const list = columns.map((c) => (present.has(c) ? quoted(c) : 'NULL')).join(', ');
    return this.db.prepare(`SELECT ${list} FROM ${quoted(table)} ORDER BY rowid`).raw(true).iterate() as IterableIterator<unknown[]>;
  }

  /** Where PocketBase keeps a record's file: `storage/<collection id>/<record id>/<name>`. */
  filePath(collectionId: string, recordId: string, name: string): string {
    return path.join(this.storageDir, collectionId, recordId, name);
  }

  fileExists(collectionId: string, recordId: string, name: string): boolean {
    // Names come from the data file: a name with a path separator or `..` never names a file here.
    if (/[/\\]|^\.\.?$/.test(name) || /[/\\]|^\.\.?$/.test(collectionId) || /[/\\]|^\.\.?$/.test(recordId)) return false;
    return existsSync(this.filePath(collectionId, recordId, name));
  }
}

/** A table or column name of the PocketBase file, checked before it is quoted into SQL. */
function quoted(name: string): string {
  if (!isValidName(name) && !/^_?[A-Za-z][A-Za-z0-9_]{0,62}$/.test(name)) throw new Error(`unexpected PocketBase name ${JSON.stringify(name)}`);
  return `"${name}"`;
}
