import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SoloCase } from '../case.ts';
import { type RunningServer, serverNodeFlags, startProcess } from '../lib/servers.ts';
import { POST_FIELDS } from './posts.ts';

// The first requests after a start against the next ones (issue 48: PocketBase's benchmark creates 50
// organizations, 10 at a time, a new connection each, right after the server starts; Cairn took 4-6x
// PocketBase's time). Each run starts a Cairn of its own on the same data directory, sends a batch of
// creates in that manner, then two more, and reads the process's CPU (every thread, in nanoseconds:
// /proc/<pid>/task/*/schedstat) around each batch. The figure is the first batch's CPU over the
// median of the later ones; a batch is too short for the throughput to mean much on a shared machine.

// BENCH_FIRST_ROOT: the Cairn of another checkout (built), to compare versions.
const ROOT = process.env.BENCH_FIRST_ROOT ?? path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const NAME = 'bench_first';
const BATCH = 50;
const IN_FLIGHT = 10;
const LATER_BATCHES = 2;
const TARGET = 1.25;
const ADMIN = { identity: 'bench-first@example.com', password: 'bench-first-password' };

/** CPU seconds of every thread of the process so far (Linux), else what /proc/<pid>/stat tells in ticks. */
function cpuOf(server: RunningServer): number {
  const pid = server.child.pid;
  try {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      } catch {
        // The thread ended meanwhile.
      }
    }
    return ns / 1e9;
  } catch {
    return server.cpuSeconds() ?? NaN;
  }
}

function start(dir: string): Promise<RunningServer> {
  return startProcess(
    [...serverNodeFlags(), path.join(ROOT, 'bin/cairn.js'), 'serve', '--dir', dir, '--host', '127.0.0.1', '--hooks', 'off', '--pb-hooks', 'off'],
    { CAIRN_LOG_LEVEL: process.env.BENCH_LOG_LEVEL || 'info', CAIRN_RATE_LIMIT: 'off', CAIRN_ADMIN_EMAIL: ADMIN.identity, CAIRN_ADMIN_PASSWORD: ADMIN.password, NODE_ENV: 'production' },
    '/api/health',
  );
}

/** CPU µs per create of one batch: BATCH creates, IN_FLIGHT at a time, each on a new connection. */
async function batch(server: RunningServer, offset: number): Promise<number> {
  const before = cpuOf(server);
  let next = 0;
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      while (next < BATCH) {
        const i = offset + next++;
        const res = await fetch(`${server.url}/api/collections/${NAME}/records`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', connection: 'close' },
          body: JSON.stringify({ title: `Post ${i}`, body: '<p>Body</p>', views: i, published: i % 2 === 0 }),
        });
        if (res.status !== 200) throw new Error(`first-requests: a create answered ${res.status}: ${await res.text()}`);
        await res.arrayBuffer();
      }
    }),
  );
  return ((cpuOf(server) - before) * 1e6) / BATCH;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (n: number) => Math.round(n).toLocaleString('en');

export const firstRequestsCase: SoloCase<null> = {
  name: 'first-requests',
  description: `the first ${BATCH} creates after a start (${IN_FLIGHT} in flight, a new connection each) against the next ones: CPU per create`,
  async prepare() {
    return null;
  },
  async measure() {
    const runs = Number(process.env.BENCH_FIRST_RUNS ?? 5);
    const dir = mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-first-'));
    try {
      // The collection is made by a first process, so every measured start finds it on disk.
      const setup = await start(dir);
      try {
        const login = await fetch(`${setup.url}/api/admins/auth-with-password`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(ADMIN) });
        const token = ((await login.json()) as { token: string }).token;
        const made = await fetch(`${setup.url}/api/collections`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify({ name: NAME, type: 'base', fields: POST_FIELDS, listRule: '', viewRule: '', createRule: '' }),
        });
        if (!made.ok) throw new Error(`first-requests: creating the collection answered ${made.status}: ${await made.text()}`);
      } finally {
        await setup.stop();
      }
      const firsts: number[] = [];
      const laters: number[] = [];
      const ratios: number[] = [];
      for (let run = 0; run < runs; run++) {
        const server = await start(dir);
        try {
          const first = await batch(server, run * 1000);
          const later: number[] = [];
          for (let b = 1; b <= LATER_BATCHES; b++) later.push(await batch(server, run * 1000 + b * BATCH));
          firsts.push(first);
          laters.push(median(later));
          ratios.push(first / median(later));
        } finally {
          await server.stop();
        }
      }
      const ratio = median(ratios);
      return [
        `first-requests: CPU per create of the first ${BATCH} after a start ${fmt(median(firsts))} µs, of the next ${BATCH * LATER_BATCHES} ${fmt(median(laters))} µs ` +
          `(median of ${runs} starts): **${ratio.toFixed(2)}×** (target ≤ ${TARGET}×: ${ratio <= TARGET ? 'met' : '**not met**'}; runs ${ratios.map((r) => r.toFixed(2)).join(', ')}).`,
      ];
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
};
