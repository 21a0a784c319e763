import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { type TestNodes, startNodes } from '../helpers/nodes.ts';
import { skipOn } from '../helpers/postgres.ts';
import { createCollection, createUser } from '../helpers/server.ts';
import { SseStream, subscribeRaw } from '../helpers/sse.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * A subscription request reaching a node other than the one holding the client's stream is handed to
 * that node, and its caller gets that node's answer: the binding is decided where the client is.
 */
describe('realtime: subscriptions sent through another node', { skip: skipOn('sqlite', 'nodes share a PostgreSQL database') }, () => {
  let cluster: TestNodes;
  before(async () => {
    cluster = await startNodes(2);
    await createCollection(cluster.nodes[0], { name: 'posts', fields: [{ name: 'title', type: 'text' }], listRule: '', viewRule: '', createRule: '' });
  });
  after(() => cluster?.close());

  test('the holder\'s refusal reaches the caller: two users binding one client through the other node at once get one 204 and one 403', async () => {
    const [a, b] = cluster.nodes;
    const users = [await createUser(a, 'fwd-alice@example.com'), await createUser(a, 'fwd-bob@example.com')];
    for (let round = 0; round < 4; round++) {
      const count = a.services.realtime.clientCount;
      const s = await SseStream.open(a.url);
      // Both through b; in the odd rounds one through a, the node holding the client.
      const via = round % 2 === 0 ? [b, b] : [a, b];
      const replies = await Promise.all(users.map((u, i) => subscribeRaw(via[i].url, s.clientId, ['posts'], { token: u.token })));
      assert.deepEqual(replies.map((r) => r.status).sort(), [204, 403], `round ${round}: ${JSON.stringify(replies)}`);
      const refused = replies.find((r) => r.status === 403)!;
      assert.deepEqual(refused.body, { status: 403, code: 403, message: "The current and the previous request authorization don't match.", data: {} });
      // The one answered 204 is the one bound: a record created now reaches the client.
      const winner = users[replies.findIndex((r) => r.status === 204)];
      await waitFor(async () => (await subscribeRaw(b.url, s.clientId, ['posts'], { token: winner.token })).status === 204, { what: 'the winner to subscribe again' });
      const created = await a.request('POST', '/api/collections/posts/records', { body: { title: `round ${round}` } });
      assert.equal(created.status, 200, created.text);
      await s.next((e) => e.event === 'posts' && JSON.parse(e.data).record.id === created.body.id, 'the create');
      s.close();
      await waitFor(() => a.services.realtime.clientCount === count, { what: 'the closed stream to be forgotten' });
    }
  });
});
