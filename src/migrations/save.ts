import { ApiError, badRequest, conflict, isApiError } from '../errors.ts';
import { sameJson } from '../lib/canonical-json.ts';
import { nowIso } from '../lib/time.ts';
import { unzipEntries } from '../lib/zip.ts';
import type { MigrationDeps } from './deps.ts';
import { checksum, parseFileName } from './files.ts';
import { journalEntries, journalEntry, recordedSchema } from './journal.ts';
import type { Migration } from './model.ts';
import { planMigration } from './plan.ts';
import { migrationToYaml, type ParsedFile, parseMigrationData, parseMigrationText, withVersion } from './schema-file.ts';
import { readInstanceSchema } from './snapshot.ts';
import { nextVersion } from './versions.ts';

/**
 * Producing migration files, all as pending migrations: generate, save, upload, import. A file that
 * carries a version keeps it; the same content again is accepted, different content under a version
 * in use is a 409. A file saved without one gets the next free version; an uploaded file must carry
 * its own (API contract §8), so that sending the same file twice can never make two migrations.
 */

/** `{version, name, yaml, migration}`: the answer of generate, save, load and upload. */
export interface MigrationDocument {
  version: string;
  name: string;
  yaml: string;
  migration: Migration;
}

const ARCHIVE_LIMITS = { maxEntries: 1000, maxEntrySize: 1024 * 1024, maxTotalSize: 20 * 1024 * 1024 };
const MAX_NAME = 100;

const reserved = new Set<string>();

/** Saves a migration under a fresh version (now, or the next free millisecond). */
async function saveNew(deps: MigrationDeps, name: string, render: (version: string) => { text: string; migration: Migration }): Promise<MigrationDocument> {
  const known = new Set((await journalEntries(deps.registry.system)).map((e) => e.version));
  for (const ref of await deps.files.list()) known.add(ref.version);
  // Reserved until written, so that two saves of this process never pick the same version.
  for (;;) {
    const version = nextVersion((v) => known.has(v) || reserved.has(v));
    reserved.add(version);
    try {
      const { text, migration } = render(version);
      if (await deps.files.create(version, name, text)) return { version, name, yaml: text, migration: { ...migration, version } };
      // Another node saved a migration under it meanwhile.
      known.add(version);
    } finally {
      reserved.delete(version);
    }
  }
}

function sameContent(text: string, migration: Migration): boolean {
  try {
    return sameJson(parseMigrationText(text).migration, migration);
  } catch {
    return false;
  }
}

/** Whether a file with its own version must be written: false when the same content is there; 409 when other content is. */
async function needsWrite(deps: MigrationDeps, version: string, text: string, migration: Migration): Promise<boolean> {
  const existing = (await deps.files.read(version));
  if (existing) {
    if (existing.text === text || sameContent(existing.text, migration)) return false;
    throw versionTaken(version);
  }
  // An applied migration whose file went missing may be restored, with the very same file only.
  const entry = await journalEntry(deps.registry.system, version);
  if (entry?.status === 'applied' && entry.checksum !== checksum(text)) throw versionTaken(version);
  return true;
}

function versionTaken(version: string) {
  return conflict(`Migration version ${version} already exists with different content.`, {
    version: { code: 'validation_version_exists', message: 'A different migration has this version.' },
  });
}

/**
 * Writes a file whose version `needsWrite` found free, unless it is taken by now: another save of the
 * version ran beside this one, which then ends as if it had come second. False when the same content
 * is there (nothing written).
 */
async function writeNew(deps: MigrationDeps, version: string, name: string, text: string, migration: Migration): Promise<boolean> {
  if (await deps.files.create(version, name, text)) return true;
  if (await needsWrite(deps, version, text, migration)) throw versionTaken(version);
  return false;
}

async function saveParsed(deps: MigrationDeps, parsed: ParsedFile, text: string): Promise<MigrationDocument> {
  const { migration } = parsed;
  if (migration.version === '') return saveNew(deps, migration.name, (version) => ({ text: withVersion(parsed, version), migration }));
  if (await needsWrite(deps, migration.version, text, migration)) await writeNew(deps, migration.version, migration.name, text, migration);
  const stored = (await deps.files.read(migration.version))!;
  return { version: migration.version, name: migration.name, yaml: stored.text, migration: parseMigrationText(stored.text).migration };
}

/** Saves YAML text (save `{yaml}`). `field` names the request property, for errors. */
export function saveText(deps: MigrationDeps, text: string, field: string): Promise<MigrationDocument> {
  return saveParsed(deps, parseMigrationText(text, { field }), text);
}

/**
 * `POST /api/migrations/upload`: a file, which must name its `version` and `name` (400 otherwise). An
 * upload is a file coming from elsewhere, possibly sent again by a retrying client: inventing a version
 * would turn each retry into one more migration, where the file's own version makes it a no-op.
 */
export function saveUpload(deps: MigrationDeps, text: string): Promise<MigrationDocument> {
  return saveParsed(deps, parseMigrationText(text, { field: 'file', requireVersion: true }), text);
}

/** `POST /api/migrations/save`: `{yaml}`, or `{name, description?, databases}` (optionally `version`). */
export async function saveBody(deps: MigrationDeps, body: unknown): Promise<MigrationDocument> {
  const input = (body ?? {}) as Record<string, unknown>;
  if (typeof input.yaml === 'string') return saveText(deps, input.yaml, 'yaml');
  if (input.yaml !== undefined) throw badRequest('yaml must be a string.', { yaml: { code: 'validation_invalid_value', message: 'Must be a string.' } });
  const migration = parseMigrationData(input);
  migration.created_at ||= nowIso();
  if (migration.version === '') {
    return saveNew(deps, migration.name, (version) => {
      const m = { ...migration, version };
      return { text: migrationToYaml(m), migration: m };
    });
  }
  const text = migrationToYaml(migration);
  if (await needsWrite(deps, migration.version, text, migration)) await writeNew(deps, migration.version, migration.name, text, migration);
  return { version: migration.version, name: migration.name, yaml: (await deps.files.read(migration.version))!.text, migration };
}

/**
 * Diffs the schema recorded after the latest applied migration (empty before the first) with the
 * live schema of every database and saves the difference as a pending migration.
 */
export async function generate(deps: MigrationDeps, input: { name?: unknown; description?: unknown }): Promise<MigrationDocument | { changes: false }> {
  const name = typeof input.name === 'string' && input.name.trim() !== '' ? input.name.trim() : 'schema_changes';
  if (name.length > MAX_NAME) throw badRequest(`The name must be at most ${MAX_NAME} characters.`, { name: { code: 'validation_max_text_constraint', message: `At most ${MAX_NAME} characters.` } });
  if (input.description !== undefined && typeof input.description !== 'string') {
    throw badRequest('The description must be a string.', { description: { code: 'validation_invalid_value', message: 'Must be a string.' } });
  }
  const databases = planMigration(await recordedSchema(deps.registry.system), await readInstanceSchema(deps.registry));
  if (Object.keys(databases).length === 0) return { changes: false };
  const description = input.description ? input.description : undefined;
  return saveNew(deps, name, (version) => {
    const migration: Migration = { version, name, created_at: nowIso(), ...(description ? { description } : {}), databases };
    return { text: migrationToYaml(migration), migration };
  });
}

/**
 * Every migration file of a ZIP archive, all or nothing: files identical to ones present are
 * skipped; a different file under a version in use is a 409 and nothing of the archive is saved.
 */
export async function importArchive(deps: MigrationDeps, buffer: Buffer): Promise<{ imported: string[]; skipped: string[] }> {
  const entries = await unzipEntries(buffer, ARCHIVE_LIMITS);
  if (entries.length === 0) throw badRequest('The archive holds no migration files.');
  const candidates: { version: string; name: string; text: string; migration: Migration }[] = [];
  for (const entry of entries) {
    const ref = parseFileName(entry.name.split('/').pop()!);
    if (!ref) {
      throw badRequest(`"${entry.name}" is not a migration file (<version>_<name>.yaml).`, {
        file: { code: 'validation_invalid_archive', message: `Unexpected entry "${entry.name}".` },
      });
    }
    if (candidates.some((c) => c.version === ref.version)) throw badRequest(`The archive holds two migrations with version ${ref.version}.`);
    const raw = entry.data.toString('utf8');
    let parsed: ParsedFile;
    try {
      parsed = parseMigrationText(raw, { field: 'file' });
    } catch (err) {
      if (isApiError(err)) throw new ApiError(err.status, `${entry.name}: ${err.message}`, err.data);
      throw err;
    }
    const { migration } = parsed;
    if (migration.version !== '' && migration.version !== ref.version) {
      throw badRequest(`${entry.name}: the file says version ${migration.version}, its name says ${ref.version}.`);
    }
    const text = migration.version === '' ? withVersion(parsed, ref.version) : raw;
    candidates.push({ version: ref.version, name: migration.name, text, migration: { ...migration, version: ref.version } });
  }
  const toWrite: typeof candidates = [];
  const skipped: string[] = [];
  for (const c of candidates) {
    if (await needsWrite(deps, c.version, c.text, c.migration)) toWrite.push(c);
    else skipped.push(c.version);
  }
  const imported: string[] = [];
  try {
    for (const c of toWrite) {
      if (await writeNew(deps, c.version, c.name, c.text, c.migration)) imported.push(c.version);
      else skipped.push(c.version);
    }
  } catch (err) {
    for (const v of imported) (await deps.files.remove(v));
    throw err;
  }
  return { imported: imported.sort(), skipped: skipped.sort() };
}
