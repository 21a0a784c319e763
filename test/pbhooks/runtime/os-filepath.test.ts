// storage-independent: nothing here opens a database; run in the first pass only (scripts/run-tests.mjs).
// `$filepath` and `$os` as PocketBase's JSVM binds Go's path/filepath and os: the answers below are
// Go's (its documentation's examples), where Node's path module answers otherwise.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, test } from 'node:test';
import { testHost } from './host.ts';

describe('$filepath and $os in pb_hooks', () => {
  const h = testHost();
  const run = (expr: string) => JSON.parse(h.eval(`JSON.stringify(${expr})`));

  test("$filepath answers as Go's path/filepath", () => {
    assert.deepEqual(run(`["a/b/../c/", "", "./", "/../x"].map($filepath.clean)`), ['a/c', '.', '.', '/x']);
    assert.deepEqual(run(`["/foo/bar/baz.js", "/foo/bar/baz/", "", "/"].map((p) => $filepath.base(p))`), ['baz.js', 'baz', '.', '/']);
    assert.deepEqual(run(`["/foo/bar/baz.js", "/foo/bar/baz/", "a", ""].map((p) => $filepath.dir(p))`), ['/foo/bar', '/foo/bar/baz', '.', '.']);
    assert.deepEqual(run(`["index.tar.gz", ".bashrc", "dir.d/file"].map((p) => $filepath.ext(p))`), ['.gz', '.bashrc', '']);
    assert.deepEqual(run(`[$filepath.join("a", "", "b/", "../c"), $filepath.join("", ""), $filepath.join("/", "x")]`), ['a/c', '', '/x']);
    assert.deepEqual(run(`$filepath.split("static/myfile.css")`), ['static/', 'myfile.css']);
    assert.deepEqual(run(`[$filepath.rel("/a", "/a/b/c"), $filepath.rel("/a", "/b/c"), $filepath.rel("a/b", "a/b")]`), ['b/c', '../b/c', '.']);
    assert.match(h.eval(`try { $filepath.rel("/a", "b") } catch (e) { e.message }`), /can't make b relative to \/a/);
    assert.deepEqual(run(`[$filepath.match("*.js", "a.js"), $filepath.match("*.js", "d/a.js"), $filepath.match("a?[0-9]", "ab7"), $filepath.match("[^a]*", "abc")]`), [true, false, true, false]);
    assert.deepEqual(run(`[$filepath.isAbs("/x"), $filepath.isAbs("x"), $filepath.splitList("/a:/b"), $filepath.splitList("")]`), [true, false, ['/a', '/b'], []]);
  });

  test('glob and walk read the folder in lexical order', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'pbfp-'));
    mkdirSync(path.join(dir, 'views', 'parts'), { recursive: true });
    for (const f of ['views/b.html', 'views/a.html', 'views/notes.txt', 'views/parts/x.html']) writeFileSync(path.join(dir, f), f);
    assert.deepEqual(run(`$filepath.glob(${JSON.stringify(`${dir}/views/*.html`)})`), [`${dir}/views/a.html`, `${dir}/views/b.html`]);
    assert.deepEqual(run(`$filepath.glob(${JSON.stringify(`${dir}/*/*/*.html`)})`), [`${dir}/views/parts/x.html`]);
    const walked = run(`(() => { const seen = []; $filepath.walk(${JSON.stringify(`${dir}/views`)}, (p, info) => { seen.push([p.slice(${dir.length + 1}), info.isDir()]) }); return seen })()`);
    assert.deepEqual(walked, [['views', true], ['views/a.html', false], ['views/b.html', false], ['views/notes.txt', false], ['views/parts', true], ['views/parts/x.html', false]]);
    const names = run(`$os.readDir(${JSON.stringify(`${dir}/views`)}).map((e) => e.name() + (e.isDir() ? '/' : ''))`);
    assert.deepEqual(names, ['a.html', 'b.html', 'notes.txt', 'parts/']);
    assert.deepEqual(run(`[$os.stat(${JSON.stringify(`${dir}/views/a.html`)}).name(), $os.stat(${JSON.stringify(`${dir}/views/a.html`)}).size()]`), ['a.html', 12]);
  });

  test('$os.openRoot keeps every operation inside its folder', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'pbroot-'));
    const outside = mkdtempSync(path.join(tmpdir(), 'pbout-'));
    writeFileSync(path.join(outside, 'secret.txt'), 'secret');
    symlinkSync(outside, path.join(dir, 'link'));
    h.eval(`root = $os.openRoot(${JSON.stringify(dir)}); root.mkdirAll('a/b'); root.writeFile('a/b/c.txt', 'inside'); f = root.create('made.txt'); f.writeString('made'); f.close()`);
    assert.equal(readFileSync(path.join(dir, 'a/b/c.txt'), 'utf8'), 'inside');
    assert.equal(readFileSync(path.join(dir, 'made.txt'), 'utf8'), 'made');
    assert.equal(h.eval(`toString(root.readFile('a/b/c.txt'))`), 'inside');
    assert.equal(h.eval(`toString($os.openInRoot(${JSON.stringify(dir)}, 'made.txt'))`), 'made');
    for (const name of ['../x.txt', 'a/../../x.txt', '/etc/passwd', 'link/secret.txt']) {
      assert.match(h.eval(`try { toString(root.open(${JSON.stringify(name)})) } catch (e) { e.message }`), /path escapes from parent/, name);
    }
    assert.match(h.eval(`try { root.writeFile('link/new.txt', 'x') } catch (e) { e.message }`), /path escapes from parent/);
  });

  test('$security.randomStringByRegex makes what the pattern matches', () => {
    for (let i = 0; i < 20; i++) assert.match(h.eval(`$security.randomStringByRegex("[a-z0-9]{15}")`), /^[a-z0-9]{15}$/);
    assert.match(h.eval(`$security.randomStringByRegex("users[0-9]{5}")`), /^users[0-9]{5}$/);
    assert.match(h.eval(`try { $security.randomStringByRegex("[a-") } catch (e) { "refused: " + e.message }`), /^refused: /);
  });

  test("$os: Go's os.Args, mkdir, rename, truncate, and remove that wants something to remove", () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'pbos-'));
    assert.equal(h.eval('Array.isArray($os.args) && $os.args.length > 0'), true);
    assert.equal(h.eval('$os.exec === $os.cmd'), true);
    h.eval(`$os.mkdir(${JSON.stringify(`${dir}/d`)}); $os.writeFile(${JSON.stringify(`${dir}/d/f`)}, 'abcdef'); $os.truncate(${JSON.stringify(`${dir}/d/f`)}, 3); $os.rename(${JSON.stringify(`${dir}/d/f`)}, ${JSON.stringify(`${dir}/d/g`)})`);
    assert.equal(readFileSync(path.join(dir, 'd/g'), 'utf8'), 'abc');
    assert.match(h.eval(`try { $os.mkdir(${JSON.stringify(`${dir}/d`)}) } catch (e) { e.code }`), /EEXIST/);
    assert.match(h.eval(`try { $os.remove(${JSON.stringify(`${dir}/none`)}) } catch (e) { e.code }`), /ENOENT/);
    h.eval(`$os.remove(${JSON.stringify(`${dir}/d/g`)}); $os.remove(${JSON.stringify(`${dir}/d`)})`);
    assert.deepEqual(run(`$os.readDir(${JSON.stringify(dir)}).length`), 0);
    assert.equal(h.eval('$os.tempDir()'), tmpdir());
  });
});
