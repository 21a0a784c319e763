import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';
import { SseStream, subscribeRaw } from '../helpers/sse.ts';
import { pbDir } from './pb-dir.ts';

// A live board: who may connect, what they may follow, and what each message carries.
const BOARD = `
onRealtimeConnectRequest((e) => {
  if (e.request.header.get("X-Banned") === "yes") throw new ForbiddenError("Not on this board.");
  e.next();
});

onRealtimeSubscribeRequest((e) => {
  e.subscriptions = e.subscriptions.filter((t) => !t.startsWith("audit"));
  e.next();
});

onRealtimeMessageSend((e) => {
  const body = JSON.parse(toString(e.message.data));
  if (body.record && body.record.title === "hush") return; // not sent
  if (body.record) body.record.stamp = "seen by " + e.client.id().slice(0, 4);
  e.message.data = JSON.stringify(body);
  e.next();
});

onRecordEnrich((e) => {
  e.record.withCustomData(true);
  e.record.set("len", e.record.getString("title").length);
  e.next();
}, "posts");
`;

describe('pb_hooks: realtime connect, subscribe and message events', () => {
  let server: TestServer;
  let pb: ReturnType<typeof pbDir>;
  const streams: SseStream[] = [];

  before(async () => {
    pb = pbDir({ 'board.pb.js': BOARD });
    server = await startServer({ env: { CAIRN_PB_HOOKS_DIR: pb.dir } });
    await createCollection(server, { name: 'posts', listRule: '', viewRule: '', fields: [{ name: 'title', type: 'text' }] });
    await createCollection(server, { name: 'audit', listRule: '', viewRule: '', fields: [{ name: 'what', type: 'text' }] });
  });
  after(async () => {
    for (const s of streams) s.close();
    await server?.close();
    pb?.remove();
  });

  test('a connect handler that throws refuses the stream', async () => {
    const res = await fetch(`${server.url}/api/realtime`, { headers: { 'x-banned': 'yes' } });
    assert.equal(res.status, 403);
    assert.equal((await res.json()).message, 'Not on this board.');
  });

  test('subscriptions the handler removes get nothing; messages are changed, enriched, or dropped per client', async () => {
    const stream = await SseStream.open(server.url);
    streams.push(stream);
    const sub = await subscribeRaw(server.url, stream.clientId, ['posts', 'audit']);
    assert.equal(sub.status, 204, JSON.stringify(sub.body));
    await server.admin('POST', '/api/collections/audit/records', { body: { what: 'x' } });
    await server.admin('POST', '/api/collections/posts/records', { body: { title: 'hush' } });
    await server.admin('POST', '/api/collections/posts/records', { body: { title: 'hello' } });
    const got = await stream.next((e) => e.event === 'posts', 'a posts message');
    const body = JSON.parse(got.data);
    assert.equal(body.record.title, 'hello');
    assert.equal(body.record.len, 5, 'enriched for the receiver');
    assert.equal(body.record.stamp, `seen by ${stream.clientId.slice(0, 4)}`);
    const topics = stream.events.map((e) => e.event);
    assert.deepEqual(topics, ['PB_CONNECT', 'posts'], 'no audit message, no hushed post');
  });
});
