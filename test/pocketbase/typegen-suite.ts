import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, test } from 'node:test';
import { appFiles, PB_APPS, PB_TESTS } from '../import/pb-fixtures.ts';
import { importDeps } from '../../src/cli/import.ts';
import { importPocketBase } from '../../src/import/service.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startServer } from '../helpers/server.ts';

/**
 * A real client of PocketBase's collections API: pocketbase-typegen (npm, a dev dependency), run as
 * its users run it. Its `--db` reads PocketBase's own file; its `--url` signs in to Cairn holding the
 * same data (imported with `cairn import pocketbase`) with email and password — as a multipart
 * form — and reads `GET /api/collections`. For PocketBase ≥ 0.23 data both must write the same
 * file, byte for byte (API contract §23).
 *
 * Before 0.23 PocketBase kept v0.22's `schema` (options nested, no system fields nor system
 * collections); typegen's `--db` types that file as v0.22 described it, which no ≥ 0.23 server
 * (PocketBase's included) answers. For those the test checks that every collection of the file is
 * typed from Cairn, with its own fields.
 */

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const CLI = path.join(ROOT, 'node_modules/pocketbase-typegen/dist/cli.js');
const PASSWORD = '1234567890';

async function typegen(args: string[]): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), 120_000);
  const [code] = await once(child, 'exit');
  clearTimeout(timer);
  return { code: code as number | null, output };
}

export interface TypegenSource {
  name: string;
  file: string;
  /** The superuser typegen signs in as: the data's own, or the test server's administrator. */
  email: string;
  password: string;
}

/** PocketBase's test data and the five applications' files. */
export function typegenSources(): TypegenSource[] {
  return [
    { name: 'pocketbase-tests', file: path.join(PB_TESTS, 'data.db'), email: 'test@example.com', password: PASSWORD },
    ...appFiles().map((f) => ({ name: f.replace(/\.db$/, ''), file: path.join(PB_APPS, f), email: ADMIN_EMAIL, password: ADMIN_PASSWORD })),
  ];
}

/** One file per source (they are slow: an import, a server and two typegen runs each). */
export function typegenSuite(pick: (s: TypegenSource) => boolean): void {
describe('pocketbase-typegen: --url on Cairn writes what --db writes on the PocketBase file', { skip: !existsSync(CLI) && 'pocketbase-typegen is not installed' }, () => {
  const dirs: string[] = [];
  after(async () => {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  });

  for (const source of typegenSources().filter(pick)) {
    test(source.name, { timeout: 600_000 }, async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'cairn-typegen-'));
      dirs.push(dir);
      const pbCopy = path.join(dir, 'pb.db');
      copyFileSync(source.file, pbCopy);
      const fromDb = await typegen(['--db', pbCopy, '--out', path.join(dir, 'db.ts')]);
      assert.equal(fromDb.code, 0, fromDb.output);

      // Imported in-process into the test server's `main` (what `cairn import pocketbase` runs).
      const server = await startServer();
      try {
        await importPocketBase(importDeps(server.services, server.dir), { path: source.file, database: 'main', dryRun: false });
        const fromUrl = await typegen(['--url', server.url, '--email', source.email, '--password', source.password, '--out', path.join(dir, 'url.ts')]);
        assert.equal(fromUrl.code, 0, fromUrl.output);
      } finally {
        await server.close();
      }
      const db = readFileSync(path.join(dir, 'db.ts'), 'utf8');
      const url = readFileSync(path.join(dir, 'url.ts'), 'utf8');
      if (db.includes('AuthoriginsRecord')) {
        if (process.env.CAIRN_TYPEGEN_KEEP) {
          copyFileSync(path.join(dir, 'db.ts'), path.join(process.env.CAIRN_TYPEGEN_KEEP, `${source.name}-db.ts`));
          copyFileSync(path.join(dir, 'url.ts'), path.join(process.env.CAIRN_TYPEGEN_KEEP, `${source.name}-url.ts`));
        }
        const only = (a: string, b: string) => a.split('\n').filter((l) => !b.split('\n').includes(l));
        assert.ok(url === db, `the same file, byte for byte; only in --db: ${JSON.stringify(only(db, url))}; only in --url: ${JSON.stringify(only(url, db))}`);
        return;
      }
      // v0.22's file: each of its collections is typed from Cairn too, with its own fields.
      for (const m of db.matchAll(/^export type (\w+)Record(?:<[^>]*>)? = \{\n([\s\S]*?)\n\}/gm)) {
        const own = m[2].split('\n').map((l) => l.split(':')[0].replace('?', '').trim());
        const typed = new RegExp(`^export type ${m[1]}Record(?:<[^>]*>)? = \\{\\n([\\s\\S]*?)\\n\\}`, 'm').exec(url);
        assert.ok(typed, `${m[1]} typed from Cairn`);
        const names = typed[1].split('\n').map((l) => l.split(':')[0].replace('?', '').trim());
        for (const name of own) assert.ok(names.includes(name), `${m[1]}.${name}`);
      }
    });
  }
});
}
