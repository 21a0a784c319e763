import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { CHANGES_PER_TURN, WRITES_PER_TURN } from '../../src/realtime/broadcast.ts';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';
import { SseStream, subscribeRaw } from '../helpers/sse.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * The fan-out runs in slices (`CHANGES_PER_TURN` changes decided, `WRITES_PER_TURN` clients written to
 * per turn of the event loop): more clients than a slice writes to, and more changes in one commit
 * than a slice decides, must still reach every client whole and in commit order, clients of different
 * audiences (whose writes hold different frames) interleaved in the write order.
 */
describe('realtime fan-out in slices', () => {
  const CLIENTS = WRITES_PER_TURN + 30;
  const CHANGES = CHANGES_PER_TURN + 50;
  let server: TestServer;
  const streams: SseStream[] = [];

  before(async () => {
    server = await startServer({ env: { CAIRN_BATCH_MAX_REQUESTS: String(CHANGES) } });
    await createCollection(server, { name: 'notes', fields: [{ name: 'title', type: 'text' }, { name: 'n', type: 'number' }], listRule: '', viewRule: '' });
  });
  after(async () => {
    for (const s of streams) s.close();
    await server?.close();
  });

  test('every client gets every change of a large commit and the writes after it, in order', async () => {
    // Every third client has a filter of its own (another audience): it sees the first 40 records only.
    const few = `notes/*?options=${encodeURIComponent(JSON.stringify({ query: { filter: 'n < 40' } }))}`;
    const opened = await Promise.all(Array.from({ length: CLIENTS }, () => SseStream.open(server.url)));
    streams.push(...opened);
    for (const [i, s] of opened.entries()) assert.equal((await subscribeRaw(server.url, s.clientId, [i % 3 === 2 ? few : 'notes/*'])).status, 204);

    // One transaction: its changes are published together, more than one slice decides.
    const requests = Array.from({ length: CHANGES }, (_, n) => ({ method: 'POST', url: '/api/collections/notes/records', body: { title: `t${n}`, n } }));
    const res = await server.admin('POST', '/api/batch', { body: { requests } });
    assert.equal(res.status, 200, res.text);
    const ids: string[] = res.body.map((r: { body: { id: string } }) => r.body.id);
    // Then single writes while those are still being sent: an update of each of the first records.
    await Promise.all(ids.slice(0, 10).map((id, n) => server.admin('PATCH', `/api/collections/notes/records/${id}`, { body: { title: `u${n}` } })));

    const expected = (filtered: boolean) => {
      const keep = (n: number) => !filtered || n < 40;
      const creates = ids.map((id, n) => ({ n, id })).filter(({ n }) => keep(n)).map(({ id }) => `create ${id}`);
      const updates = ids.slice(0, 10).map((id, n) => ({ n, id })).filter(({ n }) => keep(n)).map(({ id }) => `update ${id}`);
      return { creates, updates };
    };
    for (const [i, s] of opened.entries()) {
      const { creates, updates } = expected(i % 3 === 2);
      await waitFor(() => s.messages().length >= creates.length + updates.length, { timeoutMs: 30_000, what: `client ${i}'s events` });
      const got = s.messages().map((m) => `${m.action} ${m.record.id}`);
      // The creates in commit order, first; the updates (separate commits, in any order among
      // themselves) after them.
      assert.deepEqual(got.slice(0, creates.length), creates, `client ${i}`);
      assert.deepEqual(got.slice(creates.length).sort(), [...updates].sort(), `client ${i}`);
      assert.equal(s.ended, false);
    }
  });
});
