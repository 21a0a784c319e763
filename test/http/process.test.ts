import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { spawnServer, type SpawnedServer } from '../helpers/process.ts';
import { request } from '../helpers/server.ts';
import { waitFor } from '../helpers/wait.ts';

const ADMIN_EMAIL = 'ops@example.com';
const ADMIN_PASSWORD = 'admin-secret-PW-9c1f';
const USER_PASSWORD = 'user-secret-PW-77ab';
const QUERY_SECRET = 'query-secret-5e2d';

/** Resolves true once nothing accepts connections on the port any more. */
function refuses(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(false);
    });
    socket.once('error', () => resolve(true));
  });
}

describe('a spawned `cairn serve`: request logs and graceful shutdown', () => {
  let dir: string;
  let server: SpawnedServer;
  const secrets: string[] = [ADMIN_PASSWORD, USER_PASSWORD, QUERY_SECRET];
  let adminToken: string;

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'cairn-proc-'));
    // debug: at info, requests the request log records have no stdout line (test/logs covers that).
    server = await spawnServer(dir, { CAIRN_LOG_LEVEL: 'debug', CAIRN_ADMIN_EMAIL: ADMIN_EMAIL, CAIRN_ADMIN_PASSWORD: ADMIN_PASSWORD });
  });
  after(async () => {
    await server.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  });

  test('requests carrying secrets succeed', async () => {
    const login = await request(server.url, 'POST', '/api/admins/auth-with-password', { body: { identity: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
    assert.equal(login.status, 200);
    adminToken = login.body.token;
    secrets.push(adminToken);
    const created = await request(server.url, 'POST', '/api/collections', { token: adminToken, body: { name: 'notes', fields: [{ name: 'text', type: 'text' }], createRule: '', listRule: '' } });
    assert.equal(created.status, 200);
    const reg = await request(server.url, 'POST', '/api/auth/register', { body: { email: 'log@example.com', password: USER_PASSWORD, passwordConfirm: USER_PASSWORD } });
    assert.equal(reg.status, 200);
    const userLogin = await request(server.url, 'POST', '/api/auth/login', { body: { email: 'log@example.com', password: USER_PASSWORD } });
    assert.equal(userLogin.status, 200);
    secrets.push(userLogin.body.token);
    const withQuery = await request(server.url, 'GET', `/api/collections/notes/records?token=${QUERY_SECRET}&password=${QUERY_SECRET}`, { token: adminToken });
    assert.equal(withQuery.status, 200);
    const wrong = await request(server.url, 'POST', '/api/admins/auth-with-password', { body: { identity: ADMIN_EMAIL, password: `${ADMIN_PASSWORD}-wrong` } });
    assert.equal(wrong.status, 401);
  });

  test('a SIGTERM lets an in-flight request finish, then the process exits 0', async () => {
    const body = JSON.stringify({ text: 'written during shutdown' });
    const half = Math.floor(body.length / 2);
    let finish = () => {};
    let routed = () => {};
    const inFlight = new Promise<void>((resolve) => (routed = resolve));
    const answer = new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = httpRequest(
        {
          host: '127.0.0.1',
          port: server.port,
          method: 'POST',
          path: '/api/collections/notes/records',
          // The server answers "100 Continue" when it has read the headers and taken up the request:
          // from then on the request is in flight.
          headers: { 'content-type': 'application/json', 'content-length': body.length, authorization: adminToken, expect: '100-continue' },
        },
        (res) => {
          let text = '';
          res.on('data', (d) => (text += d));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
        },
      );
      req.on('error', reject);
      req.on('continue', () => {
        req.write(body.slice(0, half));
        routed();
      });
      // The rest is held back until the server has begun shutting down.
      finish = () => req.end(body.slice(half));
    });
    await inFlight;

    server.child.kill('SIGTERM');
    await waitFor(() => refuses(server.port), { what: 'the server to stop accepting connections' });
    finish();

    const res = await answer;
    assert.equal(res.status, 200, res.text);
    assert.equal(JSON.parse(res.text).text, 'written during shutdown');
    assert.equal(await server.exited, 0);
  });

  test('the record written during shutdown is there after a restart (databases closed cleanly)', async () => {
    const again = await spawnServer(dir, { CAIRN_LOG_LEVEL: 'warn' });
    try {
      const list = await request(again.url, 'GET', '/api/collections/notes/records', { token: adminToken });
      assert.equal(list.status, 200);
      assert.deepEqual(
        list.body.items.map((r: any) => r.text),
        ['written during shutdown'],
      );
    } finally {
      assert.equal(await again.kill('SIGINT'), 0);
    }
  });

  test('the log has one structured line per request and none of the secrets', () => {
    const out = server.output();
    const lines = out
      .split('\n')
      .filter((l) => l.startsWith('{'))
      .map((l) => JSON.parse(l));
    const requests = lines.filter((l) => l.msg === 'request');
    const login = requests.find((l) => l.url === '/api/admins/auth-with-password' && l.statusCode === 200);
    assert.ok(login, 'the admin sign-in is logged');
    assert.equal(login.method, 'POST');
    assert.equal(typeof login.ms, 'number');
    assert.ok(requests.some((l) => l.url.startsWith('/api/collections/notes/records?token=[redacted]&password=[redacted]')));
    assert.ok(lines.some((l) => l.msg === 'shutting down' && l.signal === 'SIGTERM'));
    for (const secret of secrets) assert.equal(out.includes(secret), false, `the log contains a secret: ${secret.slice(0, 12)}…`);
    assert.doesNotMatch(out, /authorization|passwordHash|\$argon2/i);
  });
});
