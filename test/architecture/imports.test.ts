// storage-independent: nothing here opens a database; run in the first pass only (scripts/run-tests.mjs).
// Issue 46: every room of src/ depends downward only, and no source file outgrows what one reader
// holds in mind. Both checks read the files as they are, so they fail the suite the moment a change
// closes an import cycle or pushes a file past the limit.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { cycles, importGraph, loopThrough, sourceFiles, srcDir } from './import-graph.ts';

const MAX_LINES = 600;

// Known exceptions, each with its reason. An entry that no longer excuses anything fails the test, so
// the list cannot outlive what it excuses. A cycle is excused when every file of it starts with one
// of an entry's prefixes. Both are empty since issue 46: keep them so.
const ALLOWED_CYCLES: string[][] = [];
const ALLOWED_LONG_FILES = new Set<string>();

const excuses = (entry: string[], component: string[]) => component.every((f) => entry.some((prefix) => f.startsWith(prefix)));

test('src/ has no import cycle', () => {
  const graph = importGraph();
  assert.ok(graph.size > 100, `read ${graph.size} files under ${srcDir}`);
  const found = cycles(graph);
  const unexpected = found.filter((c) => !ALLOWED_CYCLES.some((entry) => excuses(entry, c)));
  assert.deepEqual(
    unexpected.map((c) => loopThrough(c, graph).join(' → ')),
    [],
    'import cycles in src/ (move what both files need below both: types in their own file, a registry both hang from)',
  );
  for (const entry of ALLOWED_CYCLES) {
    assert.ok(found.some((c) => excuses(entry, c)), `no cycle left among ${entry.join(', ')}: remove that entry of ALLOWED_CYCLES (issue 46)`);
  }
});

test(`no source file in src/ is over ${MAX_LINES} lines`, () => {
  const lengths = sourceFiles().map((file) => {
    const text = readFileSync(path.join(srcDir, file), 'utf8');
    // As `wc -l` counts: newlines.
    return { file, lines: text.split('\n').length - 1 };
  });
  const long = lengths.filter((f) => f.lines > MAX_LINES);
  assert.deepEqual(
    long.filter((f) => !ALLOWED_LONG_FILES.has(f.file)).map((f) => `${f.file}: ${f.lines}`),
    [],
    `files over ${MAX_LINES} lines`,
  );
  for (const allowed of ALLOWED_LONG_FILES) {
    assert.ok(long.some((f) => f.file === allowed), `src/${allowed} is no longer over ${MAX_LINES} lines (or gone): remove it from ALLOWED_LONG_FILES (issue 46)`);
  }
});

test('the cycle finder finds a cycle, and only a cycle', async () => {
  const { cycles: find } = await import('./import-graph.ts');
  const graph = new Map([
    ['a.ts', ['b.ts']],
    ['b.ts', ['c.ts']],
    ['c.ts', ['a.ts', 'd.ts']],
    ['d.ts', []],
    ['e.ts', ['e.ts']],
  ]);
  assert.deepEqual(find(graph).map((c) => c.join(' ')).sort(), ['a.ts b.ts c.ts', 'e.ts']);
  assert.deepEqual(find(new Map([['a.ts', ['b.ts']], ['b.ts', []]])), []);
});
