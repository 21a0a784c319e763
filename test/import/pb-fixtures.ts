import Sqlite from 'better-sqlite3';
import { createHash, createHmac } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * The PocketBase data shared with this repository (`../shared/fixtures`: PocketBase's own test data
 * and five real applications' data.db), read where they lie, never copied into the repository. A
 * test that writes copies first.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/** `../shared/fixtures` beside the checkout (CI), or beside the directory of worktrees (development). */
export const SHARED_FIXTURES = [path.join(ROOT, '..', 'shared', 'fixtures'), path.join(ROOT, '..', '..', 'shared', 'fixtures')].find((p) => existsSync(p)) ?? path.join(ROOT, '..', 'shared', 'fixtures');

export const PB_TESTS = path.join(SHARED_FIXTURES, 'pocketbase-tests');
export const PB_APPS = path.join(SHARED_FIXTURES, 'pocketbase-apps');

/** The five application files, by name. */
export function appFiles(): string[] {
  return readdirSync(PB_APPS).filter((f) => f.endsWith('.db')).sort();
}

/**
 * Opens a PocketBase file to read it in a test. SQLite makes `-wal`/`-shm` files beside a WAL-mode
 * file even to read it, so the test reads an in-memory image of it instead (the file is left as it is).
 */
export function readPocketBase(file: string): Sqlite.Database {
  const image = Buffer.from(readFileSync(file));
  // Bytes 18 and 19 say "WAL"; an in-memory image is read as a plain (rollback journal) file.
  image[18] = 1;
  image[19] = 1;
  return new Sqlite(image, { readonly: true });
}

/** A token signed as PocketBase signs it: HS256 under the account's tokenKey joined with a secret. */
export function pocketbaseToken(claims: Record<string, unknown>, key: string): string {
  const head = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');
  const body = `${head}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
  return `${body}.${createHmac('sha256', key).update(body).digest('base64url')}`;
}

/** SHA-256 of every file under a directory (or of one file), by relative path: "left byte for byte". */
export function checksums(target: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (p: string, rel: string) => {
    if (statSync(p).isDirectory()) for (const entry of readdirSync(p).sort()) walk(path.join(p, entry), path.join(rel, entry));
    else out.set(rel, createHash('sha256').update(readFileSync(p)).digest('hex'));
  };
  walk(target, '.');
  return out;
}
