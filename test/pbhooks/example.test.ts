import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { createCollection, createUser, startServer, type TestServer } from '../helpers/server.ts';

// examples/pb-hooks-library's pb_hooks, as they are in the repository.
const HOOKS = fileURLToPath(new URL('../../examples/pb-hooks-library/pb_hooks', import.meta.url));

describe('the pb_hooks example (examples/pb-hooks-library)', () => {
  let server: TestServer;
  let ada: Awaited<ReturnType<typeof createUser>>;
  let book: string;

  before(async () => {
    server = await startServer({ env: { CAIRN_PB_HOOKS_DIR: HOOKS } });
    await createCollection(server, { name: 'books', listRule: '', viewRule: '', fields: [{ name: 'title', type: 'text' }, { name: 'copies', type: 'number' }] });
    await createCollection(server, {
      name: 'loans',
      createRule: "@request.auth.id != ''",
      updateRule: 'member = @request.auth.id',
      fields: [
        { name: 'book', type: 'relation', options: { toCollection: 'books' } },
        { name: 'member', type: 'relation', options: { toCollection: 'users' } },
        { name: 'due', type: 'text' },
        { name: 'returned', type: 'bool' },
      ],
    });
    ada = await createUser(server, 'ada@example.com');
    book = (await server.admin('POST', '/api/collections/books/records', { body: { title: 'Dune', copies: 1 } })).body.id;
    await server.admin('POST', '/api/collections/books/records', { body: { title: 'Emma', copies: 3 } });
  });
  after(async () => {
    await server?.close();
  });

  const copies = async () => (await server.admin('GET', `/api/collections/books/records/${book}`)).body.copies;

  test('a loan takes a copy in its transaction, for the member only; a return gives it back', async () => {
    const other = await createUser(server, 'bob@example.com');
    const forOther = await server.request('POST', '/api/collections/loans/records', { token: other.token, body: { book, member: ada.id } });
    assert.equal(forOther.status, 403, forOther.text);
    const loan = await server.request('POST', '/api/collections/loans/records', { token: ada.token, body: { book, member: ada.id } });
    assert.equal(loan.status, 200, loan.text);
    assert.match(loan.body.due, /^\d{4}-\d\d-\d\d /);
    assert.equal(await copies(), 0);
    const none = await server.request('POST', '/api/collections/loans/records', { token: ada.token, body: { book, member: ada.id } });
    assert.equal(none.status, 400);
    assert.equal(none.body.data.book.code, 'validation_no_copy');
    const mine = await server.request('GET', '/api/library/mine', { token: ada.token });
    assert.deepEqual(mine.body.map((l: any) => l.book), ['Dune']);
    assert.equal((await server.request('GET', '/api/library/mine')).status, 401);
    const popular = await server.request('GET', '/api/library/popular');
    assert.deepEqual(popular.body, [{ title: 'Dune', loans: 1 }, { title: 'Emma', loans: 0 }]);
    const back = await server.request('PATCH', `/api/collections/loans/records/${loan.body.id}`, { token: ada.token, body: { returned: true } });
    assert.equal(back.status, 200, back.text);
    assert.equal(await copies(), 1);
    assert.equal((await server.admin('POST', '/api/hooks/cron/overdue')).status, 204);
  });
});
