import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { freePort } from '../../test/helpers/process.ts';
import { waitFor } from '../../test/helpers/wait.ts';

export interface RunningServer {
  url: string;
  child: ChildProcess;
  /** The environment it was started with, besides the bench's own. */
  env: Record<string, string>;
  /** CPU seconds the process has used so far (user + system), where the OS tells (Linux). */
  cpuSeconds(): number | undefined;
  /** Resident memory in bytes, where the OS tells (Linux). */
  rssBytes(): number | undefined;
  /** Resident memory with its anonymous part, where the OS tells (Linux 4.14+). */
  resident(): ResidentMemory | undefined;
  stop(): Promise<void>;
}

// Linux reports process times in clock ticks, 100 per second on every common configuration.
const CLOCK_TICKS = 100;

function cpuSecondsOf(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    // Fields after the parenthesised command name: utime and stime are the 12th and 13th.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // A server's workers (CAIRN_WORKERS) are its children, and their work is its work.
    const children = childrenOf(pid).reduce((sum, child) => sum + (cpuSecondsOf(child) ?? 0), 0);
    return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS + children;
  } catch {
    return undefined;
  }
}

function childrenOf(pid: number): number[] {
  try {
    const text = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim();
    return text === '' ? [] : text.split(' ').map(Number);
  } catch {
    return [];
  }
}

/** Resident memory of a process in bytes, where the OS tells (Linux). */
export function rssOf(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Resident memory split by what backs it: anonymous (heaps, caches, stacks) and the rest (the mapped
 * node binary and libraries, shared memory such as SQLite's WAL index). */
export interface ResidentMemory {
  rss: number;
  anonymous: number;
}

function residentOf(pid: number | undefined): ResidentMemory | undefined {
  if (pid === undefined) return undefined;
  try {
    const text = readFileSync(`/proc/${pid}/smaps_rollup`, 'utf8');
    const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB$`, 'm').exec(text)?.[1] ?? NaN) * 1024;
    const memory = { rss: kb('Rss'), anonymous: kb('Anonymous') };
    return Number.isNaN(memory.rss) || Number.isNaN(memory.anonymous) ? undefined : memory;
  } catch {
    return undefined;
  }
}

/**
 * Starts a server process on a free loopback port (`--port` is appended to `args`) and waits until
 * `healthPath` answers. Its output goes to /dev/null: relaying it would cost the bench process CPU
 * that autocannon needs; set BENCH_VERBOSE=1 to see it.
 */
/** BENCH_SERVER_NODE_FLAGS: node's own flags for the Cairn processes a bench starts, such as `--cpu-prof --cpu-prof-dir=DIR`. */
export function serverNodeFlags(): string[] {
  return (process.env.BENCH_SERVER_NODE_FLAGS ?? '').split(' ').filter(Boolean);
}

export async function startProcess(args: string[], env: Record<string, string>, healthPath: string): Promise<RunningServer> {
  const port = await freePort();
  return startCommand(process.execPath, [...args, '--port', String(port)], env, port, healthPath);
}

/** Starts `command` (any executable, such as a PocketBase binary) that will serve on `port`. */
export async function startCommand(command: string, args: string[], env: Record<string, string>, port: number, healthPath: string): Promise<RunningServer> {
  const child = spawn(command, args, {
    env: { ...process.env, ...env },
    stdio: ['ignore', process.env.BENCH_VERBOSE ? 'inherit' : 'ignore', 'inherit'],
  });
  let exited = false;
  const exit = once(child, 'exit').then(() => {
    exited = true;
  });
  const url = `http://127.0.0.1:${port}`;
  await waitFor(
    async () => {
      if (exited) throw new Error(`${args.join(' ')} exited before it served`);
      try {
        return (await fetch(url + healthPath)).ok;
      } catch {
        return false;
      }
    },
    { timeoutMs: 60_000, what: `${args.join(' ')} to serve` },
  );
  return {
    url,
    child,
    env,
    cpuSeconds: () => cpuSecondsOf(child.pid),
    rssBytes: () => rssOf(child.pid),
    resident: () => residentOf(child.pid),
    async stop() {
      if (!exited) child.kill('SIGTERM');
      await exit;
    },
  };
}
