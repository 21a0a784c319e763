// storage-independent: nothing here opens a database; run in the first pass only (scripts/run-tests.mjs).
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';

// The webhooks room is a one-way pipeline (docs/architecture.md); these keep it from knotting again.
const ROOM = path.dirname(fileURLToPath(import.meta.url));

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = path.join(dir, name);
    if (statSync(full).isDirectory()) return sources(full);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [full] : [];
  });
}

/** Each file of the room → the files of the room it imports (type-only imports included). */
function importGraph(): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const file of sources(ROOM)) {
    const text = readFileSync(file, 'utf8');
    const targets = [...text.matchAll(/(?:from|import)\s*\(?\s*'(\.{1,2}\/[^']+\.ts)'/g)]
      .map((m) => path.resolve(path.dirname(file), m[1]))
      .filter((target) => target.startsWith(ROOM + path.sep));
    graph.set(path.relative(ROOM, file), targets.map((t) => path.relative(ROOM, t)));
  }
  return graph;
}

test('no file of src/webhooks imports, directly or not, a file that imports it', () => {
  const graph = importGraph();
  const state = new Map<string, 'open' | 'done'>();
  const visit = (file: string, trail: string[]): void => {
    if (state.get(file) === 'done') return;
    if (state.get(file) === 'open') assert.fail(`import cycle: ${[...trail.slice(trail.indexOf(file)), file].join(' → ')}`);
    state.set(file, 'open');
    for (const next of graph.get(file) ?? []) visit(next, [...trail, file]);
    state.set(file, 'done');
  };
  for (const file of graph.keys()) visit(file, []);
});

test('the nouns and the seam import no implementation; the service imports no driver', () => {
  const graph = importGraph();
  assert.deepEqual(graph.get('types.ts'), ['target.ts']);
  assert.deepEqual(graph.get('store.ts'), ['types.ts']);
  for (const target of graph.get('service.ts')!) assert.ok(!target.startsWith('sqlite') && !target.startsWith('postgres'), `service.ts imports ${target}`);
});
