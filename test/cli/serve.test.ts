import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { CAIRN_ARGS, freePort, runCli } from '../helpers/process.ts';
import { waitFor } from '../helpers/wait.ts';

describe('configuration: flags win over CAIRN_* variables, which win over defaults', () => {
  test('defaults', () => {
    const c = loadConfig({}, {});
    assert.deepEqual([c.host, c.port, c.dir, c.tokenTtl, c.bodyLimit, c.rateLimit], ['127.0.0.1', 8090, path.resolve('./data'), 86400, 1024 * 1024, true]);
    assert.equal(c.shutdownTimeoutMs, 10000);
    assert.equal(loadConfig({}, { CAIRN_SHUTDOWN_TIMEOUT_MS: '0' }).shutdownTimeoutMs, 0);
  });

  test('PostgreSQL keeps its whole pool open unless CAIRN_PG_POOL_MIN says fewer', () => {
    assert.deepEqual([loadConfig({}, {}).pgPoolSize, loadConfig({}, {}).pgPoolMin], [10, 10]);
    assert.equal(loadConfig({}, { CAIRN_PG_POOL_SIZE: '4' }).pgPoolMin, 4);
    assert.equal(loadConfig({}, { CAIRN_PG_POOL_SIZE: '4', CAIRN_PG_POOL_MIN: '0' }).pgPoolMin, 0);
    assert.throws(() => loadConfig({}, { CAIRN_PG_POOL_SIZE: '4', CAIRN_PG_POOL_MIN: '5' }), /CAIRN_PG_POOL_MIN must be an integer between 0 and 4, got "5"/);
  });

  test('environment over defaults, flags over environment', () => {
    const env = { CAIRN_PORT: '9000', CAIRN_HOST: '0.0.0.0', CAIRN_DIR: '/tmp/from-env' };
    const fromEnv = loadConfig({}, env);
    assert.deepEqual([fromEnv.host, fromEnv.port, fromEnv.dir], ['0.0.0.0', 9000, '/tmp/from-env']);
    const fromFlags = loadConfig({ port: '9100', host: '127.0.0.2', dir: '/tmp/from-flags' }, env);
    assert.deepEqual([fromFlags.host, fromFlags.port, fromFlags.dir], ['127.0.0.2', 9100, '/tmp/from-flags']);
    // A flag wins even over an invalid variable, which is then never read.
    assert.equal(loadConfig({ port: '9200' }, { CAIRN_PORT: 'nonsense' }).port, 9200);
  });

  test('invalid values are refused with a message naming the setting', () => {
    for (const [env, name] of [
      [{ CAIRN_PORT: '70000' }, 'port'],
      [{ CAIRN_TOKEN_TTL: '-5' }, 'CAIRN_TOKEN_TTL'],
      [{ CAIRN_RATE_LIMIT: 'sometimes' }, 'CAIRN_RATE_LIMIT'],
      [{ CAIRN_BODY_LIMIT: '1.5' }, 'CAIRN_BODY_LIMIT'],
      [{ CAIRN_SHUTDOWN_TIMEOUT_MS: '-1' }, 'CAIRN_SHUTDOWN_TIMEOUT_MS'],
      [{ CAIRN_SHUTDOWN_TIMEOUT_MS: 'soon' }, 'CAIRN_SHUTDOWN_TIMEOUT_MS'],
    ] as const) {
      assert.throws(() => loadConfig({}, env), (err: unknown) => err instanceof ConfigError && err.message.includes(name), name);
    }
  });
});

describe('`cairn serve` as a process', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'cairn-cli-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test('serves from CAIRN_PORT, CAIRN_HOST and CAIRN_DIR alone, and stops on SIGINT with 0', async () => {
    const port = await freePort();
    const dataDir = path.join(dir, 'env-data');
    const child = spawn(process.execPath, [...CAIRN_ARGS, 'serve'], {
      env: { ...process.env, CAIRN_PORT: String(port), CAIRN_HOST: '127.0.0.1', CAIRN_DIR: dataDir, CAIRN_LOG_LEVEL: 'silent', CAIRN_RATE_LIMIT: 'off' },
      stdio: 'ignore',
    });
    const exited = once(child, 'exit');
    try {
      const health = await waitFor(
        async () => {
          try {
            const res = await fetch(`http://127.0.0.1:${port}/api/health`);
            return res.ok && ((await res.json()) as { message: string });
          } catch {
            return false;
          }
        },
        { timeoutMs: 30_000, what: 'cairn serve to answer' },
      );
      assert.equal(health.message, 'API is healthy.');
      assert.ok(existsSync(path.join(dataDir, 'system.db')));
      assert.ok(existsSync(path.join(dataDir, 'databases', 'main.db')));
    } finally {
      child.kill('SIGINT');
      const [code] = await exited;
      assert.equal(code, 0);
    }
  });

  test('the --port flag wins over CAIRN_PORT', async () => {
    const [flagPort, envPort] = [await freePort(), await freePort()];
    const child = spawn(process.execPath, [...CAIRN_ARGS, 'serve', '--port', String(flagPort), '--dir', path.join(dir, 'flag-data')], {
      env: { ...process.env, CAIRN_PORT: String(envPort), CAIRN_LOG_LEVEL: 'silent', CAIRN_RATE_LIMIT: 'off' },
      stdio: 'ignore',
    });
    const exited = once(child, 'exit');
    try {
      await waitFor(() => fetch(`http://127.0.0.1:${flagPort}/api/health`).then((r) => r.ok, () => false), { timeoutMs: 30_000, what: 'the flag port' });
      await assert.rejects(fetch(`http://127.0.0.1:${envPort}/api/health`));
      assert.ok(existsSync(path.join(dir, 'flag-data', 'system.db')));
    } finally {
      child.kill('SIGTERM');
      await exited;
    }
  });

  test('bad flags and variables stop it with a message and a non-zero exit', async () => {
    const badFlag = await runCli(['serve', '--port', 'http', '--dir', dir]);
    assert.notEqual(badFlag.code, 0);
    assert.match(badFlag.stderr, /port/);
    const badEnv = await runCli(['serve', '--dir', dir], { CAIRN_PORT: 'eighty' });
    assert.equal(badEnv.code, 2);
    assert.match(badEnv.stderr, /port must be an integer/);
  });

  test('a PostgreSQL URL that cannot be used stops start-up with one line naming it, without its password', async () => {
    const closed = await freePort();
    const url = `postgres://cairn:do-not-print@127.0.0.1:${closed}/cairn`;
    // CAIRN_DB_WAIT_MS=0: serve gives up at once instead of waiting for a database that may still be
    // starting (test/cli/db-wait.test.ts covers the wait); the error it then reports is this one.
    for (const [args, env] of [
      [['serve', '--dir', dir, '--port', String(await freePort()), '--database-url', url], { CAIRN_DB_WAIT_MS: '0' }],
      [['serve', '--dir', dir, '--port', String(await freePort())], { CAIRN_DATABASE_URL: url, CAIRN_DB_WAIT_MS: '0' }],
      [['migrate', 'status', '--dir', dir], { CAIRN_DATABASE_URL: url }],
    ] as const) {
      const res = await runCli([...args], env);
      assert.equal(res.code, 1, `${args.join(' ')}: ${res.stderr}`);
      assert.match(res.stderr, new RegExp(`^cairn: cannot use PostgreSQL at postgres://cairn:\\*\\*\\*@127\\.0\\.0\\.1:${closed}/cairn: [^\\n]+\\n$`));
      assert.doesNotMatch(res.stderr + res.stdout, /do-not-print|\n\s+at /);
    }
  });

  test('--version and --help', async () => {
    const version = await runCli(['--version']);
    assert.equal(version.code, 0);
    assert.match(version.stdout, /^\d+\.\d+\.\d+/);
    const help = await runCli(['serve', '--help']);
    for (const flag of ['--port', '--host', '--dir']) assert.match(help.stdout, new RegExp(flag));
  });
});
