// A real PocketBase binary as a third target of the PocketBase bench (`--pocketbase-bin=PATH` or
// BENCH_POCKETBASE_BIN), so its scenarios run on the same machine, in the same run, as Cairn's. The
// binary is a measuring instrument the user brings; nothing of it lives in this repository.
import { execFileSync } from 'node:child_process';
import { freePort } from '../../test/helpers/process.ts';
import { type RunningServer, startCommand } from '../lib/servers.ts';

/** `pocketbase --version`'s version, for the seed cache's key (another version seeds again). */
export function pocketbaseVersion(bin: string): string {
  const out = execFileSync(bin, ['--version'], { encoding: 'utf8' });
  return /(\d+\.\d+\.\d+\S*)/.exec(out)?.[1] ?? out.trim();
}

// By default PocketBase writes a migration file beside its data directory for every change of a
// collection and runs those it finds there at start: a seed would then replay the previous seed's.
// Migrations and hooks are looked for inside the data directory instead, where there are none.
const quiet = (dir: string) => [`--dir=${dir}`, '--automigrate=false', `--migrationsDir=${dir}/no_migrations`, `--hooksDir=${dir}/no_hooks`];

/** Makes (or updates) the superuser the bench signs in as, with PocketBase's own command. */
export function upsertSuperuser(bin: string, dir: string, admin: { identity: string; password: string }): void {
  execFileSync(bin, ['superuser', 'upsert', admin.identity, admin.password, ...quiet(dir)], { stdio: 'ignore' });
}

export async function startPocketBase(bin: string, dir: string): Promise<RunningServer> {
  const port = await freePort();
  return startCommand(bin, ['serve', `--http=127.0.0.1:${port}`, ...quiet(dir)], {}, port, '/api/health');
}

type Json = Record<string, unknown>;

/**
 * A collection in the bench's format (scenarios.ts: Cairn's, with each field's settings under
 * `options` and relations naming their target) as PocketBase ≥ 0.23 takes it: settings flat on the
 * field, relations by collection id, a multiple relation as a large maxSelect, and the `created` /
 * `updated` dates its benchmark's schema gives every collection.
 */
export async function toPocketBase(collection: Json, idOf: (name: string) => Promise<string>): Promise<Json> {
  const fields: Json[] = [];
  for (const f of (collection.fields as Json[] | undefined) ?? []) {
    const { options, ...rest } = f as Json & { options?: Json };
    if (!options) {
      fields.push(rest);
      continue;
    }
    if (rest.type === 'relation') {
      const { toCollection, maxSelect, ...more } = options;
      fields.push({ ...rest, ...more, collectionId: await idOf(String(toCollection)), maxSelect: maxSelect === null ? 2147483647 : (maxSelect ?? 1) });
    } else {
      fields.push({ ...rest, ...options });
    }
  }
  const dates = collection.type === 'base' ? [
    { name: 'created', type: 'autodate', onCreate: true, onUpdate: false },
    { name: 'updated', type: 'autodate', onCreate: true, onUpdate: true },
  ] : [];
  return { ...collection, fields: [...fields, ...dates] };
}
