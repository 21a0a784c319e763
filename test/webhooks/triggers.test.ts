import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { jwtVerify } from 'jose';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';

const SECRET = `whsec_${randomBytes(32).toString('base64')}`;

/** Standard Webhooks verification, written from the specification rather than from Cairn's code. */
function verifyStandardSignature(secret: string, headers: Record<string, unknown>, body: string): boolean {
  const key = Buffer.from(secret.replace(/^whsec_/, ''), 'base64');
  const expected = createHmac('sha256', key).update(`${headers['webhook-id']}.${headers['webhook-timestamp']}.${body}`).digest('base64');
  return String(headers['webhook-signature'])
    .split(' ')
    .some((sig) => sig === `v1,${expected}`);
}

describe('collection triggers', () => {
  let server: TestServer;
  let receiver: Receiver;

  before(async () => {
    server = await startServer({ env: { CAIRN_WEBHOOK_BACKOFF_MS: '50', CAIRN_WEBHOOK_TIMEOUT_MS: '2000' } });
    receiver = await startReceiver();
  });
  after(async () => {
    await server.close();
    await receiver.close();
  });

  const outboxCount = async (): Promise<number> => {
    const db = await server.services.registry.get('main');
    return Number((await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM _webhook_outbox'))!.n);
  };

  describe('validation', () => {
    const cases: Array<[string, unknown, string[]]> = [
      ['a URL that is not http(s)', [{ action: 'create', url: 'ftp://example.com/x', method: 'POST' }], ['0', 'url']],
      ['a malformed URL', [{ action: 'create', url: 'not a url', method: 'POST' }], ['0', 'url']],
      ['credentials in the URL', [{ action: 'create', url: 'http://u:p@example.com/', method: 'POST' }], ['0', 'url']],
      ['an unknown action', [{ action: 'upsert', url: 'http://example.com/', method: 'POST' }], ['0', 'action']],
      ['an unknown method', [{ action: 'create', url: 'http://example.com/', method: 'FETCH' }], ['0', 'method']],
      ['headers that are not an object', [{ action: 'create', url: 'http://example.com/', headers: 'x' }], ['0', 'headers']],
      ['a header value smuggling a line break', [{ action: 'create', url: 'http://example.com/', headers: { 'x-a': 'b\r\nx-evil: 1' } }], ['0', 'headers']],
      ['a header Cairn sets itself', [{ action: 'create', url: 'http://example.com/', headers: { 'Content-Length': '1' } }], ['0', 'headers']],
      ['a secret not in Standard Webhooks form', [{ action: 'create', url: 'http://example.com/', secret: 'hunter2' }], ['0', 'secret']],
      ['a whsec_ secret that is too short', [{ action: 'create', url: 'http://example.com/', secret: 'whsec_c2hvcnQ=' }], ['0', 'secret']],
      ['enabled that is not a boolean', [{ action: 'create', url: 'http://example.com/', enabled: 'yes' }], ['0', 'enabled']],
      ['a trigger that is not an object', ['http://example.com/'], ['0', '']],
      ['the second of two triggers', [{ action: 'create', url: 'http://example.com/' }, { action: 'delete', url: 'gopher://x' }], ['1', 'url']],
    ];
    for (const [what, triggers, [index, key]] of cases) {
      test(`${what} is a 400 naming the problem`, async () => {
        const res = await server.admin('POST', '/api/collections', { body: { name: 'bad_triggers', options: { triggers } } });
        assert.equal(res.status, 400, res.text);
        const problem = res.body.data.options.triggers[index][key];
        assert.match(problem.code, /^validation_/);
        assert.equal(typeof problem.message, 'string');
        assert.equal((await server.admin('GET', '/api/collections/bad_triggers')).status, 404);
      });
    }

    test('triggers that are not a list are a 400', async () => {
      const res = await server.admin('POST', '/api/collections', { body: { name: 'bad_triggers', options: { triggers: { action: 'create' } } } });
      assert.equal(res.status, 400);
      assert.equal(res.body.data.options.triggers.code, 'validation_invalid_triggers');
    });

    test('a PATCH with a bad trigger is a 400 and changes nothing', async () => {
      await createCollection(server, { name: 'patched', fields: [{ name: 'title', type: 'text' }], options: { triggers: [{ action: 'create', url: 'http://example.com/a', method: 'POST' }] } });
      const res = await server.admin('PATCH', '/api/collections/patched', { body: { options: { triggers: [{ action: 'create', url: 'javascript:alert(1)', method: 'POST' }] } } });
      assert.equal(res.status, 400);
      assert.equal(res.body.data.options.triggers[0].url.code, 'validation_invalid_url');
      const stored = await server.admin('GET', '/api/collections/patched');
      assert.equal(stored.body.options.triggers[0].url, 'http://example.com/a');
    });

    test('options given as a JSON-encoded string are validated too, and valid ones are kept', async () => {
      const bad = await server.admin('POST', '/api/collections', { body: { name: 'encoded', options: JSON.stringify({ triggers: [{ action: 'nope', url: 'http://example.com/' }] }) } });
      assert.equal(bad.status, 400);
      const good = await server.admin('POST', '/api/collections', {
        body: { name: 'encoded', options: JSON.stringify({ triggers: [{ action: 'update', url: 'https://example.com/hook', method: 'patch', secret: SECRET, enabled: false }] }) },
      });
      assert.equal(good.status, 200, good.text);
      assert.equal(good.body.options.triggers[0].url, 'https://example.com/hook');
    });
  });

  describe('delivery', () => {
    before(async () => {
      await createCollection(server, {
        name: 'posts',
        fields: [
          { name: 'title', type: 'text', required: true },
          { name: 'secret_note', type: 'text', hidden: true },
        ],
        options: {
          triggers: [
            { action: 'create', url: `${receiver.url}/created`, method: 'POST', secret: SECRET, headers: { 'X-Team': 'blue' } },
            { action: 'update', url: `${receiver.url}/updated`, method: 'PUT' },
            { action: 'delete', url: `${receiver.url}/deleted`, method: 'DELETE', secret: SECRET },
            { action: 'create', url: `${receiver.url}/disabled`, method: 'POST', enabled: false },
          ],
        },
      });
    });

    test('a create reaches the receiver with the method, body, headers, JWT and signature', async () => {
      const start = receiver.requests.length;
      const created = await server.admin('POST', '/api/collections/posts/records', { body: { title: 'hello', secret_note: 'admins only' } });
      assert.equal(created.status, 200);
      const [req] = (await receiver.waitForRequests(start + 1)).slice(start);
      assert.equal(req.method, 'POST');
      assert.equal(req.path, '/created');
      assert.equal(req.headers['content-type'], 'application/json');
      assert.equal(req.headers['x-team'], 'blue');

      const body = req.json;
      assert.equal(body.event, 'record.create');
      assert.equal(body.database, 'main');
      assert.equal(body.collection, 'posts');
      assert.equal(body.record.id, created.body.id);
      assert.equal(body.record.title, 'hello');
      // The payload is the administrator's view of the record.
      assert.equal(body.record.secret_note, 'admins only');
      assert.equal(body.oldRecord, undefined);
      assert.ok(!Number.isNaN(Date.parse(body.timestamp)));

      const auth = String(req.headers.authorization);
      assert.match(auth, /^Bearer /);
      const { payload, protectedHeader } = await jwtVerify(auth.slice(7), new TextEncoder().encode(server.services.secret), { issuer: 'cairn', subject: 'webhook' });
      assert.equal(protectedHeader.alg, 'HS256');
      assert.equal(payload.evt, body.id);
      assert.equal(payload.db, 'main');
      assert.equal(payload.col, 'posts');
      assert.ok(typeof payload.exp === 'number' && payload.exp * 1000 > Date.now());

      assert.equal(req.headers['webhook-id'], body.id);
      assert.ok(Math.abs(Number(req.headers['webhook-timestamp']) - Date.now() / 1000) < 300);
      assert.ok(verifyStandardSignature(SECRET, req.headers, req.body), 'the Standard Webhooks signature verifies');
      assert.ok(!verifyStandardSignature(`whsec_${randomBytes(32).toString('base64')}`, req.headers, req.body), 'another secret does not verify');
    });

    test('a JWT signed with another secret does not verify', async () => {
      const start = receiver.requests.length;
      await server.admin('POST', '/api/collections/posts/records', { body: { title: 'forgery check' } });
      const [req] = (await receiver.waitForRequests(start + 1)).slice(start);
      const token = String(req.headers.authorization).slice(7);
      await assert.rejects(jwtVerify(token, new TextEncoder().encode('x'.repeat(48))));
    });

    test('an update sends the new and the old record with the configured method, unsigned without a secret', async () => {
      const created = await server.admin('POST', '/api/collections/posts/records', { body: { title: 'before' } });
      const start = receiver.requests.length + 1;
      await receiver.waitForRequests(start);
      const updated = await server.admin('PATCH', `/api/collections/posts/records/${created.body.id}`, { body: { title: 'after' } });
      assert.equal(updated.status, 200);
      const [req] = (await receiver.waitForRequests(start + 1)).slice(start);
      assert.equal(req.method, 'PUT');
      assert.equal(req.path, '/updated');
      assert.equal(req.json.event, 'record.update');
      assert.equal(req.json.record.title, 'after');
      assert.equal(req.json.oldRecord.title, 'before');
      assert.equal(req.headers['webhook-signature'], undefined);
      assert.equal(req.headers['webhook-timestamp'], undefined);
      assert.equal(req.headers['webhook-id'], req.json.id, 'the event id, signed or not');
      assert.match(String(req.headers.authorization), /^Bearer /);
    });

    test('a delete sends the deleted record', async () => {
      const created = await server.admin('POST', '/api/collections/posts/records', { body: { title: 'doomed' } });
      const start = receiver.requests.length + 1;
      await receiver.waitForRequests(start);
      assert.equal((await server.admin('DELETE', `/api/collections/posts/records/${created.body.id}`)).status, 204);
      const [req] = (await receiver.waitForRequests(start + 1)).slice(start);
      assert.equal(req.method, 'DELETE');
      assert.equal(req.json.event, 'record.delete');
      assert.equal(req.json.record.id, created.body.id);
      assert.equal(req.json.oldRecord.title, 'doomed');
      assert.ok(verifyStandardSignature(SECRET, req.headers, req.body));
    });

    test('disabled triggers send nothing, and every sent event is logged as a success', async () => {
      const paths = new Set(receiver.requests.map((r) => r.path));
      assert.ok(!paths.has('/disabled'));
      const logs = await waitFor(async () => {
        const res = await server.admin('GET', '/api/webhooks/logs?collection=posts&perPage=500');
        return res.body.totalItems === receiver.requests.length && res.body;
      });
      for (const log of logs.items) {
        assert.equal(log.source, 'trigger');
        assert.equal(log.status, 'success');
        assert.equal(log.statusCode, 200);
        assert.equal(log.attempt, 1);
      }
    });

    test("a write's answer is the caller's view of the record, whatever its event carries", async () => {
      await createCollection(server, {
        name: 'answers',
        fields: [
          { name: 'title', type: 'text' },
          { name: 'note', type: 'text', hidden: true },
        ],
        createRule: '',
        updateRule: '',
        options: {
          triggers: [
            { action: 'create', url: `${receiver.url}/answers`, method: 'POST' },
            { action: 'update', url: `${receiver.url}/answers`, method: 'POST' },
          ],
        },
      });
      const start = receiver.requests.length;
      // The administrator sees everything: the answer is the event's record, byte for byte as JSON.
      const byAdmin = await server.admin('POST', '/api/collections/answers/records', { body: { title: 'a', note: 'hidden' } });
      assert.equal(byAdmin.status, 200);
      assert.match(String(byAdmin.headers.get('content-type')), /^application\/json/);
      const [event] = (await receiver.waitForRequests(start + 1)).slice(start);
      assert.equal(byAdmin.text, JSON.stringify(event.json.record));
      assert.equal(byAdmin.body.note, 'hidden');

      // A guest's answers leave the hidden field out.
      const byGuest = await server.request('POST', '/api/collections/answers/records', { body: { title: 'b', note: 'secret' } });
      assert.equal(byGuest.status, 200);
      assert.equal(byGuest.body.note, undefined);
      assert.equal(byGuest.body.title, 'b');
      const patched = await server.request('PATCH', `/api/collections/answers/records/${byGuest.body.id}`, { body: { title: 'c' } });
      assert.equal(patched.status, 200);
      assert.deepEqual(Object.keys(patched.body).sort(), ['collectionId', 'collectionName', 'created', 'id', 'title', 'updated']);
      const events = (await receiver.waitForRequests(start + 3)).slice(start + 1);
      // A guest's value for a hidden field is ignored (API contract §20): the events carry the stored one.
      assert.equal(events[0].json.record.note, '');
      assert.equal(events[1].json.record.note, '');
      assert.equal(events[1].json.record.title, 'c');

      // `fields` and `expand` shape the answer as without a trigger.
      const picked = await server.admin('PATCH', `/api/collections/answers/records/${byGuest.body.id}?fields=id,title`, { body: { title: 'd' } });
      assert.deepEqual(picked.body, { id: byGuest.body.id, title: 'd' });
    });

    test('a failed validation writes no event', async () => {
      const before = await outboxCount();
      const res = await server.admin('POST', '/api/collections/posts/records', { body: { title: '' } });
      assert.equal(res.status, 400);
      assert.equal(await outboxCount(), before);
    });
  });

  test('a change rolled back after its event was written sends nothing', async () => {
    // Deleting an author clears the optional reference from `notes` (an update event for the note)
    // and then fails on the required reference from `books`: the whole delete, event included, rolls back.
    const authors = await createCollection(server, { name: 'authors', fields: [{ name: 'name', type: 'text' }] });
    await createCollection(server, {
      name: 'notes',
      fields: [
        { name: 'text', type: 'text' },
        { name: 'author', type: 'relation', options: { toCollection: 'authors', maxSelect: 1 } },
      ],
      options: { triggers: [{ action: 'update', url: `${receiver.url}/notes`, method: 'POST' }] },
    });
    await createCollection(server, {
      name: 'books',
      fields: [{ name: 'author', type: 'relation', required: true, options: { toCollection: 'authors', maxSelect: 1 } }],
    });
    const author = await server.admin('POST', '/api/collections/authors/records', { body: { name: 'Ann' } });
    const note = await server.admin('POST', '/api/collections/notes/records', { body: { text: 'n1', author: author.body.id } });
    assert.equal((await server.admin('POST', '/api/collections/books/records', { body: { author: author.body.id } })).status, 200);
    assert.ok(authors.id);

    const before = await outboxCount();
    const refused = await server.admin('DELETE', `/api/collections/authors/records/${author.body.id}`);
    assert.equal(refused.status, 400);
    assert.equal(await outboxCount(), before);

    // Events of one record reach a receiver in order: had the rolled-back update been written, it
    // would arrive before this one.
    // (Only /notes counts: an event of an earlier test, sent to another path, may still arrive now.)
    const start = receiver.requests.length;
    await server.admin('PATCH', `/api/collections/notes/records/${note.body.id}`, { body: { text: 'n2' } });
    const req = await waitFor(() => receiver.requests.slice(start).find((r) => r.path === '/notes'), { what: 'the note update event' });
    assert.equal(req.json.record.text, 'n2');
    assert.equal(req.json.record.author, author.body.id);
  });

  test('events of one record arrive in order even when the first one needs retries', async () => {
    const ordered = await startReceiver();
    try {
      ordered.respond((_req, n) => (n < 2 ? 503 : 200));
      await createCollection(server, {
        name: 'counters',
        fields: [{ name: 'n', type: 'number' }],
        options: {
          triggers: [
            { action: 'create', url: `${ordered.url}/c`, method: 'POST' },
            { action: 'update', url: `${ordered.url}/c`, method: 'POST' },
          ],
        },
      });
      const rec = await server.admin('POST', '/api/collections/counters/records', { body: { n: 0 } });
      for (let i = 1; i <= 3; i++) await server.admin('PATCH', `/api/collections/counters/records/${rec.body.id}`, { body: { n: i } });
      const requests = await ordered.waitForRequests(6);
      const delivered = requests.slice(2).map((r) => `${r.json.event}:${r.json.record.n}`);
      assert.deepEqual(delivered, ['record.create:0', 'record.update:1', 'record.update:2', 'record.update:3']);
      assert.equal(requests[0].json.id, requests[2].json.id, 'the first event was retried until it went through');
    } finally {
      await ordered.close();
    }
  });
});
