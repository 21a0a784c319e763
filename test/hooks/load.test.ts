import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { freePort, runCli, spawnServer } from '../helpers/process.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, request } from '../helpers/server.ts';
import { SseStream, subscribeRaw } from '../helpers/sse.ts';
import { waitFor } from '../helpers/wait.ts';
import { type AppDir, appDir } from './app-dir.ts';

/** `cairn serve` with these hook files: what it printed and how it ended, when it does not start. */
async function serveFails(files: Record<string, string>): Promise<{ code: number | null; stderr: string; app: AppDir }> {
  const app = appDir(files);
  const dir = mkdtempSync(path.join(tmpdir(), 'cairn-hooks-load-'));
  try {
    const result = await runCli(['serve', '--dir', dir, '--port', String(await freePort()), '--hooks', app.hooks]);
    return { code: result.code, stderr: result.stderr, app };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('hooks: loading', () => {
  const apps: AppDir[] = [];
  after(() => {
    for (const app of apps) app.remove();
  });

  test('a syntax error stops the start with the file and line', async () => {
    const { code, stderr, app } = await serveFails({ 'a.ts': 'export default (app) => {\n  const x = ;\n};\n' });
    apps.push(app);
    assert.equal(code, 1);
    assert.ok(stderr.includes(`${path.join(app.hooks, 'a.ts')}:2:`), stderr);
  });

  test('an import that does not resolve stops the start with the importing file and line', async () => {
    const { code, stderr, app } = await serveFails({ 'b.ts': "import 'cairn';\nimport nope from 'no-such-package-anywhere';\nexport default () => nope;\n" });
    apps.push(app);
    assert.equal(code, 1);
    assert.ok(stderr.includes(`${path.join(app.hooks, 'b.ts')}:2:`), stderr);
    assert.match(stderr, /no-such-package-anywhere/);
  });

  test('a throw while registering stops the start with the file and line, through local modules', async () => {
    const { code, stderr, app } = await serveFails({
      'c.ts': "import { setUp } from './lib/set-up.ts';\nexport default (app: any) => setUp(app);\n",
      'lib/set-up.ts': "export function setUp(app: any) {\n  app.cronAdd('bad', 'not a schedule', () => {});\n}\n",
    });
    apps.push(app);
    assert.equal(code, 1);
    assert.ok(stderr.includes(`${path.join(app.hooks, 'lib/set-up.ts')}:2:`), stderr);
    assert.match(stderr, /cronAdd bad/);
  });

  test('a file without a default export function is refused, named', async () => {
    const { code, stderr, app } = await serveFails({ 'd.mjs': 'export const notDefault = 1;\n' });
    apps.push(app);
    assert.equal(code, 1);
    assert.ok(stderr.includes(path.join(app.hooks, 'd.mjs')), stderr);
    assert.match(stderr, /default export must be a function/);
  });

  test('an OPTIONS route is refused (CORS answers preflights), named', async () => {
    const { code, stderr, app } = await serveFails({ 'f.ts': "export default (app: any) => app.routerAdd('OPTIONS', '/api/x', (e: any) => e.noContent());\n" });
    apps.push(app);
    assert.equal(code, 1);
    assert.match(stderr, /unknown method "OPTIONS"/);
  });

  test("a route that shadows one of Cairn's refuses the start, naming both", async () => {
    const { code, stderr, app } = await serveFails({ 'e.ts': "export default (app: any) => app.routerAdd('GET', '/api/collections/{c}/records', (e: any) => e.noContent());\n" });
    apps.push(app);
    assert.equal(code, 1);
    assert.match(stderr, /GET \/api\/collections\/\{c\}\/records .* shadows Cairn's GET \/api\/collections\/:collection\/records/);
  });
});

const V1 = `
export default (app: any) => {
  app.routerAdd('GET', '/api/version', (e: any) => e.json(200, { v: 1 }));
  app.onRecordCreate(async (e: any) => { e.record.tag = 'v1'; await e.next(); }, 'things');
};
`;
const V2 = V1.replace(/v: 1/, 'v: 2').replace("'v1'", "'v2'");

describe('hooks: development mode', () => {
  test('--dev reloads changed hooks without dropping connections; a broken edit keeps the previous hooks', async () => {
    const app = appDir({ 'dev.ts': V1 });
    const dir = mkdtempSync(path.join(tmpdir(), 'cairn-hooks-dev-'));
    const server = await spawnServer(dir, { CAIRN_ADMIN_EMAIL: ADMIN_EMAIL, CAIRN_ADMIN_PASSWORD: ADMIN_PASSWORD }, ['--dev', '--hooks', app.hooks]);
    let stream: SseStream | undefined;
    try {
      const login = await request(server.url, 'POST', '/api/admins/auth-with-password', { body: { identity: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
      const token = login.body.token as string;
      const created = await request(server.url, 'POST', '/api/collections', { token, body: { name: 'things', listRule: '', viewRule: '', createRule: '', fields: [{ name: 'tag', type: 'text' }] } });
      assert.equal(created.status, 200, created.text);
      assert.deepEqual((await request(server.url, 'GET', '/api/version')).body, { v: 1 });

      // A realtime stream stays open across the reloads: the server itself is never restarted.
      stream = await SseStream.open(server.url);
      assert.equal((await subscribeRaw(server.url, stream.clientId, ['things'])).status, 204);

      app.write('dev.ts', V2);
      await waitFor(async () => (await request(server.url, 'GET', '/api/version')).body.v === 2, { what: 'the edited hooks to load', timeoutMs: 20_000 });
      const rec = await request(server.url, 'POST', '/api/collections/things/records', { body: {} });
      assert.equal(rec.body.tag, 'v2');
      const event = await stream.next((e) => e.event === 'things', 'the create event on the stream opened before the reload');
      assert.equal(JSON.parse(event.data).record.tag, 'v2');

      app.write('dev.ts', 'export default (app: any) => {\n  app.routerAdd(\n};\n');
      const status = await waitFor(
        async () => {
          const s = await request(server.url, 'GET', '/api/hooks', { token });
          return s.body.lastError ? s.body : undefined;
        },
        { what: 'the broken edit to be reported', timeoutMs: 20_000 },
      );
      assert.equal(status.lastError.file, path.join(app.hooks, 'dev.ts'));
      assert.equal(status.lastError.line, 3);
      assert.deepEqual((await request(server.url, 'GET', '/api/version')).body, { v: 2 }, 'the previous hooks still serve');
      // The log is written in batches (every 250 ms at most).
      await waitFor(() => /hooks not reloaded/.test(server.output()), { what: 'the failed reload in the log' });

      app.write('dev.ts', V1);
      await waitFor(async () => (await request(server.url, 'GET', '/api/version')).body.v === 1, { what: 'the fixed hooks to load', timeoutMs: 20_000 });
      assert.equal((await request(server.url, 'GET', '/api/hooks', { token })).body.lastError, null);
    } finally {
      stream?.close();
      await server.kill();
      rmSync(dir, { recursive: true, force: true });
      app.remove();
    }
  });
});

describe('hooks: cron and the server log', () => {
  test('cronAdd runs its job on its schedule; cronRemove removes one; logs name the hook file', async () => {
    const app = appDir({
      'cron.ts': `
export default (app: any) => {
  app.cronAdd('tick', '@every 1s', async () => {
    await app.records().create('ticks', { at: new Date().toISOString() });
  });
  app.cronAdd('gone', '@every 1s', async () => { await app.records().create('ticks', { at: 'gone' }); });
  app.cronRemove('gone');
  app.logger.warn('cron hooks registered', { jobs: 1 });
  app.routerAdd('GET', '/api/fails', () => { throw new Error('a detail for the log only'); });
  app.onRecordCreate(async (e: any) => { e.app.logger.warn('a tick is being written'); await e.next(); }, 'ticks');
};
`,
    });
    const dir = mkdtempSync(path.join(tmpdir(), 'cairn-hooks-cron-'));
    const server = await spawnServer(dir, { CAIRN_ADMIN_EMAIL: ADMIN_EMAIL, CAIRN_ADMIN_PASSWORD: ADMIN_PASSWORD }, ['--hooks', app.hooks]);
    try {
      const token = (await request(server.url, 'POST', '/api/admins/auth-with-password', { body: { identity: ADMIN_EMAIL, password: ADMIN_PASSWORD } })).body.token;
      assert.equal((await request(server.url, 'POST', '/api/collections', { token, body: { name: 'ticks', fields: [{ name: 'at', type: 'text' }] } })).status, 200);
      const items = await waitFor(
        async () => {
          const res = await request(server.url, 'GET', '/api/collections/ticks/records?perPage=100', { token });
          return res.body.items.length >= 2 ? res.body.items : undefined;
        },
        { what: 'two cron runs', timeoutMs: 20_000 },
      );
      assert.ok(items.every((r: { at: string }) => r.at !== 'gone'));
      const status = await request(server.url, 'GET', '/api/hooks', { token });
      assert.deepEqual(status.body.cron.map((c: { name: string }) => c.name), ['tick']);

      const failed = await request(server.url, 'GET', '/api/fails');
      assert.equal(failed.status, 500);
      assert.ok(!failed.text.includes('a detail for the log only'));
      const file = path.join(app.hooks, 'cron.ts');
      // The log (written in batches) has the error with the hook file, and the hook's own line.
      await waitFor(() => server.output().includes('a detail for the log only'), { what: 'the route failure in the log' });
      const lines = server.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l));
      const failure = lines.find((l) => l.msg === 'hook failed');
      assert.equal(failure.hook, file);
      assert.equal(failure.err.message, 'a detail for the log only');
      const own = lines.find((l) => l.msg === 'cron hooks registered');
      assert.equal(own.hook, file);
      assert.equal(own.jobs, 1);
      // Inside an event, e.app's logger is named after the file of the handler running.
      assert.equal(lines.find((l) => l.msg === 'a tick is being written')?.hook, file);

      // An administrator runs a job now (this node, no claim); an unknown one is a 404.
      const before = (await request(server.url, 'GET', '/api/collections/ticks/records?perPage=1', { token })).body.totalItems;
      assert.equal((await request(server.url, 'POST', '/api/hooks/cron/tick', { token })).status, 204);
      const after = (await request(server.url, 'GET', '/api/collections/ticks/records?perPage=1', { token })).body.totalItems;
      assert.ok(after > before);
      assert.equal((await request(server.url, 'POST', '/api/hooks/cron/nope', { token })).status, 404);
      assert.equal((await request(server.url, 'POST', '/api/hooks/cron/tick')).status, 401);
    } finally {
      await server.kill();
      rmSync(dir, { recursive: true, force: true });
      app.remove();
    }
  });
});
