import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { createCollection, createUser, startServer, type TestServer } from '../helpers/server.ts';

/**
 * A delete that touches only its own row is one `DELETE … RETURNING` under the rule's condition
 * (src/records/delete.ts); one with records pointing at it reads first and settles them. Both must
 * refuse what the rule refuses, keep the record then, and announce what they deleted in full.
 */
describe('deletes under rules, alone and with references', () => {
  let server: TestServer;
  let receiver: Receiver;
  let alice: { id: string; token: string };
  let bob: { id: string; token: string };

  before(async () => {
    server = await startServer();
    receiver = await startReceiver();
    alice = await createUser(server, 'delete-alice@example.com');
    bob = await createUser(server, 'delete-bob@example.com');
    const open = { listRule: '', viewRule: '', createRule: '' };
    await createCollection(server, { name: 'boards', fields: [{ name: 'name', type: 'text' }], ...open, deleteRule: '' });
    await createCollection(server, {
      name: 'notes',
      fields: [
        { name: 'title', type: 'text' },
        { name: 'owner', type: 'relation', options: { toCollection: 'users' } },
        { name: 'board', type: 'relation', options: { toCollection: 'boards', cascadeDelete: true } },
      ],
      ...open,
      // Through a relation, so the condition reads another table for the row being deleted.
      deleteRule: 'owner.email = @request.auth.email',
      options: { triggers: [{ action: 'delete', url: `${receiver.url}/deleted`, method: 'POST' }] },
    });
  });
  after(async () => {
    await server.close();
    await receiver.close();
  });

  async function note(title: string, owner: string, board?: string): Promise<string> {
    const res = await server.admin('POST', '/api/collections/notes/records', { body: { title, owner, ...(board ? { board } : {}) } });
    assert.equal(res.status, 200, res.text);
    return res.body.id;
  }

  test("another user's delete is answered 404 and the record stays", async () => {
    const id = await note('kept', alice.id);
    const res = await server.request('DELETE', `/api/collections/notes/records/${id}`, { token: bob.token });
    assert.equal(res.status, 404, res.text);
    const still = await server.admin('GET', `/api/collections/notes/records/${id}`);
    assert.equal(still.status, 200);
    assert.equal(still.body.title, 'kept');
    const guest = await server.request('DELETE', `/api/collections/notes/records/${id}`);
    assert.equal(guest.status, 404, guest.text);
    assert.equal((await server.admin('GET', `/api/collections/notes/records/${id}`)).status, 200);
  });

  test("the owner's delete removes the record and announces every field of it", async () => {
    const id = await note('gone soon', alice.id);
    const res = await server.request('DELETE', `/api/collections/notes/records/${id}`, { token: alice.token });
    assert.equal(res.status, 204, res.text);
    assert.equal((await server.admin('GET', `/api/collections/notes/records/${id}`)).status, 404);
    const again = await server.request('DELETE', `/api/collections/notes/records/${id}`, { token: alice.token });
    assert.equal(again.status, 404, again.text);

    const requests = await receiver.waitForRequests(1);
    const event = requests.find((r) => r.json?.record?.id === id);
    assert.ok(event, 'the delete reached the receiver');
    assert.equal(event.json.record.title, 'gone soon');
    assert.equal(event.json.record.owner, alice.id);
    assert.equal(event.json.record.collectionName, 'notes');
  });

  test('a record other records point at takes its cascade with it', async () => {
    const board = await server.admin('POST', '/api/collections/boards/records', { body: { name: 'b' } });
    assert.equal(board.status, 200, board.text);
    const first = await note('on board', alice.id, board.body.id);
    const second = await note('also on board', bob.id, board.body.id);
    const res = await server.request('DELETE', `/api/collections/boards/records/${board.body.id}`, { token: bob.token });
    assert.equal(res.status, 204, res.text);
    for (const id of [first, second]) assert.equal((await server.admin('GET', `/api/collections/notes/records/${id}`)).status, 404);
  });
});
