// Starting and stopping a Cairn server from a checkout, for the compatibility harnesses: a data
// directory prepared by the caller, a free port on 127.0.0.1, health polled with a deadline.

import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';

export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/** Runs `cairn <args>` from the checkout to completion; throws with its output when it fails. */
export function cairnCli(cairnRoot, args, env = {}) {
  const r = spawnSync(process.execPath, [join(cairnRoot, 'bin/cairn.js'), ...args], {
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`cairn ${args.join(' ')} failed (${r.status}):\n${r.stdout}\n${r.stderr}`);
  return r.stdout;
}

/**
 * Starts `cairn serve` on a free port; resolves once /api/health answers.
 * Returns {url, port, stop()}; stop() ends that one process (SIGTERM, then SIGKILL after 10 s).
 */
export async function startCairn({ cairnRoot, dir, env = {}, args = [], logFile }) {
  const port = await freePort();
  const child = spawn(
    process.execPath,
    [join(cairnRoot, 'bin/cairn.js'), 'serve', '--host', '127.0.0.1', '--port', String(port), '--dir', dir, '--hooks', 'off', '--pb-hooks', 'off', ...args],
    {
      env: { ...process.env, CAIRN_RATE_LIMIT: 'off', CAIRN_DRAIN_MS: '0', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const log = logFile ? createWriteStream(logFile) : null;
  let output = '';
  const keep = (chunk) => {
    if (log) log.write(chunk);
    if (output.length < 20000) output += chunk;
  };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const exited = new Promise((resolve) => child.on('exit', (code) => resolve(code)));
  let dead = false;
  exited.then(() => (dead = true));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60000;
  for (;;) {
    if (dead) throw new Error(`cairn serve exited before answering:\n${output}`);
    try {
      const res = await fetch(`${url}/api/health`);
      if (res.status === 200) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`cairn serve did not answer /api/health within 60 s:\n${output}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    port,
    pid: child.pid,
    output: () => output,
    async stop() {
      if (dead) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10000);
      await exited;
      clearTimeout(timer);
      log?.end();
    },
  };
}
