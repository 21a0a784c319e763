import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCollection, createUser, startServer, type TestServer } from '../helpers/server.ts';
import { apply, saveMigration } from '../migrations/helpers.ts';

/**
 * Security invariant "search reads only what the caller may filter by" (API contract §20, issue 36
 * hole 6): with a full-text index over a hidden field, `search=<the hidden value>` must not tell a
 * guest or a user whether their guess is right; an administrator still searches every indexed field.
 */
describe('full-text search never matches a hidden field for non-administrators', () => {
  let server: TestServer;
  let user: { token: string };

  before(async () => {
    server = await startServer();
    user = await createUser(server, 'reader@example.com');
    await createCollection(server, {
      name: 'people',
      listRule: '',
      viewRule: '',
      fields: [
        { name: 'name', type: 'text' },
        { name: 'ssn', type: 'text', hidden: true },
      ],
    });
    await server.admin('POST', '/api/collections/people/records', { body: { name: 'Alice Walker', ssn: 'zebracode 123' } });
    await server.admin('POST', '/api/collections/people/records', { body: { name: 'Bob Zebra', ssn: 'other 456' } });
    // An index over hidden fields only: nothing in it is for a guest to search.
    await createCollection(server, { name: 'vault', listRule: '', viewRule: '', fields: [{ name: 'secret', type: 'text', hidden: true }] });
    await server.admin('POST', '/api/collections/vault/records', { body: { secret: 'zebracode' } });
    const version = await saveMigration(server, {
      name: 'people search',
      databases: { main: { collections: { people: { create_fts: { fields: ['name', 'ssn'] } }, vault: { create_fts: { fields: ['secret'] } } } } },
    });
    assert.equal((await apply(server, version)).status, 200);
  });
  after(() => server.close());

  const search = (terms: string, token?: string | null) => server.request('GET', `/api/collections/people/records?search=${encodeURIComponent(terms)}`, { token });

  test('a guest and a user find nothing by a hidden value, and still find by visible ones', async () => {
    for (const token of [null, user.token]) {
      const hidden = await search('zebracode', token);
      assert.equal(hidden.status, 200, hidden.text);
      assert.equal(hidden.body.items.length, 0, 'the hidden value must not match');
      // A word in both a visible and a hidden field matches by the visible one only.
      const both = await search('zebra', token);
      assert.deepEqual(
        both.body.items.map((r: any) => r.name),
        ['Bob Zebra'],
      );
      assert.equal(both.body.items[0].ssn, undefined);
      assert.equal((await search('alice', token)).body.items.length, 1);
      // Two words, one visible one hidden: no match.
      assert.equal((await search('alice zebracode', token)).body.items.length, 0);
      const vault = await server.request('GET', '/api/collections/vault/records?search=zebracode', { token });
      assert.equal(vault.status, 200, vault.text);
      assert.equal(vault.body.totalItems, 0);
    }
  });

  test('an administrator searches the hidden field too', async () => {
    const res = await server.admin('GET', `/api/collections/people/records?search=zebracode`);
    assert.equal(res.status, 200);
    assert.deepEqual(
      res.body.items.map((r: any) => r.name),
      ['Alice Walker'],
    );
    assert.equal((await server.admin('GET', '/api/collections/vault/records?search=zebracode')).body.totalItems, 1);
  });
});
