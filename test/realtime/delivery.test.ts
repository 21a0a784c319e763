import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { type Provider, startProvider, useProvider } from '../helpers/oauth2.ts';
import { spawnServer } from '../helpers/process.ts';
import { createCollection, request, startServer, type TestServer } from '../helpers/server.ts';
import { SseStream, subscribeRaw } from '../helpers/sse.ts';
import { waitFor } from '../helpers/wait.ts';

/** A client that opens a stream, reads its first message, then stops reading (a paused socket). */
async function stalledClient(url: string): Promise<{ socket: net.Socket; clientId: string }> {
  const { hostname, port } = new URL(url);
  const socket = net.connect(Number(port), hostname);
  await new Promise((resolve) => socket.once('connect', resolve));
  socket.write(`GET /api/realtime HTTP/1.1\r\nHost: ${hostname}\r\nAccept: text/event-stream\r\n\r\n`);
  let text = '';
  const clientId = await new Promise<string>((resolve) => {
    const onData = (chunk: Buffer) => {
      text += chunk.toString('utf8');
      const m = /event:PB_CONNECT\ndata:\{"clientId":"(\w+)"\}/.exec(text);
      if (m) {
        socket.off('data', onData);
        resolve(m[1]);
      }
    };
    socket.on('data', onData);
  });
  // From now on nothing is read: the kernel's buffers fill, then the server's.
  socket.pause();
  return { socket, clientId };
}

/** Events after commit only, from every write path, in order; slow clients dropped; shutdown. */
describe('realtime delivery', () => {
  let server: TestServer;
  let provider: Provider;
  const streams: SseStream[] = [];
  const open = async (topics: string[]) => {
    const s = await SseStream.open(server.url);
    streams.push(s);
    assert.equal((await subscribeRaw(server.url, s.clientId, topics)).status, 204);
    return s;
  };
  const records = (s: SseStream) => s.messages().map((m) => `${m.event} ${m.action} ${m.record.title ?? m.record.name ?? m.record.email ?? ''}`);

  before(async () => {
    provider = await startProvider();
    server = await startServer({ env: { CAIRN_REALTIME_CLIENT_BUFFER: '16384' } });
    await useProvider(server, provider);
    const open = { listRule: '', viewRule: '' };
    await createCollection(server, { name: 'parents', fields: [{ name: 'title', type: 'text' }], ...open });
    await createCollection(server, { name: 'kids', fields: [{ name: 'title', type: 'text' }, { name: 'parent', type: 'relation', options: { toCollection: 'parents', maxSelect: 1 } }], ...open });
    await createCollection(server, { name: 'pins', fields: [{ name: 'title', type: 'text' }, { name: 'parent', type: 'relation', required: true, options: { toCollection: 'parents', maxSelect: 1 } }], ...open });
    await createCollection(server, { name: 'replies', fields: [{ name: 'title', type: 'text' }, { name: 'parent', type: 'relation', options: { toCollection: 'parents', maxSelect: 1, cascadeDelete: true } }], ...open });
  });
  after(async () => {
    for (const s of streams) s.close();
    await server?.close();
    await provider?.close();
  });

  test('a rolled-back change sends nothing; the same change committed does', async () => {
    const parent = (await server.admin('POST', '/api/collections/parents/records', { body: { title: 'p' } })).body;
    await server.admin('POST', '/api/collections/kids/records', { body: { title: 'kid', parent: parent.id } });
    const pin = (await server.admin('POST', '/api/collections/pins/records', { body: { title: 'pin', parent: parent.id } })).body;
    const s = await open(['kids/*', 'parents/*']);

    // Deleting the parent clears the kid's reference (an update, emitted in the transaction), then
    // meets the pin's required reference and is refused: everything rolls back.
    assert.equal((await server.admin('DELETE', `/api/collections/parents/records/${parent.id}`)).status, 400);
    await server.admin('POST', '/api/collections/parents/records', { body: { title: 'marker' } });
    await s.next((e) => e.event === 'parents/*', 'the marker');
    assert.deepEqual(records(s), ['parents/* create marker']);

    await server.admin('DELETE', `/api/collections/pins/records/${pin.id}`);
    assert.equal((await server.admin('DELETE', `/api/collections/parents/records/${parent.id}`)).status, 204);
    await s.next((e) => JSON.parse(e.data).action === 'delete', 'the delete');
    assert.deepEqual(records(s), ['parents/* create marker', 'kids/* update kid', 'parents/* delete p']);
  });

  test('who gets a change is decided when it commits: an unsubscribe after its answer still gets it, a subscribe after it does not', async () => {
    // Changes of another collection keep the broadcaster busy, so that it comes to the create only
    // after the requests that follow its answer have been served.
    const busy = await open(['kids']);
    for (let round = 0; round < 6; round++) {
      const leaving = await open(['parents']);
      const coming = await open([]);
      const backlog = Array.from({ length: 40 }, (_, i) => server.admin('POST', '/api/collections/kids/records', { body: { title: `kid ${round}.${i}` } }));
      const created = await server.admin('POST', '/api/collections/parents/records', { body: { title: `round ${round}` } });
      assert.equal(created.status, 200, created.text);
      const moves = await Promise.all([subscribeRaw(server.url, leaving.clientId, []), subscribeRaw(server.url, coming.clientId, ['parents'])]);
      assert.deepEqual(
        moves.map((m) => m.status),
        [204, 204],
      );
      await Promise.all(backlog);
      await leaving.next((e) => JSON.parse(e.data).record?.id === created.body.id, `round ${round}: the create, subscribed when it committed`);
      const marker = await server.admin('POST', '/api/collections/parents/records', { body: { title: `marker ${round}` } });
      await coming.next((e) => JSON.parse(e.data).record?.id === marker.body.id, `round ${round}: the marker`);
      assert.deepEqual(records(coming), [`parents create marker ${round}`], `round ${round}`);
      leaving.close();
      coming.close();
    }
    busy.close();
  });

  test('cascade deletes, workflow steps and OAuth2 sign-ups send their changes', async () => {
    await server.admin('PATCH', '/api/collections/users', { body: { listRule: '', viewRule: '' } });
    await createCollection(server, { name: 'leads', fields: [{ name: 'name', type: 'text' }], listRule: '', viewRule: '' });
    const res = await server.admin('POST', '/api/workflows', { body: { name: 'lead', secret: 'workflow-secret-123', steps: [{ type: 'create_record', collection: 'leads', data: { name: '{{event.name}}' } }] } });
    assert.equal(res.status, 200, res.text);
    const parent = (await server.admin('POST', '/api/collections/parents/records', { body: { title: 'thread' } })).body;
    const replies = [];
    for (const title of ['r1', 'r2']) replies.push((await server.admin('POST', '/api/collections/replies/records', { body: { title, parent: parent.id } })).body);
    const s = await open(['replies/*', 'leads', 'users/*']);

    assert.equal((await server.admin('DELETE', `/api/collections/parents/records/${parent.id}`)).status, 204);
    assert.equal((await server.request('POST', '/api/workflows/lead/events', { body: { name: 'Ada' }, headers: { authorization: 'Bearer workflow-secret-123' } })).status, 202);
    provider.user = { sub: 'rt-1', email: 'oauth@example.com', email_verified: true, name: 'Oli' };
    const methods = await server.request('GET', '/api/auth/methods?redirectUrl=http%3A%2F%2F127.0.0.1%2Fcb');
    const listing = methods.body.oauth2.providers[0];
    const { code } = await provider.authorize(listing.authUrl);
    const login = await server.request('GET', `/api/auth/oauth2-login?${new URLSearchParams({ provider: 'mock', code, codeVerifier: listing.codeVerifier, redirectUrl: 'http://127.0.0.1/cb' })}`);
    assert.equal(login.status, 200, login.text);

    // The sign-up is created as the guest creates it, then marked verified (the provider vouches for the address), as PocketBase does.
    await waitFor(() => s.messages().length >= 5, { what: 'five events' });
    assert.deepEqual(records(s).sort(), ['leads create Ada', 'replies/* delete r1', 'replies/* delete r2', 'users/* create Oli', 'users/* update Oli'].sort());
    const user = s.messages().find((m) => m.event === 'users/*')!.record;
    assert.equal('email' in user, false, "a guest does not see the new user's email");
  });

  test("one record's events arrive in commit order", async () => {
    const s = await open(['kids/*']);
    const kid = (await server.admin('POST', '/api/collections/kids/records', { body: { title: 'v1' } })).body;
    await server.admin('PATCH', `/api/collections/kids/records/${kid.id}`, { body: { title: 'v2' } });
    await server.admin('PATCH', `/api/collections/kids/records/${kid.id}`, { body: { title: 'v3' } });
    await waitFor(() => s.messages().length >= 3, { what: 'three events' });
    // Each message shows the record when it is sent, so the last one at least is the last state.
    assert.deepEqual(
      s.messages().map((m) => m.action),
      ['create', 'update', 'update'],
    );
    assert.equal(s.messages()[2].record.title, 'v3');
    await server.admin('DELETE', `/api/collections/kids/records/${kid.id}`);
    await waitFor(() => s.messages().length >= 4, { what: 'the delete' });
    assert.equal(s.messages()[3].action, 'delete');

    // A record deleted before its create is sent: the create is left out (the record is read when its
    // message is built), never sent after the delete.
    const gone = await open(['kids/*']);
    const brief = (await server.admin('POST', '/api/collections/kids/records', { body: { title: 'brief' } })).body;
    await server.admin('DELETE', `/api/collections/kids/records/${brief.id}`);
    await waitFor(() => gone.messages().some((m) => m.action === 'delete'), { what: 'the delete of the brief record' });
    assert.deepEqual(gone.messages().at(-1)!.action, 'delete');
    assert.ok(['delete', 'create,delete'].includes(gone.messages().map((m) => m.action).join(',')));
  });

  test('a client that does not read is dropped; the others get everything', async () => {
    const reader = await open(['kids/*']);
    const stalled = await stalledClient(server.url);
    assert.equal((await subscribeRaw(server.url, stalled.clientId, ['kids/*'])).status, 204);
    const before = server.services.realtime.clientCount;
    const big = 'x'.repeat(64 * 1024);
    let created = 0;
    // The kernel's socket buffers take a few megabytes before the server's own buffer grows past
    // its 16 KiB limit here.
    await waitFor(
      async () => {
        for (let i = 0; i < 8; i++, created++) await server.admin('POST', '/api/collections/kids/records', { body: { title: big } });
        return server.services.realtime.clientCount < before;
      },
      { timeoutMs: 60_000, intervalMs: 1, what: 'the stalled client to be dropped' },
    );
    assert.equal(server.services.realtime.clientCount, before - 1);
    await waitFor(() => reader.messages().length >= created, { timeoutMs: 30_000, what: `all ${created} events at the reading client` });
    assert.equal(reader.ended, false);
    stalled.socket.destroy();
  });
});

describe('realtime and graceful shutdown', () => {
  test('SIGTERM ends open streams, read or not, and the server exits promptly', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'cairn-rt-stop-'));
    const cairn = await spawnServer(dir);
    try {
      const reading = await SseStream.open(cairn.url);
      assert.equal((await subscribeRaw(cairn.url, reading.clientId, ['users/*'])).status, 204);
      const stalled = await stalledClient(cairn.url);
      const started = Date.now();
      const code = await cairn.kill('SIGTERM');
      assert.equal(code, 0, cairn.output());
      assert.ok(Date.now() - started < 5000, `exited after ${Date.now() - started} ms`);
      await waitFor(() => reading.ended, { what: 'the stream to end' });
      stalled.socket.destroy();
      // And nothing answers any more.
      await assert.rejects(request(cairn.url, 'GET', '/api/health'));
    } finally {
      await cairn.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
