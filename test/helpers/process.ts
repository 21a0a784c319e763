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

/** A free TCP port on 127.0.0.1 (closed again before it is returned). */
export async function freePort(): Promise<number> {
  const srv = createServer();
  srv.listen(0, '127.0.0.1');
  await once(srv, 'listening');
  const address = srv.address();
  const port = typeof address === 'object' && address ? address.port : 0;
  await new Promise((resolve) => srv.close(resolve));
  return port;
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
 * waits until /api/health answers. */
export async function spawnServer(dir: string, env: Record<string, string> = {}, args: string[] = [], port?: number): Promise<SpawnedServer> {
  port ??= await freePort();
  const driver = await driverEnv(path.resolve(dir));
  const child = spawn(process.execPath, [...CAIRN_ARGS, 'serve', '--dir', dir, '--port', String(port), '--host', '127.0.0.1', ...args], {
    env: { ...process.env, CAIRN_LOG_LEVEL: 'warn', CAIRN_RATE_LIMIT: 'off', CAIRN_DRAIN_MS: '0', ...driver, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (out += d));
  const exited = once(child, 'exit').then(([code]) => code as number | null);
  let gone = false;
  void exited.then(() => (gone = true));
  const url = `http://127.0.0.1:${port}`;
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
  return {
    url,
    port,
    child,
    output: () => out,
    exited,
    async kill(signal: NodeJS.Signals = 'SIGTERM') {
      if (!gone) child.kill(signal);
      return exited;
    },
  };
}
