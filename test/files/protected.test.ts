import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { SignJWT } from 'jose';
import { deriveKey } from '../../src/auth/secret.ts';
import { createCollection, createUser, startServer, type TestServer } from '../helpers/server.ts';

const PDF = '%PDF-1.4\n1 0 obj\n<<>>\nendobj\ntrailer\n<<>>\n%%EOF\n';

describe('protected files', () => {
  let server: TestServer;
  let alice: { token: string; id: string };
  let bob: { token: string; id: string };
  let record: any;

  const fileToken = async (authToken: string | null): Promise<string> => {
    const res = await server.request('POST', '/api/files/token', { token: authToken });
    assert.equal(res.status, 200, res.text);
    return res.body.token;
  };
  const download = (name: string, token?: string) =>
    server.request('GET', `/api/files/contracts/${record.id}/${name}${token === undefined ? '' : `?token=${encodeURIComponent(token)}`}`);

  before(async () => {
    server = await startServer();
    alice = await createUser(server, 'alice@example.com');
    bob = await createUser(server, 'bob@example.com');
    await createCollection(server, {
      name: 'contracts',
      fields: [
        { name: 'owner', type: 'relation', options: { toCollection: 'users' } },
        { name: 'signed', type: 'file', options: { protected: true } },
        { name: 'cover', type: 'file' },
      ],
      listRule: 'owner = @request.auth.id',
      viewRule: 'owner = @request.auth.id',
    });
    const fd = new FormData();
    fd.append('owner', alice.id);
    fd.append('signed', new Blob([PDF]), 'contract.pdf');
    fd.append('cover', new Blob(['cover text']), 'cover.txt');
    const res = await server.admin('POST', '/api/collections/contracts/records', { raw: fd });
    assert.equal(res.status, 200, res.text);
    record = res.body;
  });
  after(() => server.close());

  test('without a token a protected file is a 404 (it is not there for the caller); a public file of the same record is served', async () => {
    const res = await download(record.signed);
    assert.equal(res.status, 404);
    assert.equal(res.body.message, "The requested resource wasn't found.");
    assert.equal((await download(record.cover)).text, 'cover text');
  });

  test('the owner’s file token passes the view rule', async () => {
    const res = await download(record.signed, await fileToken(alice.token));
    assert.equal(res.status, 200, res.text);
    assert.equal(res.text, PDF);
    assert.equal(res.headers.get('content-type'), 'application/pdf');
    assert.equal(res.headers.get('cache-control'), 'private, no-store');
  });

  test('another user’s file token fails the view rule', async () => {
    assert.equal((await download(record.signed, await fileToken(bob.token))).status, 404);
  });

  test('an administrator’s file token opens every protected file', async () => {
    assert.equal((await download(record.signed, await fileToken(server.adminToken))).status, 200);
  });

  test('auth tokens, forged and expired tokens do not work as file tokens', async () => {
    assert.equal((await download(record.signed, alice.token)).status, 404);
    assert.equal((await download(record.signed, 'not-a-token')).status, 404);
    const valid = await fileToken(alice.token);
    const [h, p] = valid.split('.');
    assert.equal((await download(record.signed, `${h}.${p}.${'A'.repeat(43)}`)).status, 404);
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
    const expired = await new SignJWT({ ...claims, exp: Math.floor(Date.now() / 1000) - 10 })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .sign(deriveKey(server.services.secret, 'file'));
    assert.equal((await download(record.signed, expired)).status, 404);
    // The same claims, in date, are accepted: only the expiry made the difference.
    const fresh = await new SignJWT({ ...claims, exp: Math.floor(Date.now() / 1000) + 60 })
      .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
      .sign(deriveKey(server.services.secret, 'file'));
    assert.equal((await download(record.signed, fresh)).status, 200);
  });

  test('file tokens: 401 for guests, 403 for API keys', async () => {
    assert.equal((await server.request('POST', '/api/files/token')).status, 401);
    const key = await server.admin('POST', '/api/keys', { body: { name: 'svc', enabled: true, roles: 'service' } });
    assert.equal(key.status, 200, key.text);
    assert.equal((await server.request('POST', '/api/files/token', { token: key.body.key })).status, 403);
  });

  test('rules see a multipart body as @request.body; a refused create keeps none of its files', async () => {
    await createCollection(server, {
      name: 'gated',
      fields: [
        { name: 'title', type: 'text' },
        { name: 'doc', type: 'file' },
      ],
      createRule: '@request.body.title = "open sesame"',
    });
    const upload = (title: string) => {
      const fd = new FormData();
      fd.append('title', title);
      fd.append('doc', new Blob(['gated content']), 'gated.txt');
      return server.request('POST', '/api/collections/gated/records', { raw: fd, token: bob.token });
    };
    const refused = await upload('let me in');
    assert.equal(refused.status, 400, refused.text);
    // Not even an empty record folder is left.
    assert.deepEqual(readdirSync(path.join(server.dir, 'storage', 'main', 'gated')), []);
    const allowed = await upload('open sesame');
    assert.equal(allowed.status, 200, allowed.text);
    assert.match(allowed.body.doc, /^gated_[a-z0-9]{10}\.txt$/);
  });

  test('a password change revokes the file tokens issued before it', async () => {
    const token = await fileToken(alice.token);
    assert.equal((await download(record.signed, token)).status, 200);
    const changed = await server.admin('PATCH', `/api/collections/users/records/${alice.id}`, { body: { password: 'new-password-22', passwordConfirm: 'new-password-22' } });
    assert.equal(changed.status, 200, changed.text);
    assert.equal((await download(record.signed, token)).status, 404);
  });
});
