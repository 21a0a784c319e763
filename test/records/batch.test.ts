import assert from 'node:assert/strict';
import net from 'node:net';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import PocketBase, { ClientResponseError } from 'pocketbase';
import { startReceiver, type Receiver } from '../helpers/receiver.ts';
import { createCollection, createUser, startServer, type TestServer } from '../helpers/server.ts';
import { SseStream, subscribeRaw } from '../helpers/sse.ts';
import { waitFor } from '../helpers/wait.ts';
import { filesUnder } from '../helpers/files.ts';

/**
 * `POST /api/batch` (API contract §11) over real HTTP: the PocketBase JS SDK 0.21 has no batch API,
 * so requests are built here as the later SDKs send them (JSON, or multipart with `@jsonPayload`
 * after the files).
 */

type Req = { method: string; url: string; body?: unknown; headers?: Record<string, string> };

describe('batch writes', () => {
  let server: TestServer;
  let receiver: Receiver;
  let user: { token: string; id: string };

  const batch = (requests: unknown, options: { token?: string | null; db?: string } = {}) =>
    server.request('POST', '/api/batch', { body: { requests }, token: options.token === undefined ? server.adminToken : options.token, db: options.db });

  /** Every record of a collection, as an administrator sees it, oldest first. */
  const all = async (collection: string) => (await server.admin('GET', `/api/collections/${collection}/records?perPage=500&sort=created`)).body.items as any[];

  /** What a failed batch must leave as it was. */
  const state = async () => JSON.stringify(await Promise.all(['authors', 'books', 'notes', 'hooked'].map(all)));

  /** The failed request's own answer, checking the §11 shape (PocketBase ≥ 0.23's) on the way. */
  function failure(res: { status: number; body: any; text: string }, index: number) {
    assert.equal(res.status, 400, res.text);
    assert.equal(res.body.status, 400);
    assert.equal(res.body.code, 400);
    assert.equal(res.body.message, 'Batch transaction failed.');
    assert.deepEqual(Object.keys(res.body.data.requests), [String(index)], res.text);
    const inner = res.body.data.requests[String(index)];
    assert.deepEqual(Object.keys(inner), ['code', 'message', 'response']);
    assert.equal(inner.code, 'batch_request_failed');
    assert.equal(inner.message, 'Batch request failed.');
    const response = inner.response;
    assert.deepEqual(Object.keys(response), ['data', 'message', 'status', 'code'], "the request's own error, in PocketBase's order");
    assert.equal(response.status, response.code);
    return response as { code: number; status: number; message: string; data: any };
  }

  before(async () => {
    server = await startServer({ env: { CAIRN_WEBHOOK_BACKOFF_MS: '50', CAIRN_WEBHOOK_TIMEOUT_MS: '2000' } });
    receiver = await startReceiver();
    const open = { listRule: '', viewRule: '', createRule: '', updateRule: '', deleteRule: '' };
    await createCollection(server, { name: 'authors', ...open, fields: [{ name: 'name', type: 'text', required: true, unique: true }] });
    await createCollection(server, {
      name: 'books',
      ...open,
      fields: [
        { name: 'title', type: 'text', required: true },
        { name: 'pages', type: 'number' },
        { name: 'author', type: 'relation', options: { toCollection: 'authors', maxSelect: 1 } },
        { name: 'cover', type: 'file', options: { maxSelect: 1, maxSize: 1000 } },
        { name: 'scans', type: 'file', options: { maxSelect: 5, maxSize: 1000 } },
      ],
    });
    // Users may write notes, but not ones titled "forbidden", and only with the right header.
    await createCollection(server, {
      name: 'notes',
      listRule: '',
      viewRule: '',
      createRule: '@request.body.title != "forbidden" && @request.headers.x_client = "app"',
      updateRule: 'title != "frozen"',
      deleteRule: null,
      fields: [{ name: 'title', type: 'text' }],
    });
    await createCollection(server, {
      name: 'hooked',
      ...open,
      fields: [{ name: 'title', type: 'text' }],
      options: {
        triggers: ['create', 'update', 'delete'].map((action) => ({ action, url: `${receiver.url}/hook`, method: 'POST' })),
      },
    });
    user = await createUser(server, 'batcher@example.com');
  });
  after(async () => {
    await server.close();
    await receiver.close();
  });

  test('creates, updates, deletes and upserts across two collections commit together, answered in order', async () => {
    const kept = (await server.admin('POST', '/api/collections/authors/records', { body: { name: 'Kept' } })).body;
    const gone = (await server.admin('POST', '/api/collections/authors/records', { body: { name: 'Gone' } })).body;
    const old = (await server.admin('POST', '/api/collections/books/records', { body: { title: 'Old', pages: 1 } })).body;
    const res = await batch([
      { method: 'POST', url: '/api/collections/authors/records', body: { id: 'newauthor000001', name: 'Ada' } },
      // A relation to a record created by the request before it, in the same transaction.
      { method: 'POST', url: '/api/collections/books/records?expand=author', body: { title: 'Notes', author: 'newauthor000001' } },
      { method: 'PATCH', url: `/api/collections/books/records/${old.id}?fields=id,title,pages`, body: { title: 'Old, revised', 'pages+': 2 } },
      { method: 'DELETE', url: `/api/collections/authors/records/${gone.id}` },
      { method: 'PUT', url: '/api/collections/books/records', body: { id: 'upsertedbook001', title: 'Upserted' } },
      { method: 'put', url: '/api/collections/authors/records', body: { id: kept.id, name: 'Kept, renamed' } },
    ]);
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(
      res.body.map((r: any) => r.status),
      [200, 200, 200, 204, 200, 200],
    );
    assert.equal(res.body[0].body.id, 'newauthor000001');
    assert.equal(res.body[0].body.collectionName, 'authors');
    assert.equal(res.body[1].body.expand.author.name, 'Ada', 'expand is honoured');
    assert.deepEqual(res.body[2].body, { id: old.id, title: 'Old, revised', pages: 3 }, 'fields is honoured');
    assert.equal(res.body[3].body, null);
    assert.equal(res.body[4].body.id, 'upsertedbook001');
    assert.equal(res.body[5].body.name, 'Kept, renamed');

    const authors = (await all('authors')).map((a) => a.name);
    assert.ok(authors.includes('Ada') && authors.includes('Kept, renamed') && !authors.includes('Gone') && !authors.includes('Kept'));
    assert.equal((await server.admin('GET', `/api/collections/authors/records/${gone.id}`)).status, 404);
    const books = await all('books');
    assert.equal(books.find((b) => b.title === 'Notes').author, 'newauthor000001');
    assert.equal(books.find((b) => b.id === old.id).pages, 3);
    assert.ok(books.some((b) => b.id === 'upsertedbook001'));
  });

  test('upserts of one new id sent at once: each 200, one record, holding one of the values', async () => {
    const replies = await Promise.all(Array.from({ length: 12 }, (_, i) => batch([{ method: 'PUT', url: '/api/collections/books/records', body: { id: 'racingupsert001', title: `Take ${i}`, pages: i } }])));
    assert.deepEqual([...new Set(replies.map((r) => r.status))], [200], replies.map((r) => r.text).join('\n'));
    const books = (await all('books')).filter((b) => b.id === 'racingupsert001');
    assert.equal(books.length, 1);
    assert.equal(books[0].title, `Take ${books[0].pages}`, 'one whole upsert, not a mix');
  });

  test('one failing request changes nothing and is named by its index', async () => {
    const book = (await server.admin('POST', '/api/collections/books/records', { body: { title: 'Untouched' } })).body;
    const before = await state();
    const valid: Req[] = [
      { method: 'POST', url: '/api/collections/authors/records', body: { name: 'Would-be' } },
      { method: 'PATCH', url: `/api/collections/books/records/${book.id}`, body: { title: 'Changed' } },
      { method: 'POST', url: '/api/collections/hooked/records', body: { title: 'would fire' } },
    ];

    // Validation (before the transaction).
    let inner = failure(await batch([...valid, { method: 'POST', url: '/api/collections/books/records', body: { title: '' } }]), 3);
    assert.equal(inner.code, 400);
    assert.equal(inner.data.title.code, 'validation_required');

    // A unique violation, inside the transaction after the first three were written.
    inner = failure(await batch([...valid, { method: 'POST', url: '/api/collections/authors/records', body: { name: 'Would-be' } }]), 3);
    assert.equal(inner.data.name.code, 'validation_not_unique');

    // A relation to a record that does not exist, and a delete of one that does not.
    inner = failure(await batch([...valid, { method: 'POST', url: '/api/collections/books/records', body: { title: 'x', author: 'nosuchauthor000' } }]), 3);
    assert.equal(inner.data.author.code, 'validation_missing_rel_records');
    inner = failure(await batch([...valid, { method: 'DELETE', url: '/api/collections/books/records/nosuchbook00000' }]), 3);
    assert.equal(inner.code, 404);

    // The middle one failing.
    inner = failure(await batch([valid[0], { method: 'PATCH', url: `/api/collections/books/records/${book.id}`, body: { pages: 'many' } }, valid[2]]), 1);
    assert.equal(inner.data.pages.code, 'validation_invalid_number');

    assert.equal(await state(), before, 'nothing of a failed batch is left');
    // The same batch, fixed, commits.
    assert.equal((await batch(valid)).status, 200);
    assert.notEqual(await state(), before);
  });

  test('rules are checked per request as the caller: one forbidden request fails the batch', async () => {
    const before = await state();
    const ok: Req = { method: 'POST', url: '/api/collections/notes/records', body: { title: 'fine' }, headers: { 'X-Client': 'app' } };

    // The create rule reads the request's own body and headers.
    const good = await batch([ok, { ...ok, body: { title: 'also fine' } }], { token: user.token });
    assert.equal(good.status, 200, good.text);
    const [first] = good.body;

    let inner = failure(await batch([ok, { ...ok, body: { title: 'forbidden' } }], { token: user.token }), 1);
    assert.equal(inner.code, 400);
    inner = failure(await batch([ok, { ...ok, headers: {} }], { token: user.token }), 1);
    assert.equal(inner.code, 400);
    // A null rule: administrators only.
    inner = failure(await batch([ok, { method: 'DELETE', url: `/api/collections/notes/records/${first.body.id}` }], { token: user.token }), 1);
    assert.equal(inner.code, 403);
    // Guests too; and the Authorization header of a request inside the batch changes nothing.
    inner = failure(await batch([{ ...ok, headers: { 'x-client': 'app', authorization: server.adminToken } }, { method: 'DELETE', url: `/api/collections/notes/records/${first.body.id}`, headers: { Authorization: server.adminToken } }], { token: null }), 1);
    assert.equal(inner.code, 403);
    // An update rule that does not hold is a 404, as for a single request.
    const frozen = (await server.admin('POST', '/api/collections/notes/records', { body: { title: 'frozen' } })).body;
    inner = failure(await batch([ok, { method: 'PATCH', url: `/api/collections/notes/records/${frozen.id}`, body: { title: 'thawed' } }], { token: user.token }), 1);
    assert.equal(inner.code, 404);

    const notes = await all('notes');
    assert.deepEqual(notes.map((n) => n.title).sort(), ['also fine', 'fine', 'frozen']);
    assert.equal(JSON.stringify(JSON.parse(before)[1]), JSON.stringify(await all('books')));
  });

  test('_superusers in a batch: 403 for anyone but an administrator (as PocketBase), and nothing is written', async () => {
    const admins = async () => (await server.admin('GET', '/api/collections/_superusers/records')).body.totalItems as number;
    const count = await admins();
    const before = await state();
    const ok: Req = { method: 'POST', url: '/api/collections/authors/records', body: { name: 'Not with a superuser' } };
    const create = { method: 'POST', url: '/api/collections/_superusers/records', body: { email: 'batch-admin@example.com', password: '1234567890', passwordConfirm: '1234567890' } };
    for (const token of [user.token, null]) {
      const inner = failure(await batch([ok, create], { token }), 1);
      assert.equal(inner.status, 403);
      assert.equal(inner.message, 'Only superusers can perform this action.');
    }
    // By its id too, and for the other writes.
    const byId = failure(await batch([{ method: 'DELETE', url: `/api/collections/pbc_3142635823/records/${user.id}` }], { token: user.token }), 0);
    assert.equal(byId.status, 403);
    // Administrators live outside the batch's database: an administrator's write there is refused, not made apart.
    const own = failure(await batch([ok, create]), 1);
    assert.equal(own.status, 400);
    assert.match(own.message, /_superusers/);
    assert.equal(await admins(), count);
    assert.equal(await state(), before);
  });

  test('auth records: passwords are hashed and work; an admin-only field from a user fails the batch', async () => {
    const res = await batch([
      { method: 'POST', url: '/api/collections/users/records', body: { email: 'b1@example.com', password: 'batch-password-1', passwordConfirm: 'batch-password-1' } },
      { method: 'POST', url: '/api/collections/users/records', body: { id: 'batchuser000002', email: 'b2@example.com', password: 'batch-password-2', passwordConfirm: 'batch-password-2' } },
      // Updating the user the request before created: prepared inside the transaction.
      { method: 'PATCH', url: '/api/collections/users/records/batchuser000002', body: { password: 'batch-password-3', passwordConfirm: 'batch-password-3' } },
    ]);
    assert.equal(res.status, 200, res.text);
    assert.ok(!res.text.includes('passwordHash') && !res.text.includes('tokenKey'));
    const login = (email: string, password: string) => server.request('POST', '/api/auth/login', { body: { email, password } });
    assert.equal((await login('b1@example.com', 'batch-password-1')).status, 200);
    assert.equal((await login('b2@example.com', 'batch-password-3')).status, 200);
    assert.equal((await login('b2@example.com', 'batch-password-2')).status, 401);

    const inner = failure(await batch([{ method: 'PATCH', url: `/api/collections/users/records/${user.id}`, body: { verified: true } }], { token: user.token }), 0);
    assert.equal(inner.data.verified.code, 'validation_admin_only');
  });

  test('files in a multipart batch land on the right records; a failed batch keeps none', async () => {
    const storage = path.join(server.dir, 'storage');
    const form = new FormData();
    // As the later SDKs send it: the files first, `@jsonPayload` last.
    form.append('requests.0.cover', new Blob(['cover of zero']), 'zero.txt');
    form.append('requests.1.cover', new Blob(['cover of one']), 'one.txt');
    form.append('requests[1].scans', new Blob(['scan a']), 'a.txt');
    form.append('requests.1.scans', new Blob(['scan b']), 'b.txt');
    form.append('requests.0.nofield', new Blob(['ignored']), 'ignored.txt');
    form.append(
      '@jsonPayload',
      JSON.stringify({
        requests: [
          { method: 'POST', url: '/api/collections/books/records', body: { title: 'Zero' } },
          { method: 'POST', url: '/api/collections/books/records', body: { title: 'One' } },
        ],
      }),
    );
    const res = await server.admin('POST', '/api/batch', { raw: form });
    assert.equal(res.status, 200, res.text);
    const [zero, one] = res.body.map((r: any) => r.body);
    assert.match(zero.cover, /^zero_\w+\.txt$/);
    assert.match(one.cover, /^one_\w+\.txt$/);
    assert.equal(one.scans.length, 2);
    const download = async (record: any, name: string) => (await server.request('GET', `/api/files/books/${record.id}/${name}`)).text;
    assert.equal(await download(zero, zero.cover), 'cover of zero');
    assert.equal(await download(one, one.cover), 'cover of one');
    assert.deepEqual((await Promise.all(one.scans.map((n: string) => download(one, n)))).sort(), ['scan a', 'scan b']);
    assert.deepEqual(filesUnder(path.join(storage, 'main', 'books', zero.id)), [zero.cover]);
    assert.deepEqual(filesUnder(path.join(storage, '.staging')), [], 'nothing left in staging');

    // The second request fails (a file over the field's maxSize): no file of the batch is kept.
    const before = filesUnder(storage);
    const failing = new FormData();
    failing.append('requests.0.cover', new Blob(['fine']), 'fine.txt');
    failing.append('requests.1.cover', new Blob(['x'.repeat(2000)]), 'big.txt');
    failing.append('@jsonPayload', JSON.stringify({ requests: [{ method: 'POST', url: '/api/collections/books/records', body: { title: 'F0' } }, { method: 'POST', url: '/api/collections/books/records', body: { title: 'F1' } }] }));
    const inner = failure(await server.admin('POST', '/api/batch', { raw: failing }), 1);
    assert.equal(inner.data.cover.code, 'validation_file_size_limit');
    // Failing inside the transaction, after the first request's file was stored.
    const late = new FormData();
    late.append('requests.0.cover', new Blob(['fine']), 'fine.txt');
    late.append('@jsonPayload', JSON.stringify({ requests: [{ method: 'POST', url: '/api/collections/books/records', body: { title: 'L0' } }, { method: 'DELETE', url: '/api/collections/books/records/nosuchbook00000' }] }));
    assert.equal(failure(await server.admin('POST', '/api/batch', { raw: late }), 1).code, 404);
    assert.deepEqual(filesUnder(storage), before);
    assert.ok(!(await all('books')).some((b) => ['F0', 'F1', 'L0'].includes(b.title)));

    // Files for a request the batch does not hold, stray form fields, no payload: 400s.
    const stray = new FormData();
    stray.append('requests.3.cover', new Blob(['x']), 'x.txt');
    stray.append('@jsonPayload', JSON.stringify({ requests: [{ method: 'POST', url: '/api/collections/books/records', body: { title: 'S' } }] }));
    failure(await server.admin('POST', '/api/batch', { raw: stray }), 3);
    const field = new FormData();
    field.append('title', 'x');
    field.append('@jsonPayload', JSON.stringify({ requests: [{ method: 'POST', url: '/api/collections/books/records', body: { title: 'S' } }] }));
    assert.equal((await server.admin('POST', '/api/batch', { raw: field })).status, 400);
    const none = new FormData();
    none.append('requests.0.cover', new Blob(['x']), 'x.txt');
    assert.equal((await server.admin('POST', '/api/batch', { raw: none })).status, 400);
    assert.deepEqual(filesUnder(storage), before);
  });

  test('a multipart batch larger than a stream buffer is read whole; a client gone mid-body leaves the server serving', async () => {
    // 200 KB of form: more than the buffers of a second reader of the body, which stalled it once.
    const form = new FormData();
    form.append('requests.0.cover', new Blob(['a cover']), 'cover.txt');
    form.append('@jsonPayload', JSON.stringify({ requests: [{ method: 'POST', url: '/api/collections/books/records', body: { title: 'Big form', padding: 'x'.repeat(200_000) } }] }));
    const res = await fetch(`${server.url}/api/batch`, { method: 'POST', body: form, headers: { authorization: server.adminToken }, signal: AbortSignal.timeout(15_000) });
    assert.equal(res.status, 200, await res.clone().text());
    const [made] = (await res.json()) as { body: { title: string; cover: string } }[];
    assert.equal(made.body.title, 'Big form');
    assert.match(made.body.cover, /^cover_\w+\.txt$/);

    // A body cut off after 100 KB of a declared megabyte, as multipart and as JSON.
    for (const type of ['multipart/form-data; boundary=cut', 'application/json']) {
      const socket = net.connect(Number(new URL(server.url).port), '127.0.0.1');
      await new Promise((resolve) => socket.once('connect', resolve));
      socket.write(`POST /api/batch HTTP/1.1\r\nHost: x\r\nContent-Type: ${type}\r\nContent-Length: 1000000\r\n\r\n`);
      socket.write(type.startsWith('multipart') ? `--cut\r\nContent-Disposition: form-data; name="@jsonPayload"\r\n\r\n${'x'.repeat(100_000)}` : `{"requests": [${' '.repeat(100_000)}`);
      await waitFor(() => server.host.pending().requests === 1, { what: 'the cut request to reach the server' });
      socket.destroy();
      await new Promise((resolve) => socket.once('close', resolve));
      await waitFor(() => server.host.pending().requests === 0, { what: 'the cut request to end' });
    }
    assert.equal((await server.request('GET', '/api/health')).status, 200);
    assert.equal((await server.admin('GET', '/api/collections/books/records?perPage=1')).status, 200);
  });

  test('webhooks fire once per committed change, in request order, and never for a failed batch', async () => {
    const db = await server.services.registry.get('main');
    const outbox = () => db.all<{ id: string; k: string }>('SELECT id, orderKey AS k FROM _webhook_outbox ORDER BY seq');
    const seen = (await outbox()).length;
    const existing = (await server.admin('POST', '/api/collections/hooked/records', { body: { title: 'existing' } })).body;

    // A failed batch: its outbox rows roll back with it.
    const failed = await batch([
      { method: 'POST', url: '/api/collections/hooked/records', body: { title: 'never' } },
      { method: 'PATCH', url: `/api/collections/hooked/records/${existing.id}`, body: { title: 'never either' } },
      { method: 'POST', url: '/api/collections/books/records', body: { title: '' } },
    ]);
    failure(failed, 2);
    const failedLate = await batch([
      { method: 'POST', url: '/api/collections/hooked/records', body: { title: 'never' } },
      { method: 'DELETE', url: '/api/collections/hooked/records/nosuchrecord000' },
    ]);
    failure(failedLate, 1);
    assert.equal((await outbox()).length, seen + 1);

    const res = await batch([
      { method: 'POST', url: '/api/collections/hooked/records', body: { id: 'hookedrecord001', title: 'one' } },
      { method: 'PATCH', url: '/api/collections/hooked/records/hookedrecord001', body: { title: 'one, updated' } },
      { method: 'POST', url: '/api/collections/hooked/records', body: { id: 'hookedrecord002', title: 'two' } },
      { method: 'DELETE', url: `/api/collections/hooked/records/${existing.id}` },
      { method: 'POST', url: '/api/collections/books/records', body: { title: 'no trigger here' } },
    ]);
    assert.equal(res.status, 200, res.text);
    const events = (await outbox()).slice(seen + 1);
    assert.deepEqual(
      events.map((e) => e.k.split(' ')[0].split('/')[1]),
      ['hookedrecord001', 'hookedrecord001', 'hookedrecord002', existing.id],
      'one event per change, in request order',
    );

    // Every event ever written is delivered and logged; then nothing else is on its way.
    const written = (await outbox()).length;
    await waitFor(async () => receiver.requests.length >= written && (await server.admin('GET', '/api/webhooks/logs?perPage=1')).body.totalItems >= written);
    const got = receiver.requests.filter((r) => events.some((e) => e.id === r.json?.id));
    assert.equal(got.length, 4, 'each event delivered once');
    const byId = new Map(got.map((r) => [r.json.id, r.json]));
    assert.deepEqual(
      events.map((e) => [byId.get(e.id)?.event, byId.get(e.id)?.record.title]),
      [
        ['record.create', 'one'],
        ['record.update', 'one, updated'],
        ['record.create', 'two'],
        ['record.delete', 'existing'],
      ],
    );
    assert.equal(new Set(receiver.requests.map((r) => r.json?.id)).size, receiver.requests.length, 'no event delivered twice');
    assert.ok(!receiver.requests.some((r) => r.body.includes('never')), 'nothing of the failed batches');
  });

  test('realtime subscribers see a committed batch, change by change in request order, and nothing of a failed one', async () => {
    const stream = await SseStream.open(server.url);
    try {
      assert.equal((await subscribeRaw(server.url, stream.clientId, ['hooked'])).status, 204);
      failure(
        await batch([
          { method: 'POST', url: '/api/collections/hooked/records', body: { id: 'realtimenever01', title: 'never' } },
          { method: 'DELETE', url: '/api/collections/hooked/records/nosuchrecord000' },
        ]),
        1,
      );
      const res = await batch([
        { method: 'POST', url: '/api/collections/hooked/records', body: { id: 'realtimerecord1', title: 'first' } },
        { method: 'POST', url: '/api/collections/hooked/records', body: { id: 'realtimerecord2', title: 'second' } },
        { method: 'PATCH', url: '/api/collections/hooked/records/realtimerecord1', body: { title: 'first, updated' } },
        { method: 'DELETE', url: '/api/collections/hooked/records/realtimerecord2' },
      ]);
      assert.equal(res.status, 200, res.text);
      const seen = await waitFor(() => stream.messages().length >= 4 && stream.messages());
      // Realtime shows each record as it is when the message goes out (docs/realtime.md), so only the
      // changes' order and the last state are compared.
      assert.deepEqual(
        seen.map((m) => `${m.action} ${m.record.id}`),
        ['create realtimerecord1', 'create realtimerecord2', 'update realtimerecord1', 'delete realtimerecord2'],
      );
      assert.equal(seen[2].record.title, 'first, updated');
      assert.ok(!seen.some((m) => m.record.id === 'realtimenever01'));
    } finally {
      stream.close();
    }
  });

  test(`at most CAIRN_BATCH_MAX_REQUESTS requests (50 by default)`, async () => {
    const creates = (n: number) => Array.from({ length: n }, (_, i) => ({ method: 'POST', url: '/api/collections/authors/records', body: { name: `Many ${n}-${i}` } }));
    const count = async () => (await all('authors')).length;
    const before = await count();
    const tooMany = await batch(creates(51));
    assert.equal(tooMany.status, 400, tooMany.text);
    assert.match(tooMany.body.message, /at most 50 requests/);
    assert.equal(tooMany.body.data.requests.code, 'validation_too_many_requests');
    assert.equal(await count(), before);
    const fifty = await batch(creates(50));
    assert.equal(fifty.status, 200, fifty.text);
    assert.equal(fifty.body.length, 50);
    assert.equal(await count(), before + 50);
  });

  test('malformed batches and requests outside the allowed set are 400s naming the index', async () => {
    const before = await state();
    const good: Req = { method: 'POST', url: '/api/collections/authors/records', body: { name: 'Never written' } };
    const cases: Array<[string, unknown, string?]> = [
      ['a request that is not an object', 'POST /api/collections/authors/records'],
      ['a method that is not a string', { method: 1, url: good.url }, 'method'],
      ['no url', { method: 'POST' }, 'url'],
      ['a body that is not an object', { ...good, body: [1, 2] }, 'body'],
      ['a body that is JSON text', { ...good, body: '{"name":"x"}' }, 'body'],
      ['headers that are not strings', { ...good, headers: { 'x-a': 1 } }, 'headers'],
      ['a list', { method: 'GET', url: '/api/collections/authors/records' }, 'url'],
      ['a view', { method: 'GET', url: '/api/collections/authors/records/abc' }, 'url'],
      ['a collection write', { method: 'POST', url: '/api/collections', body: { name: 'x' } }, 'url'],
      ['a nested batch', { method: 'POST', url: '/api/batch', body: { requests: [good] } }, 'url'],
      ['a path climbing out', { method: 'POST', url: '/api/collections/authors/records/../../../batch' }, 'url'],
      ['another host', { method: 'POST', url: 'http://example.com/api/collections/authors/records' }, 'url'],
      ['an update without an id', { method: 'PATCH', url: '/api/collections/authors/records' }, 'url'],
      ['a create with an id in the path', { method: 'POST', url: '/api/collections/authors/records/abc' }, 'url'],
      ['an auth route', { method: 'POST', url: '/api/collections/users/auth-with-password', body: {} }, 'url'],
      ['a bad percent-encoding', { method: 'POST', url: '/api/collections/%E0%A4%A/records' }, 'url'],
    ];
    for (const [what, request, key] of cases) {
      const inner = failure(await batch([good, request]), 1);
      assert.equal(inner.code, 400, what);
      if (key) assert.ok(inner.data[key], `${what}: ${JSON.stringify(inner)}`);
    }
    const unknown = failure(await batch([good, { method: 'POST', url: '/api/collections/nope/records', body: {} }]), 1);
    assert.equal(unknown.code, 404);
    assert.match(unknown.message, /nope/);
    const view = failure(await batch([good, { method: 'PATCH', url: `/api/collections/authors/records/nosuchauthor000?expand=${encodeURIComponent('a;b')}` }]), 1);
    assert.equal(view.code, 400, 'a malformed expand refuses the write before it is made');

    for (const body of [{}, { requests: 'x' }, { requests: {} }, { requests: [] }, []]) {
      const res = await server.admin('POST', '/api/batch', { body });
      assert.equal(res.status, 400, JSON.stringify(body));
      assert.ok(res.body.data.requests, res.text);
    }
    const malformed = await server.admin('POST', '/api/batch', { raw: '{"requests": [', headers: { 'content-type': 'application/json' } });
    assert.equal(malformed.status, 400);
    const badPayload = new FormData();
    badPayload.append('@jsonPayload', '{"requests": [');
    assert.equal((await server.admin('POST', '/api/batch', { raw: badPayload })).status, 400);

    const missingDb = await batch([good], { db: 'nosuchdb' });
    assert.equal(missingDb.status, 404);
    assert.match(missingDb.body.message, /nosuchdb/);
    assert.equal(await state(), before);
  });

  test("the PocketBase SDK 0.21's send() carries a batch, files included (as docs/api.md shows)", async () => {
    const pb = new PocketBase(server.url);
    await pb.collection('users').authWithPassword('batcher@example.com', 'user-password-1');
    const results = await pb.send('/api/batch', {
      method: 'POST',
      headers: { 'x-client': 'app' },
      body: { requests: [{ method: 'POST', url: '/api/collections/notes/records', body: { title: 'via the SDK' }, headers: { 'x-client': 'app' } }] },
    });
    assert.equal(results[0].status, 200);
    assert.equal(results[0].body.title, 'via the SDK');

    // A Blob among the body's values makes the SDK send multipart, the rest as `@jsonPayload`.
    const withFile = await pb.send('/api/batch', {
      method: 'POST',
      body: {
        requests: [{ method: 'POST', url: '/api/collections/books/records', body: { title: 'SDK cover' } }],
        'requests.0.cover': new Blob(['sdk cover']),
      },
    });
    assert.equal(typeof withFile[0].body.cover, 'string');
    assert.equal((await server.request('GET', `/api/files/books/${withFile[0].body.id}/${withFile[0].body.cover}`)).text, 'sdk cover');

    await assert.rejects(
      pb.send('/api/batch', { method: 'POST', body: { requests: [{ method: 'POST', url: '/api/collections/notes/records', body: { title: 'forbidden' }, headers: { 'x-client': 'app' } }] } }),
      (err: unknown) => err instanceof ClientResponseError && err.status === 400 && err.response.data.requests['0'].code === 'batch_request_failed' && err.response.data.requests['0'].response.status === 400,
    );
  });

  test('a batch runs in the x-dbname database', async () => {
    assert.equal((await server.admin('POST', '/api/databases', { body: { name: 'second' } })).status, 200);
    await createCollection(server, { name: 'authors', listRule: '', viewRule: '', createRule: '', fields: [{ name: 'name', type: 'text' }] }, 'second');
    const res = await batch([{ method: 'POST', url: '/api/collections/authors/records', body: { name: 'In second' } }], { db: 'second' });
    assert.equal(res.status, 200, res.text);
    assert.equal((await server.admin('GET', `/api/collections/authors/records/${res.body[0].body.id}`, { db: 'second' })).status, 200);
    assert.equal((await server.admin('GET', `/api/collections/authors/records/${res.body[0].body.id}`)).status, 404);
  });
});
