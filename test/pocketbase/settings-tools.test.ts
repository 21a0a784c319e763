import assert from 'node:assert/strict';
import { generateKeyPairSync } from 'node:crypto';
import { after, before, describe, test } from 'node:test';
import { decodeJwt, decodeProtectedHeader, importSPKI, jwtVerify } from 'jose';
import { createUser, startServer, type TestServer } from '../helpers/server.ts';

describe('settings tools: Apple client secret, S3 check', () => {
  let server: TestServer;
  let user: { token: string };
  before(async () => {
    server = await startServer();
    user = await createUser(server, 'tools-user@example.com');
  });
  after(() => server.close());

  test('an Apple client secret is an ES256 JWT of the team for the client, signed by the given key', async () => {
    const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const body = { clientId: 'com.example.app', teamId: 'TEAM123456', keyId: 'KEY1234567', privateKey: pem, duration: 3600 };
    const res = await server.admin('POST', '/api/settings/apple/generate-client-secret', { body });
    assert.equal(res.status, 200, res.text);
    const secret = res.body.secret as string;
    assert.deepEqual(decodeProtectedHeader(secret), { alg: 'ES256', kid: 'KEY1234567' });
    const { payload } = await jwtVerify(secret, await importSPKI(publicKey.export({ type: 'spki', format: 'pem' }).toString(), 'ES256'));
    assert.equal(payload.iss, 'TEAM123456');
    assert.equal(payload.sub, 'com.example.app');
    assert.equal(payload.aud, 'https://appleid.apple.com');
    assert.equal(decodeJwt(secret).exp! - decodeJwt(secret).iat!, 3600);
  });

  test('a bad Apple request names each field; only superusers may ask', async () => {
    const res = await server.admin('POST', '/api/settings/apple/generate-client-secret', { body: { clientId: '', teamId: 'short', keyId: 'short', privateKey: 'nope', duration: -1 } });
    assert.equal(res.status, 400);
    assert.deepEqual(
      Object.fromEntries(Object.entries(res.body.data).map(([k, v]) => [k, (v as { code: string }).code])),
      {
        clientId: 'validation_required',
        teamId: 'validation_length_invalid',
        keyId: 'validation_length_invalid',
        privateKey: 'validation_match_invalid',
        duration: 'validation_min_greater_equal_than_required',
      },
    );
    assert.equal((await server.request('POST', '/api/settings/apple/generate-client-secret', { body: {} })).status, 401);
    assert.equal((await server.request('POST', '/api/settings/apple/generate-client-secret', { body: {}, token: user.token })).status, 403);
  });

  test('the S3 check names a bad filesystem and says when files are not on S3', async () => {
    const missing = await server.admin('POST', '/api/settings/test/s3', { body: {} });
    assert.equal(missing.body.data.filesystem.code, 'validation_required');
    const invalid = await server.admin('POST', '/api/settings/test/s3', { body: { filesystem: 'disk' } });
    assert.equal(invalid.body.data.filesystem.code, 'validation_in_invalid');
    // Files are local and the stored s3 section is off: nothing to check.
    const local = await server.admin('POST', '/api/settings/test/s3', { body: { filesystem: 'storage' } });
    assert.equal(local.status, 400);
    assert.match(local.body.message, /not enabled/);
    assert.equal((await server.request('POST', '/api/settings/test/s3', { body: { filesystem: 'storage' }, token: user.token })).status, 403);
  });
});
