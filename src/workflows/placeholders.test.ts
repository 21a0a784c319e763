// storage-independent: nothing here opens a database; run in the first pass only (scripts/run-tests.mjs).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { render } from './placeholders.ts';

const context = { event: { user: { name: 'Ada', tags: ['a', 'b'] }, n: 3, flag: false, nothing: null }, steps: [{ record: { id: 'r1' } }] };

test('a lone placeholder keeps the value and its type', () => {
  assert.equal(render('{{event.n}}', context), 3);
  assert.equal(render('{{ event.flag }}', context), false);
  assert.deepEqual(render('{{event.user}}', context), { name: 'Ada', tags: ['a', 'b'] });
  assert.equal(render('{{event.user.tags.1}}', context), 'b');
  assert.equal(render('{{steps.0.record.id}}', context), 'r1');
});

test('placeholders inside text are interpolated; missing values become empty', () => {
  assert.equal(render('Hi {{event.user.name}} ({{event.n}})', context), 'Hi Ada (3)');
  assert.equal(render('tags={{event.user.tags}}', context), 'tags=["a","b"]');
  assert.equal(render('x{{event.missing}}y{{event.nothing}}z', context), 'xyz');
  assert.equal(render('{{event.missing}}', context), null);
});

test('templates are rendered deeply; keys and non-strings are kept', () => {
  assert.deepEqual(render({ '{{event.n}}': ['{{event.user.name}}', 5, true, null, { deep: '{{event.n}}' }] }, context), { '{{event.n}}': ['Ada', 5, true, null, { deep: 3 }] });
});

test('paths reach own properties only', () => {
  assert.equal(render('{{event.__proto__}}', context), null);
  assert.equal(render('{{event.constructor.name}}', context), null);
  assert.equal(render('{{event.user.name.length}}', context), null);
  assert.equal(render('{{event.toString}}', context), null);
});
