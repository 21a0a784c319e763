import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startServer, type TestServer } from '../helpers/server.ts';
import { apply, saveMigration } from './helpers.ts';

/** Migration files take column options in either of PocketBase's shapes: nested (0.22) or flat (0.23). */
describe('migrations with PocketBase 0.23 column shapes', () => {
  let server: TestServer;
  before(async () => {
    server = await startServer();
  });
  after(() => server.close());

  test('flat options in create_table and add_columns are options', async () => {
    const yaml = [
      'name: flat options',
      'databases:',
      '  main:',
      '    collections:',
      '      gadgets:',
      '        create_table:',
      '          name: gadgets',
      '          fields:',
      '            - {name: label, type: text, max: 4, required: true}',
      '            - {name: kind, type: select, values: [a, b], maxSelect: 1}',
      '            - {name: size, type: number, options: {min: 1}}',
      '        add_columns:',
      '          - {name: parts, type: relation, collectionId: gadgets, maxSelect: 3, presentable: true}',
      '',
    ].join('\n');
    const version = await saveMigration(server, { yaml });
    const res = await apply(server, version);
    assert.equal(res.status, 200, res.text);
    const fields = (await server.admin('GET', '/api/collections/gadgets')).body.schema;
    const byName = Object.fromEntries(fields.map((f: any) => [f.name, f]));
    assert.equal(byName.label.options.max, 4);
    assert.deepEqual(byName.kind.options.values, ['a', 'b']);
    assert.equal(byName.size.options.min, 1);
    assert.equal(byName.parts.options.maxSelect, 3);
    assert.equal(byName.parts.options.toCollection, 'gadgets');
    assert.equal(byName.parts.presentable, true);
    assert.equal((await server.admin('POST', '/api/collections/gadgets/records', { body: { label: 'toolong' } })).status, 400);
  });

  test('a bad flat option is refused when applied, naming it; an unknown key when read', async () => {
    const yaml = 'name: bad flat\ndatabases:\n  main:\n    collections:\n      broken:\n        create_table: {name: broken, fields: [{name: n, type: number, min: "x"}]}\n';
    const version = await saveMigration(server, { yaml });
    const res = await apply(server, version);
    assert.equal(res.status, 400);
    assert.match(res.text, /min/);
    assert.equal((await server.admin('GET', '/api/collections/broken')).status, 404);
    const unknown = await server.admin('POST', '/api/migrations/save', {
      body: { yaml: 'name: x\ndatabases:\n  main:\n    collections:\n      y:\n        create_table: {name: y, fields: [{name: n, type: text, maxx: 1}]}\n' },
    });
    assert.equal(unknown.status, 400);
    assert.match(unknown.body.message, /unknown column property "maxx"/);
  });
});
