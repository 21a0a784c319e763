import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';

/** One field per type, with options that each bad value below trips. */
const FIELDS = [
  { name: 'title', type: 'text', options: { min: 2, max: 10, pattern: '^[a-z ]+$' } },
  { name: 'body', type: 'editor' },
  { name: 'score', type: 'number', options: { min: 0, max: 100, noDecimal: true } },
  { name: 'done', type: 'bool' },
  { name: 'contact', type: 'email', options: { onlyDomains: ['example.com'] } },
  { name: 'site', type: 'url', options: { exceptDomains: ['evil.test'] } },
  { name: 'due', type: 'date', options: { min: '2020-01-01 00:00:00.000Z', max: '2030-12-31 23:59:59.999Z' } },
  { name: 'status', type: 'select', options: { values: ['draft', 'live'], maxSelect: 1 } },
  { name: 'labels', type: 'select', options: { values: ['a', 'b', 'c'], maxSelect: 2 } },
  { name: 'meta', type: 'json', options: { maxSize: 64 } },
];

describe('field types: values validated on every write, options validated on save', () => {
  let server: TestServer;
  let targetIds: string[];
  before(async () => {
    server = await startServer();
    await createCollection(server, { name: 'items', fields: FIELDS });
    await createCollection(server, { name: 'targets', fields: [{ name: 'name', type: 'text' }] });
    targetIds = [];
    for (const name of ['t1', 't2', 't3']) targetIds.push((await server.admin('POST', '/api/collections/targets/records', { body: { name } })).body.id);
    await createCollection(server, {
      name: 'links',
      fields: [
        { name: 'one', type: 'relation', options: { toCollection: 'targets', maxSelect: 1 } },
        { name: 'many', type: 'relation', options: { toCollection: 'targets', maxSelect: 2 } },
      ],
    });
  });
  after(() => server.close());

  const create = (body: Record<string, unknown>, collection = 'items') => server.admin('POST', `/api/collections/${collection}/records`, { body });

  test('good values of every type are stored in canonical form', async () => {
    const res = await create({
      title: 'hello',
      body: '<p>Rich <b>text</b></p>',
      score: '42',
      done: 'true',
      contact: 'ann@example.com',
      site: 'https://cairn.example/docs',
      due: '2024-02-29 12:30:00.000Z',
      status: 'live',
      labels: ['a', 'c'],
      meta: { tags: ['x'], n: 1 },
    });
    assert.equal(res.status, 200, res.text);
    const r = res.body;
    assert.equal(r.title, 'hello');
    assert.equal(r.body, '<p>Rich <b>text</b></p>');
    assert.equal(r.score, 42);
    assert.equal(r.done, true);
    assert.equal(r.contact, 'ann@example.com');
    assert.equal(r.site, 'https://cairn.example/docs');
    assert.equal(r.due, '2024-02-29 12:30:00.000Z');
    assert.equal(r.status, 'live');
    assert.deepEqual(r.labels, ['a', 'c']);
    assert.deepEqual(r.meta, { tags: ['x'], n: 1 });
    const read = await server.admin('GET', `/api/collections/items/records/${r.id}`);
    assert.deepEqual(read.body, r);
  });

  test('unset fields get their zero values', async () => {
    const r = (await create({})).body;
    assert.deepEqual(
      [r.title, r.body, r.score, r.done, r.contact, r.site, r.due, r.status, r.labels, r.meta],
      ['', '', 0, false, '', '', '', '', [], null],
    );
  });

  const BAD: Array<[string, unknown, string]> = [
    ['title', 'a', 'validation_min_text_constraint'],
    ['title', 'much too long title', 'validation_max_text_constraint'],
    ['title', 'UPPER', 'validation_invalid_format'],
    ['title', { nested: true }, 'validation_invalid_value'],
    ['body', ['not', 'text'], 'validation_invalid_value'],
    ['score', 'twelve', 'validation_invalid_number'],
    ['score', 101, 'validation_max_number_constraint'],
    ['score', -1, 'validation_min_number_constraint'],
    ['score', 1.5, 'validation_no_decimal_constraint'],
    ['done', 'maybe', 'validation_invalid_bool'],
    ['done', 2, 'validation_invalid_bool'],
    ['contact', 'not-an-email', 'validation_is_email'],
    ['contact', 'ann@other.org', 'validation_email_domain_not_allowed'],
    ['site', 'no url', 'validation_invalid_url'],
    ['site', 'https://evil.test/x', 'validation_url_domain_not_allowed'],
    ['due', 'yesterday', 'validation_invalid_date'],
    ['due', '2024-02-30', 'validation_invalid_date'],
    ['due', '2019-12-31', 'validation_min_date_constraint'],
    ['due', '2031-01-01', 'validation_max_date_constraint'],
    ['status', 'archived', 'validation_invalid_value'],
    ['status', ['draft', 'live'], 'validation_too_many_values'],
    ['labels', ['a', 'b', 'c'], 'validation_too_many_values'],
    ['labels', ['z'], 'validation_invalid_value'],
    ['meta', { big: 'x'.repeat(100) }, 'validation_json_size_limit'],
  ];
  for (const [field, value, code] of BAD) {
    test(`${field} = ${JSON.stringify(value).slice(0, 40)} is a 400 with ${code}`, async () => {
      const res = await create({ [field]: value });
      assert.equal(res.status, 400);
      assert.equal(res.body.code, 400);
      assert.equal(res.body.data[field]?.code, code, JSON.stringify(res.body));
      assert.equal(typeof res.body.data[field].message, 'string');
    });
  }

  test('json values nested deeper than SQLite can read are refused, however deep', async () => {
    for (const depth of [600, 100_000]) {
      const raw = `{"meta": ${'['.repeat(depth)}${']'.repeat(depth)}}`;
      const res = await server.admin('POST', '/api/collections/items/records', { raw, headers: { 'content-type': 'application/json' } });
      assert.equal(res.status, 400, `depth ${depth}`);
      // Past 1000 levels the JSON body parser refuses the whole body before any field sees it.
      if (depth < 1000) assert.equal(res.body.data.meta.code, 'validation_invalid_json');
      else assert.match(res.body.message, /nested deeper than 1000 levels/);
    }
    const ok = await create({ meta: JSON.parse(`${'['.repeat(20)}1${']'.repeat(20)}`) });
    assert.equal(ok.status, 200, 'moderate nesting is fine');
    const filtered = await server.admin('GET', `/api/collections/items/records?filter=${encodeURIComponent('meta.a.b = 1')}&sort=meta.a`);
    assert.equal(filtered.status, 200);
  });

  test('a failed write stores nothing, and an update is validated the same way', async () => {
    const before = (await server.admin('GET', '/api/collections/items/records?perPage=1')).body.totalItems;
    const res = await create({ title: 'fine', score: 'bad', status: 'nope' });
    assert.equal(res.status, 400);
    assert.deepEqual(Object.keys(res.body.data).sort(), ['score', 'status']);
    assert.equal((await server.admin('GET', '/api/collections/items/records?perPage=1')).body.totalItems, before);

    const ok = (await create({ title: 'ok' })).body;
    const upd = await server.admin('PATCH', `/api/collections/items/records/${ok.id}`, { body: { score: 1000 } });
    assert.equal(upd.status, 400);
    assert.equal(upd.body.data.score.code, 'validation_max_number_constraint');
    assert.equal((await server.admin('GET', `/api/collections/items/records/${ok.id}`)).body.score, 0);
  });

  test('required fields refuse empty values on create and update', async () => {
    await createCollection(server, {
      name: 'strict',
      fields: [
        { name: 'name', type: 'text', required: true },
        { name: 'count', type: 'number', required: true },
        { name: 'agreed', type: 'bool', required: true },
        { name: 'kind', type: 'select', required: true, options: { values: ['x'] } },
      ],
    });
    const res = await create({}, 'strict');
    assert.equal(res.status, 400);
    for (const f of ['name', 'count', 'agreed', 'kind']) assert.equal(res.body.data[f].code, 'validation_required', f);
    const ok = await create({ name: 'n', count: 3, agreed: true, kind: 'x' }, 'strict');
    assert.equal(ok.status, 200);
    const blank = await server.admin('PATCH', `/api/collections/strict/records/${ok.body.id}`, { body: { name: '' } });
    assert.equal(blank.status, 400);
    assert.equal(blank.body.data.name.code, 'validation_required');
  });

  test('a unique violation is a 400 naming the field, not a 500', async () => {
    await createCollection(server, { name: 'accounts', fields: [{ name: 'handle', type: 'text', unique: true }, { name: 'note', type: 'text' }] });
    assert.equal((await create({ handle: 'ann' }, 'accounts')).status, 200);
    const dup = await create({ handle: 'ann' }, 'accounts');
    assert.equal(dup.status, 400);
    assert.equal(dup.body.data.handle.code, 'validation_not_unique');
    // PocketBase's message for any failed create; the field is named in data.
    assert.equal(dup.body.message, 'Failed to create record.');
    // Empty values do not collide.
    assert.equal((await create({ note: 'a' }, 'accounts')).status, 200);
    assert.equal((await create({ note: 'b' }, 'accounts')).status, 200);
    const other = (await create({ handle: 'bob' }, 'accounts')).body;
    const upd = await server.admin('PATCH', `/api/collections/accounts/records/${other.id}`, { body: { handle: 'ann' } });
    assert.equal(upd.status, 400);
    assert.equal(upd.body.data.handle.code, 'validation_not_unique');
  });

  test('relations must point at existing records of the target collection', async () => {
    const ok = await create({ one: targetIds[0], many: [targetIds[1], targetIds[2]] }, 'links');
    assert.equal(ok.status, 200, ok.text);
    assert.equal(ok.body.one, targetIds[0]);
    assert.deepEqual(ok.body.many, [targetIds[1], targetIds[2]]);

    const missing = await create({ one: 'aaaaaaaaaaaaaaa' }, 'links');
    assert.equal(missing.status, 400);
    assert.equal(missing.body.data.one.code, 'validation_missing_rel_records');
    const malformed = await create({ many: ['../../etc'] }, 'links');
    assert.equal(malformed.status, 400);
    assert.equal(malformed.body.data.many.code, 'validation_missing_rel_records');
    const tooMany = await create({ many: targetIds }, 'links');
    assert.equal(tooMany.status, 400);
    assert.equal(tooMany.body.data.many.code, 'validation_too_many_values');
    const wrongType = await create({ one: 12 }, 'links');
    assert.equal(wrongType.status, 400);
    assert.equal(wrongType.body.data.one.code, 'validation_invalid_value');
    // An id of another collection's record is not a target record.
    const items = (await server.admin('GET', '/api/collections/items/records?perPage=1')).body.items;
    const foreign = await create({ one: items[0].id }, 'links');
    assert.equal(foreign.status, 400);
    assert.equal(foreign.body.data.one.code, 'validation_missing_rel_records');
  });

  test('field options are validated when a collection is saved', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ name: 'f', type: 'text', options: { min: 5, max: 2 } }, 'max'],
      [{ name: 'f', type: 'text', options: { min: -1 } }, 'min'],
      [{ name: 'f', type: 'text', options: { pattern: '([' } }, 'pattern'],
      [{ name: 'f', type: 'number', options: { min: 'low' } }, 'min'],
      [{ name: 'f', type: 'number', options: { noDecimal: 'yes' } }, 'noDecimal'],
      [{ name: 'f', type: 'select', options: {} }, 'values'],
      [{ name: 'f', type: 'select', options: { values: ['a'], maxSelect: 0 } }, 'maxSelect'],
      [{ name: 'f', type: 'email', options: { onlyDomains: ['a.com'], exceptDomains: ['b.com'] } }, 'onlyDomains'],
      [{ name: 'f', type: 'date', options: { min: 'soon' } }, 'min'],
      [{ name: 'f', type: 'json', options: { maxSize: -1 } }, 'maxSize'],
      [{ name: 'f', type: 'relation', options: {} }, 'toCollection'],
      [{ name: 'f', type: 'relation', options: { toCollection: 'nowhere' } }, 'toCollection'],
    ];
    for (const [field, option] of cases) {
      const res = await server.admin('POST', '/api/collections', { body: { name: 'opts', fields: [field] } });
      assert.equal(res.status, 400, JSON.stringify(field));
      assert.equal(res.body.data.fields[1].options[option]?.code, 'validation_invalid_option', `${JSON.stringify(field)}: ${JSON.stringify(res.body.data)}`);
    }
    assert.equal((await server.admin('GET', '/api/collections/opts')).status, 404);
  });

  test('a relation may name its target by collectionId too', async () => {
    const targets = (await server.admin('GET', '/api/collections/targets')).body;
    const c = await createCollection(server, { name: 'by_id', fields: [{ name: 't', type: 'relation', options: { collectionId: targets.id } }] });
    assert.equal(c.schema[0].options.toCollection, 'targets');
    assert.equal(c.schema[0].options.collectionId, targets.id);
  });
});
