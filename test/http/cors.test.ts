import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { startServer, type TestServer } from '../helpers/server.ts';

const preflight = (server: TestServer, origin: string) =>
  server.request('OPTIONS', '/api/collections/users/records', {
    headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, x-dbname' },
  });

describe('CORS', () => {
  describe('by default every origin may call the API (bearer tokens, no cookies)', () => {
    let server: TestServer;
    before(async () => {
      server = await startServer();
    });
    after(() => server.close());

    test('answers carry Access-Control-Allow-Origin: *', async () => {
      const res = await server.request('GET', '/api/health', { headers: { origin: 'https://app.example.com' } });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('access-control-allow-origin'), '*');
    });

    test('a preflight for an authenticated write in another database is allowed without a token or database', async () => {
      const res = await preflight(server, 'https://app.example.com');
      assert.equal(res.status, 204);
      assert.equal(res.headers.get('access-control-allow-origin'), '*');
      assert.match(res.headers.get('access-control-allow-methods') ?? '', /POST/);
      assert.match(res.headers.get('access-control-allow-headers') ?? '', /authorization/i);
      assert.match(res.headers.get('access-control-allow-headers') ?? '', /x-dbname/i);
    });

    test('errors carry the header too, so a browser app can read them', async () => {
      const res = await server.request('GET', '/api/collections/nope/records', { headers: { origin: 'https://app.example.com' } });
      assert.equal(res.status, 404);
      assert.equal(res.headers.get('access-control-allow-origin'), '*');
    });
  });

  describe('CAIRN_CORS_ORIGINS narrows it', () => {
    let server: TestServer;
    before(async () => {
      server = await startServer({ env: { CAIRN_CORS_ORIGINS: 'https://app.example.com, http://localhost:5173' } });
    });
    after(() => server.close());

    test('a listed origin is echoed, another gets no allowance', async () => {
      const ok = await server.request('GET', '/api/health', { headers: { origin: 'http://localhost:5173' } });
      assert.equal(ok.headers.get('access-control-allow-origin'), 'http://localhost:5173');
      const other = await server.request('GET', '/api/health', { headers: { origin: 'https://evil.example.com' } });
      assert.equal(other.headers.get('access-control-allow-origin'), null);
      const pre = await preflight(server, 'https://evil.example.com');
      assert.equal(pre.headers.get('access-control-allow-origin'), null);
    });
  });

  test('origins are validated when the configuration loads', () => {
    assert.deepEqual(loadConfig({}, { CAIRN_CORS_ORIGINS: '*' }).corsOrigins, ['*']);
    assert.deepEqual(loadConfig({ origins: 'https://a.example.com' }, { CAIRN_CORS_ORIGINS: '*' }).corsOrigins, ['https://a.example.com']);
    for (const bad of ['app.example.com', 'https://a.example.com/path', 'ftp://a.example.com']) {
      assert.throws(() => loadConfig({}, { CAIRN_CORS_ORIGINS: bad }), /CORS origins/);
    }
  });
});
