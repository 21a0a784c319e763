import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { buildProblem } from '../../bin/build-check.js';
import { driverEnv, dropDatabaseFor, onPostgres, skipOn } from '../helpers/postgres.ts';
import { freePort } from '../helpers/process.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, request } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * Cairn as an application installs it (API contract §16, "The package"): the tarball `npm pack`
 * makes, installed with npm into an empty app directory that has its own TypeScript hook file and
 * its own npm dependency; then `npx cairn serve` there, the app's own test importing `cairn` under
 * plain node, and a consumer's `tsc` on the hook file against the published types.
 *
 * What is reused to keep this affordable (CI's whole run is bounded), and why it proves the same:
 * - The build. `npm pack` runs `prepare` (the full build) before packing; here the tarball is packed
 *   with `--ignore-scripts` from the build already in dist/ and dashboard/dist/ (`npm ci` made it),
 *   after checking that build is not older than src/. Rebuilding here would also rewrite dist/ under
 *   other test files that run it.
 * - The npm cache: `npm install --prefer-offline` takes packages from the cache `npm ci` filled (the
 *   registry only for what is missing there).
 * - better-sqlite3's native addon. Installing runs its compile from source (about two to three
 *   minutes on a 2-core machine; docs/hooks.md gives a full install's figure). The install here skips
 *   install scripts and copies the repository's compiled `better_sqlite3.node` instead: the same
 *   package version (checked; otherwise it is compiled after all) built by the same Node. esbuild
 *   needs no install script: its binary comes from its platform package, an optional dependency.
 * - TypeScript and @types/node for the consumer's typecheck are the repository's (an app has its own).
 */

const REPO = fileURLToPath(new URL('../..', import.meta.url));
const NPM_TIMEOUT_MS = 8 * 60_000;

interface Run {
  code: number | null;
  out: string;
}

/** The environment for npm and the app: this one without what an `npm test` parent put in it. */
function cleanEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!/^npm_/i.test(key) && !key.startsWith('CAIRN_')) env[key] = value;
  return { ...env, ...extra };
}

async function run(command: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = cleanEnv(), timeoutMs = NPM_TIMEOUT_MS): Promise<Run> {
  const child = spawn(command, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout.on('data', (d) => (out += d));
  child.stderr.on('data', (d) => (out += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const [code] = await once(child, 'exit');
  clearTimeout(timer);
  return { code: code as number | null, out };
}

async function ok(command: string, args: string[], cwd: string, env?: NodeJS.ProcessEnv): Promise<string> {
  const result = await run(command, args, cwd, env);
  assert.equal(result.code, 0, `${command} ${args.join(' ')} failed in ${cwd}:\n${result.out}`);
  return result.out;
}

const versionOf = (dir: string, name: string): string => JSON.parse(readFileSync(path.join(dir, 'node_modules', name, 'package.json'), 'utf8')).version;

// The app's hook file: TypeScript importing `cairn` and the app's own npm package (yaml).
// `@ts-expect-error` lines fail the typecheck if the published types were missing or `any`.
const HOOK = `import { BadRequestError, defineHooks, requireAuth, type RecordEvent } from 'cairn';
import { parse, stringify } from 'yaml';

export default defineHooks((app) => {
  app.onRecordCreate(async (e) => {
    const title: string = e.record.title;
    if (title === 'refuse') throw new BadRequestError('Refused by the app.', { title: { code: 'validation_refused', message: 'No.' } });
    e.record.note = stringify({ title }).trim();
    await e.next();
  }, 'notes');

  app.routerAdd('GET', '/api/app/hello/{name}', (e) => e.json(200, { hello: e.pathValue('name'), parsed: parse('answer: 42') }));
  app.routerAdd('GET', '/api/app/me', (e) => e.json(200, { id: e.auth?.id }), requireAuth());

  // @ts-expect-error a cron job's handler takes no event
  app.cronAdd('typed', '@every 1h', (e: RecordEvent) => e.next());
});

// @ts-expect-error the default export is a function of app
export const wrong = defineHooks('not a function');
`;

// Typegen's kind of declaration: records typed by collection name (a .d.ts, so not a hook file).
const COLLECTIONS = `import 'cairn';
declare module 'cairn' {
  interface CollectionRecords {
    notes: { title: string; note: string };
  }
}
`;

// The app's own test, run with plain node: Cairn in-process with an inline hook.
const APP_TEST = `import assert from 'node:assert/strict';
import { BadRequestError, createCairn, defineHooks, requireAuth } from 'cairn';
import { stringify } from 'yaml';

const cairn = await createCairn({
  dir: './test-data',
  port: 0,
  host: '127.0.0.1',
  env: { CAIRN_LOG_LEVEL: 'silent', CAIRN_RATE_LIMIT: 'off' },
  hooks: [
    defineHooks((app) => {
      app.routerAdd('POST', '/api/app/greet', async (e) => {
        const body = await e.bindBody();
        if (!body.name) throw new BadRequestError('A name is required.', { name: { code: 'validation_required', message: 'Cannot be blank.' } });
        e.string(200, stringify({ hello: body.name }));
      });
      app.routerAdd('GET', '/api/app/private', (e) => e.json(200, {}), requireAuth());
    }),
  ],
});
await cairn.start();
try {
  const post = (body) => fetch(cairn.url + '/api/app/greet', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const greeted = await post({ name: 'Ada' });
  assert.equal(greeted.status, 200);
  assert.equal(await greeted.text(), 'hello: Ada\\n');
  const refused = await post({});
  assert.equal(refused.status, 400);
  assert.deepEqual(await refused.json(), { status: 400, code: 400, message: 'A name is required.', data: { name: { code: 'validation_required', message: 'Cannot be blank.' } } });
  assert.equal((await fetch(cairn.url + '/api/app/private')).status, 401);
  assert.equal(await cairn.records().count('users'), 0);
} finally {
  await cairn.stop();
}
console.log('app test passed');
`;

describe('the package: npm pack, installed into an empty app directory', () => {
  let work: string;
  let app: string;
  let tarball: string;
  let packed: string[];
  let installMs = 0;

  before(async () => {
    const stale = buildProblem(REPO);
    assert.equal(stale, undefined, `the package is packed from the build: ${stale}`);
    work = mkdtempSync(path.join(tmpdir(), 'cairn-package-'));
    const pack = JSON.parse(await ok('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', work], REPO));
    tarball = path.join(work, pack[0].filename);
    packed = pack[0].files.map((f: { path: string }) => f.path);

    app = path.join(work, 'app');
    mkdirSync(path.join(app, 'hooks'), { recursive: true });
    writeFileSync(path.join(app, 'package.json'), `${JSON.stringify({ name: 'shop-app', private: true, type: 'module', dependencies: { yaml: versionOf(REPO, 'yaml') } }, null, 2)}\n`);
    writeFileSync(path.join(app, 'hooks', 'notes.ts'), HOOK);
    writeFileSync(path.join(app, 'hooks', 'collections.d.ts'), COLLECTIONS);
    writeFileSync(path.join(app, 'app.test.mjs'), APP_TEST);
    writeFileSync(
      path.join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: false, typeRoots: [path.join(REPO, 'node_modules/@types')], types: ['node'] },
        include: ['hooks'],
      }),
    );

    const started = Date.now();
    await ok('npm', ['install', tarball, '--prefer-offline', '--ignore-scripts', '--no-audit', '--no-fund', '--loglevel=error'], app);
    const addon = path.join('node_modules', 'better-sqlite3', 'build', 'Release', 'better_sqlite3.node');
    if (versionOf(app, 'better-sqlite3') === versionOf(REPO, 'better-sqlite3')) {
      mkdirSync(path.dirname(path.join(app, addon)), { recursive: true });
      copyFileSync(path.join(REPO, addon), path.join(app, addon));
    } else {
      // Another better-sqlite3 than the repository's: its own install script, the compile included.
      await ok('npm', ['rebuild', 'better-sqlite3', '--foreground-scripts'], app);
    }
    installMs = Date.now() - started;
  });

  after(() => {
    if (work) rmSync(work, { recursive: true, force: true });
  });

  // What the tarball holds and how its types check do not depend on the storage driver: the SQLite
  // pass checks them, the PostgreSQL pass only runs the installed package on PostgreSQL.
  test('the tarball holds the build, the dashboard, the types and the docs; no sources, tests or source maps', { skip: skipOn('postgres', 'the tarball is the same') }, (t) => {
    t.diagnostic(`npm install of the tarball took ${installMs} ms`);
    for (const file of ['bin/cairn.js', 'bin/build-check.js', 'dist/main.js', 'dist/index.js', 'dist/index.d.ts', 'dist/hooks/types.d.ts', 'dist/.build-stamp', 'dashboard/dist/index.html', 'docs/hooks.md', 'README.md', 'package.json']) {
      assert.ok(packed.includes(file), `${file} is in the tarball`);
    }
    const strays = packed.filter((f) => /^(src|test|bench|scripts|examples|dashboard\/src)\//.test(f) || f.endsWith('.map') || f.endsWith('.ts') !== f.endsWith('.d.ts'));
    assert.deepEqual(strays, []);
    const installed = JSON.parse(readFileSync(path.join(app, 'node_modules/cairn/package.json'), 'utf8'));
    assert.equal(installed.exports['.'].types, './dist/index.d.ts');
    assert.ok(!existsSync(path.join(app, 'node_modules/cairn/src')), 'nothing to compile: bin/cairn.js runs dist/ as it is');
  });

  test("a consumer's tsc typechecks a hook file against the published types", { skip: skipOn('postgres', 'the types are the same') }, async () => {
    // One run (a typecheck costs seconds): the hook file passes, and an error in another is reported,
    // with the record type typegen's kind of declaration gives.
    writeFileSync(path.join(app, 'hooks', 'typo.ts'), `import { defineHooks } from 'cairn';\nexport default defineHooks((app) => app.onRecordCreate((e) => { const n: number = e.record.title; }, 'notes'));\n`);
    try {
      const result = await run(process.execPath, [path.join(REPO, 'node_modules/typescript/bin/tsc'), '-p', app], app);
      const errors = result.out.split('\n').filter((line) => /error TS\d+/.test(line));
      assert.equal(errors.length, 1, result.out);
      assert.match(errors[0], /^hooks\/typo\.ts\(2,\d+\): error TS2322: Type 'string' is not assignable to type 'number'/);
      assert.equal(result.code, 2);
    } finally {
      rmSync(path.join(app, 'hooks', 'typo.ts'));
    }
  });

  test('npx cairn serve runs there with ./data and ./hooks: the hook file with its npm package', async () => {
    const data = path.join(app, 'data');
    const port = await freePort();
    const env = cleanEnv({ CAIRN_LOG_LEVEL: 'warn', CAIRN_RATE_LIMIT: 'off', CAIRN_ADMIN_EMAIL: ADMIN_EMAIL, CAIRN_ADMIN_PASSWORD: ADMIN_PASSWORD, ...(await driverEnv(data)) });
    // Its own process group: npx does not pass a signal on to the server it starts, the group does.
    const child: ChildProcess = spawn('npx', ['cairn', 'serve', '--port', String(port), '--host', '127.0.0.1'], { cwd: app, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let out = '';
    child.stdout!.on('data', (d) => (out += d));
    child.stderr!.on('data', (d) => (out += d));
    let exited = false;
    const exit = once(child, 'exit').then(() => (exited = true));
    const url = `http://127.0.0.1:${port}`;
    const health = async () => {
      try {
        return (await fetch(`${url}/api/health`)).ok;
      } catch {
        return false;
      }
    };
    try {
      await waitFor(
        async () => {
          if (exited) throw new Error(`npx cairn serve exited:\n${out}`);
          return health();
        },
        { timeoutMs: 60_000, what: 'npx cairn serve to answer' },
      );
      assert.ok(existsSync(data), `./data was created in the app directory:\n${out}`);
      if (!onPostgres) assert.ok(existsSync(path.join(data, 'system.db')));

      const login = await request(url, 'POST', '/api/admins/auth-with-password', { body: { identity: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
      assert.equal(login.status, 200, login.text);
      const token = login.body.token as string;
      const hooks = await request(url, 'GET', '/api/hooks', { token });
      assert.deepEqual(hooks.body.files, [path.join(app, 'hooks', 'notes.ts')], 'the app directory\'s ./hooks, without the .d.ts');
      const notes = await request(url, 'POST', '/api/collections', {
        token,
        body: { name: 'notes', createRule: '', viewRule: '', fields: [{ name: 'title', type: 'text' }, { name: 'note', type: 'text' }] },
      });
      assert.equal(notes.status, 200, notes.text);

      const created = await request(url, 'POST', '/api/collections/notes/records', { body: { title: 'Hello' } });
      assert.equal(created.status, 200, created.text);
      assert.equal(created.body.note, 'title: Hello', "the hook ran, with the app's yaml package");
      const refused = await request(url, 'POST', '/api/collections/notes/records', { body: { title: 'refuse' } });
      assert.deepEqual(refused.body, { status: 400, code: 400, message: 'Refused by the app.', data: { title: { code: 'validation_refused', message: 'No.' } } });

      const hello = await request(url, 'GET', '/api/app/hello/ada');
      assert.deepEqual([hello.status, hello.body], [200, { hello: 'ada', parsed: { answer: 42 } }]);
      assert.equal((await request(url, 'GET', '/api/app/me')).status, 401);
      assert.equal((await request(url, 'GET', '/_/')).status, 200, 'the prebuilt dashboard is served');
    } finally {
      if (!exited) process.kill(-child.pid!, 'SIGTERM');
      await exit;
      // The server is npx's child: gone once nothing answers on its port.
      await waitFor(async () => !(await health()), { timeoutMs: 30_000, what: 'the server to stop' });
      if (onPostgres) await dropDatabaseFor(data);
    }
  });

  test("the app's own test runs Cairn in-process with plain node: import { createCairn } from 'cairn'", async () => {
    const data = path.join(app, 'test-data');
    try {
      const result = await run(process.execPath, ['app.test.mjs'], app, cleanEnv(await driverEnv(data)));
      assert.equal(result.code, 0, result.out);
      assert.match(result.out, /app test passed/);
    } finally {
      if (onPostgres) await dropDatabaseFor(data);
    }
  });
});
