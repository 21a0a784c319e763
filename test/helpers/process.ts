import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createServer } from 'node:net';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildProblem } from '../../bin/build-check.js';
import { driverEnv } from './postgres.ts';
import { waitFor } from './wait.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/**
 * `node …CAIRN_ARGS` is the `cairn` command as the code is now, never a build that may be stale: the
 * build in dist/ when it is newer than every source (as `npm ci` leaves it, and what users run), else
 * the sources themselves through tsx. A start through tsx costs about three times the CPU of the
 * build's, and the suite starts hundreds of servers and commands.
 */
export const CAIRN_ARGS: readonly string[] =
  buildProblem(ROOT) === undefined ? [path.join(ROOT, 'dist/main.js')] : ['--import', 'tsx', path.join(ROOT, 'src/main.ts')];

/**
 * A free TCP port on 127.0.0.1 (closed again before it is returned), picked below the kernel's
 * ephemeral range (32768–60999 on Linux): a port from that range, once closed, can be taken as the
 * local port of any outgoing connection (a fetch, a PostgreSQL client) before the server meant for it
 * listens, and the server then fails to start.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = 20_000 + Math.floor(Math.random() * 12_000);
    const srv = createServer();
    const free = await new Promise<boolean>((resolve) => {
      srv.once('error', () => resolve(false));
      srv.listen(port, '127.0.0.1', () => resolve(true));
    });
    if (free) {
      await new Promise((resolve) => srv.close(resolve));
      return port;
    }
  }
}

export interface RunResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs `cairn ARGS…` to completion (CLI tests). */
export async function runCli(args: string[], env: Record<string, string> = {}, timeoutMs = 60_000): Promise<RunResult> {
  const dirAt = args.indexOf('--dir');
  const dir = dirAt >= 0 ? args[dirAt + 1] : env.CAIRN_DIR;
  const driver = dir ? await driverEnv(path.resolve(dir)) : {};
  const child = spawn(process.execPath, [...CAIRN_ARGS, ...args], { env: { ...process.env, CAIRN_LOG_LEVEL: 'silent', ...driver, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const timer = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
  const [code] = await once(child, 'exit');
  clearTimeout(timer);
  return { code: code as number | null, stdout, stderr };
}

export interface SpawnedServer {
  url: string;
  port: number;
  child: ChildProcess;
  output(): string;
  /** Resolves with the exit code once the process has exited. */
  exited: Promise<number | null>;
  kill(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Starts `cairn serve` as a real process on a free port (or `port`, to restart on the same one) and
 * waits until /api/health answers. A process that ends later without being asked to prints what it
 * wrote, so that a test failing on "fetch failed" shows why the server went away. */
export async function spawnServer(dir: string, env: Record<string, string> = {}, args: string[] = [], port?: number): Promise<SpawnedServer> {
  const pinned = port !== undefined;
  for (;;) {
    const attempt = await startOn(port ?? (await freePort()), dir, env, args);
    if (attempt !== 'port taken' || pinned) {
      if (attempt === 'port taken') throw new Error(`cairn could not listen on port ${port}: it is taken`);
      return attempt;
    }
  }
}

async function startOn(port: number, dir: string, env: Record<string, string>, args: string[]): Promise<SpawnedServer | 'port taken'> {
  const driver = await driverEnv(path.resolve(dir));
  const child = spawn(process.execPath, [...CAIRN_ARGS, 'serve', '--dir', dir, '--port', String(port), '--host', '127.0.0.1', ...args], {
    env: { ...process.env, CAIRN_LOG_LEVEL: 'warn', CAIRN_RATE_LIMIT: 'off', CAIRN_DRAIN_MS: '0', ...driver, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  let asked = false;
  let ready = false;
  const exited = once(child, 'exit').then(([code, signal]) => {
    if (ready && !asked && code !== 0 && signal !== 'SIGKILL' && signal !== 'SIGTERM') process.stderr.write(`# cairn on port ${port} ended unasked (code ${code}, signal ${signal}); its output:\n${out}\n`);
    return code as number | null;
  });
  let gone = false;
  void exited.then(() => (gone = true));
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitFor(
      async () => {
        if (gone) throw new Error(`cairn exited before it served:\n${out}`);
        try {
          return (await fetch(`${url}/api/health`)).ok;
        } catch {
          return false;
        }
      },
      { timeoutMs: 30_000, what: 'cairn serve to answer /api/health' },
    );
  } catch (err) {
    if (gone && out.includes('EADDRINUSE')) return 'port taken';
    throw err;
  }
  ready = true;
  return {
    url,
    port,
    child,
    output: () => out,
    exited,
    async kill(signal: NodeJS.Signals = 'SIGTERM') {
      asked = true;
      if (!gone) child.kill(signal);
      return exited;
    },
  };
}
