// storage-independent: nothing here opens a database; run in the first pass only (scripts/run-tests.mjs).
// Issue 46: a record write is one plan passed forward through step files (src/records/write/), and the
// records room is handed what lies above it (password hashing, the hooks runtime) instead of importing
// it. These read the import graph; test/records/write-plan.test.ts runs the steps.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { test } from 'node:test';
import { importGraph, srcDir } from './import-graph.ts';

const STEPS = ['parse', 'validate', 'rules', 'stage', 'load', 'hooks', 'statement', 'answer'];
const stepFile = (step: string) => `records/write/${step}.ts`;

test('each step of a record write is a function of its own file, named after it', () => {
  const graph = importGraph();
  for (const step of STEPS) {
    assert.ok(graph.has(stepFile(step)), `src/${stepFile(step)} exists`);
    const text = readFileSync(path.join(srcDir, stepFile(step)), 'utf8');
    assert.match(text, new RegExp(`export (async )?function ${step}\\(plan: WritePlan`), `${step}.ts exports ${step}(plan)`);
    assert.match(text, new RegExp(`enter\\(plan, '${step}'\\)`), `${step}.ts notes the step on the plan`);
  }
});

test('no step reaches another step through its imports (the runners compose them)', () => {
  const graph = importGraph();
  for (const step of STEPS) {
    const seen = new Set<string>();
    const stack = [...(graph.get(stepFile(step)) ?? [])];
    while (stack.length > 0) {
      const file = stack.pop()!;
      if (seen.has(file)) continue;
      seen.add(file);
      stack.push(...(graph.get(file) ?? []));
    }
    const reached = STEPS.filter((other) => seen.has(stepFile(other)));
    assert.deepEqual(reached, [], `src/${stepFile(step)} reaches other steps`);
  }
});

test('the records room imports nothing from auth, hooks or pbhooks', () => {
  const graph = importGraph();
  const upward = [...graph]
    .filter(([file]) => file.startsWith('records/'))
    .flatMap(([file, imports]) => imports.filter((i) => /^(auth|hooks|pbhooks)\//.test(i)).map((i) => `${file} → ${i}`));
  assert.deepEqual(upward, []);
});
