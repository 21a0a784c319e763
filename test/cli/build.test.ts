// storage-independent: nothing here opens a database; run in the first pass only (scripts/run-tests.mjs).
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, test } from 'node:test';
import { buildProblem } from '../../bin/build-check.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * `bin/cairn.js` runs the compiled build and refuses one older than the sources. Checked on a copy of
 * bin/ in a made-up package whose dist/main.js only says it ran, so the real build is not involved.
 */
describe('the cairn command runs the build, never a stale one', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'cairn-build-'));
  after(() => rmSync(root, { recursive: true, force: true }));
  cpSync(path.join(ROOT, 'bin'), path.join(root, 'bin'), { recursive: true });
  writeFileSync(path.join(root, 'package.json'), '{"type":"module"}');
  mkdirSync(path.join(root, 'src/lib'), { recursive: true });
  mkdirSync(path.join(root, 'dist'));
  writeFileSync(path.join(root, 'dist/main.js'), "process.stdout.write('ran ' + process.argv.slice(2).join(' '));");
  const source = path.join(root, 'src/lib/a.ts');
  const testFile = path.join(root, 'src/lib/a.test.ts');
  const stamp = path.join(root, 'dist/.build-stamp');
  const at = (file: string, seconds: number) => utimesSync(file, seconds, seconds);
  const cairn = (env: Record<string, string> = {}) =>
    spawnSync(process.execPath, [path.join(root, 'bin/cairn.js'), 'serve', '--port', '1'], { encoding: 'utf8', env: { ...process.env, ...env } });

  test('without a build: refused with the command that makes one', () => {
    writeFileSync(source, 'export {};');
    const run = cairn();
    assert.equal(run.status, 1);
    assert.equal(run.stdout, '');
    assert.equal(run.stderr, 'cairn: there is no build (dist/): run npm run build\n');
  });

  test('a build newer than every source runs, with the arguments', () => {
    writeFileSync(stamp, 'now');
    at(source, 1_000_000);
    at(stamp, 2_000_000);
    assert.equal(buildProblem(root), undefined);
    const run = cairn();
    assert.equal(run.status, 0, run.stderr);
    assert.equal(run.stdout, 'ran serve --port 1');
  });

  test('a source changed after the build: refused with a one-line hint; a test file does not count', () => {
    writeFileSync(testFile, 'export {};');
    at(testFile, 3_000_000);
    assert.equal(buildProblem(root), undefined);
    at(source, 3_000_000);
    const run = cairn();
    assert.equal(run.status, 1);
    assert.equal(run.stdout, '');
    assert.match(run.stderr, /^cairn: the build \(dist\/\) is older than the sources in src\/: run npm run build.*\n$/);
    // The documented way around the check runs the build as it is.
    assert.equal(cairn({ CAIRN_BUILD_CHECK: 'off' }).stdout, 'ran serve --port 1');
  });

  test('an installation without sources has nothing to compare with', () => {
    rmSync(path.join(root, 'src'), { recursive: true });
    assert.equal(buildProblem(root), undefined);
    assert.equal(cairn().status, 0);
  });
});
