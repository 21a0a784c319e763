import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { freePort } from '../../test/helpers/process.ts';
import { waitFor } from '../../test/helpers/wait.ts';

export interface RunningServer {
  url: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

/**
 * Starts a server process on a free loopback port (`--port` is appended to `args`) and waits until
 * `healthPath` answers. Its output goes to /dev/null: relaying it would cost the bench process CPU
 * that autocannon needs; set BENCH_VERBOSE=1 to see it.
 */
export async function startProcess(args: string[], env: Record<string, string>, healthPath: string): Promise<RunningServer> {
  const port = await freePort();
  const child = spawn(process.execPath, [...args, '--port', String(port)], {
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
    async stop() {
      if (!exited) child.kill('SIGTERM');
      await exit;
    },
  };
}
