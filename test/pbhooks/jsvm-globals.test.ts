import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { SseStream, subscribeRaw } from '../helpers/sse.ts';
import { startServer, type TestServer } from '../helpers/server.ts';
import { pbDir } from './pb-dir.ts';

// Globals PocketBase's JSVM binds that hook files use: middlewares with priorities, cookies set by a
// route, field errors thrown with ValidationError, $security.encrypt/decrypt, toBytes and $filepath.
const HOOKS = `
routerUse(new Middleware((e) => { e.response.header().add("X-Order", "late"); return e.next() }, 10, "late"));
routerUse(new Middleware((e) => { e.response.header().add("X-Order", "early"); return e.next() }, -10, "early"));

routerAdd("GET", "/order", (e) => e.json(200, { ok: true }), (e) => { e.response.header().add("X-Order", "route"); return e.next() });

routerAdd("POST", "/login-cookie", (e) => {
  e.setCookie(new Cookie({ name: "session", value: "abc123", path: "/", httpOnly: true, secure: true, sameSite: 2, maxAge: 3600 }));
  e.setCookie(new Cookie({ name: "theme", value: "dark", path: "/" }));
  return e.noContent(204);
});

routerAdd("POST", "/validate", (e) => {
  const title = e.requestInfo().body.title || "";
  if (title.length < 3) {
    throw new BadRequestError("Failed to create the post.", { title: new ValidationError("validation_too_short", "The title is too short.") });
  }
  return e.json(200, { title });
});

routerAdd("POST", "/forward", (e) => {
  const form = new FormData();
  form.append("title", "Quarterly report");
  form.append("tags", "a");
  form.append("tags", "b");
  form.set("doc", $filesystem.fileFromBytes("%PDF-1.4 bytes", "report.pdf"));
  const res = $http.send({ url: e.requestInfo().body.to, method: "POST", body: form, headers: { "content-type": "text/plain", "x-key": "k1" } });
  return e.json(200, { status: res.statusCode, echoed: res.json, has: [form.has("doc"), form.has("nope")], keys: form.keys() });
});

routerAdd("POST", "/notify", (e) => {
  const message = new SubscriptionMessage({ name: "example", data: JSON.stringify({ note: e.requestInfo().body.note, multi: "line1\\nline2" }) });
  const clients = $app.subscriptionsBroker().clients();
  let sent = 0;
  for (let id in clients) {
    if (clients[id].hasSubscription("example")) {
      clients[id].send(message);
      sent++;
    }
  }
  return e.json(200, { sent, total: $app.subscriptionsBroker().totalClients() });
});

routerAdd("POST", "/secret", (e) => {
  const key = "0123456789abcdef0123456789abcdef";
  const sealed = $security.encrypt(e.requestInfo().body.text, key);
  let tampered = "";
  try {
    $security.decrypt(sealed.slice(0, -4) + (sealed.slice(-4) === "AAAA" ? "BBBB" : "AAAA"), key);
  } catch (err) {
    tampered = String(err.message || err);
  }
  return e.json(200, { sealed, opened: $security.decrypt(sealed, key), tampered, bytes: toBytes("hé"), path: $filepath.join(__hooks, "..", "pb_public") });
});
`;

describe('pb_hooks: JSVM globals', () => {
  let server: TestServer;
  let pb: ReturnType<typeof pbDir>;

  before(async () => {
    pb = pbDir({ 'main.pb.js': HOOKS });
    server = await startServer({ env: { CAIRN_PB_HOOKS_DIR: pb.dir } });
  });
  after(async () => {
    await server?.close();
    pb?.remove();
  });

  test("middlewares run by priority, lower first, the route's own among them (PocketBase binds them to one hook)", async () => {
    const res = await fetch(`${server.url}/order`);
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-order'), 'early, route, late');
  });

  test('e.setCookie sends each cookie as Go writes it', async () => {
    const res = await fetch(`${server.url}/login-cookie`, { method: 'POST' });
    assert.equal(res.status, 204);
    assert.deepEqual(res.headers.getSetCookie(), ['session=abc123; Path=/; Max-Age=3600; HttpOnly; Secure; SameSite=Lax', 'theme=dark; Path=/']);
  });

  test("a ValidationError in an error's data answers as the field's {code, message}", async () => {
    const res = await server.request('POST', '/validate', { body: { title: 'no' } });
    assert.equal(res.status, 400);
    assert.equal(res.body.message, 'Failed to create the post.');
    assert.deepEqual(res.body.data, { title: { code: 'validation_too_short', message: 'The title is too short.' } });
    assert.equal((await server.request('POST', '/validate', { body: { title: 'long enough' } })).status, 200);
  });

  test('$http.send with a FormData body sends multipart/form-data, files included', async () => {
    const receiver = createServer(async (req, res) => {
      const chunks: Buffer[] = [];
      for await (const c of req) chunks.push(c as Buffer);
      const form = await new Response(Buffer.concat(chunks), { headers: { 'content-type': req.headers['content-type'] ?? '' } }).formData();
      const doc = form.get('doc') as File;
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ type: String(req.headers['content-type']).split(';')[0], key: req.headers['x-key'], title: form.get('title'), tags: form.getAll('tags'), doc: [doc.name, await doc.text()] }));
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const to = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/upload`;
      const res = await server.request('POST', '/forward', { body: { to } });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body, {
        status: 200,
        echoed: { type: 'multipart/form-data', key: 'k1', title: 'Quarterly report', tags: ['a', 'b'], doc: ['report.pdf', '%PDF-1.4 bytes'] },
        has: [true, false],
        keys: ['title', 'tags', 'doc'],
      });
    } finally {
      await new Promise((resolve) => receiver.close(resolve));
    }
  });

  test("$app.subscriptionsBroker(): a hook's own message reaches the clients subscribed to its topic", async () => {
    const listening = await SseStream.open(server.url);
    const other = await SseStream.open(server.url);
    try {
      assert.equal((await subscribeRaw(server.url, listening.clientId, ['example'])).status, 204);
      assert.equal((await subscribeRaw(server.url, other.clientId, ['something-else'])).status, 204);
      const res = await server.request('POST', '/notify', { body: { note: 'hello' } });
      assert.equal(res.status, 200, res.text);
      assert.deepEqual(res.body, { sent: 1, total: 2 });
      const got = await listening.next((ev) => ev.event === 'example', 'the custom message');
      assert.deepEqual(JSON.parse(got.data), { note: 'hello', multi: 'line1\nline2' });
      assert.equal(other.events.filter((ev) => ev.event === 'example').length, 0);
    } finally {
      listening.close();
      other.close();
    }
  });

  test('$security.encrypt and decrypt round-trip (AES-GCM, nonce first); a changed text fails', async () => {
    const res = await server.request('POST', '/secret', { body: { text: 'card 4242' } });
    assert.equal(res.status, 200, res.text);
    assert.equal(res.body.opened, 'card 4242');
    // 12 bytes of nonce, the text, 16 bytes of tag.
    assert.equal(Buffer.from(res.body.sealed, 'base64').length, 12 + 'card 4242'.length + 16);
    assert.match(res.body.tampered, /message authentication failed/);
    assert.deepEqual(res.body.bytes, [104, 195, 169]);
    assert.equal(res.body.path, `${pb.root}/pb_public`);
  });
});
