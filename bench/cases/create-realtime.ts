import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface, type Interface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { waitFor } from '../../test/helpers/wait.ts';
import type { BenchCase, CairnClient } from '../case.ts';
import { baselineCreate } from './create.ts';
import { createPosts, post, rememberCollection } from './posts.ts';

const NAME = 'bench_create_rt';
const HERE = path.dirname(fileURLToPath(import.meta.url));

function numberEnv(name: string, fallback: number): number {
  const raw = process.env[name];
  return raw === undefined || raw === '' ? fallback : Number(raw);
}

/** Subscribers (BENCH_REALTIME_SUBSCRIBERS, default 1,000), creates per second of the steady phase
 * (BENCH_REALTIME_RATE, 100), its length (BENCH_REALTIME_SECONDS, 10), subscriber processes (2). */
const SUBSCRIBERS = numberEnv('BENCH_REALTIME_SUBSCRIBERS', 1000);
const RATE = numberEnv('BENCH_REALTIME_RATE', 100);
const SECONDS = numberEnv('BENCH_REALTIME_SECONDS', 10);
const PROCESSES = 2;

/** A subscriber process (bench/realtime-subscriber.ts) and its command line. */
class Subscribers {
  private readonly lines: Interface;
  private readonly waiting: Array<(line: string) => void> = [];

  private constructor(readonly child: ChildProcess) {
    this.lines = createInterface({ input: child.stdout! });
    this.lines.on('line', (line) => this.waiting.shift()?.(line));
  }

  static async start(url: string, count: number): Promise<Subscribers> {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(HERE, '../realtime-subscriber.ts'), url, String(count), `${NAME}/*`], { stdio: ['pipe', 'pipe', 'inherit'] });
    // It goes with the bench process, whatever happens to it.
    process.on('exit', () => child.kill());
    const s = new Subscribers(child);
    const ready = await s.next();
    if (ready !== 'ready') throw new Error(`subscriber process said ${ready}`);
    return s;
  }

  private next(): Promise<string> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  async ask<T>(command: 'status' | 'report'): Promise<T> {
    const answer = this.next();
    this.child.stdin!.write(`${command}\n`);
    return JSON.parse(await answer) as T;
  }
}

interface Status {
  received: number;
  drops: number;
  lastEventAt: number;
}

async function statuses(all: Subscribers[]): Promise<Status> {
  const each = await Promise.all(all.map((s) => s.ask<Status>('status')));
  return { received: each.reduce((n, s) => n + s.received, 0), drops: each.reduce((n, s) => n + s.drops, 0), lastEventAt: Math.max(...each.map((s) => s.lastEventAt)) };
}

/** Waits until no subscriber has received anything for half a second: the server has sent everything. */
async function quiet(all: Subscribers[], timeoutMs: number): Promise<void> {
  await waitFor(async () => Date.now() - (await statuses(all)).lastEventAt > 500, { timeoutMs, intervalMs: 100, what: 'the subscribers to go quiet' });
}

function percentile(histogram: Map<number, number>, total: number, p: number): number {
  const rank = Math.ceil(total * p);
  let seen = 0;
  for (const ms of [...histogram.keys()].sort((a, b) => a - b)) {
    seen += histogram.get(ms)!;
    if (seen >= rank) return ms;
  }
  return NaN;
}

/** Creates at `rate` per second for `seconds`, each started on schedule whatever the previous ones do. */
async function steadyCreates(cairn: CairnClient, rate: number, seconds: number): Promise<number> {
  const total = Math.round(rate * seconds);
  const started = performance.now();
  const pending: Array<Promise<unknown>> = [];
  for (let i = 0; i < total; i++) {
    const due = started + (i * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    pending.push(cairn.admin('POST', `/api/collections/${NAME}/records`, post(i)));
  }
  await Promise.all(pending);
  return total;
}

interface State {
  subscribers: Subscribers[];
  notes: string[];
  /** Drops counted by the end of the steady phase. */
  steadyDrops: number;
  /** Streams dropped during the load rounds, read when the case is done. */
  loadDrops?: number;
}

const kb = (bytes: number) => (bytes / 1024).toLocaleString('en', { maximumFractionDigits: 1 });

/**
 * Realtime fan-out (issue 18). In `prepare`: the memory of 1,000 idle subscribers on one collection
 * (Cairn's RSS before and after they connect, over their number), then a steady 100 creates/s for 10 s
 * with every subscriber receiving each create: delivery latency from the record's `created` to its
 * arrival, and events delivered per second. Then the load rounds: creates as fast as they go with the
 * subscribers attached, against `create` without any (its throughput as a fraction of `create`'s);
 * after each round the bench waits until the subscribers have received everything (the drain).
 */
export const createRealtimeCase: BenchCase<State> = {
  name: 'create-realtime',
  description: `create a record with ${SUBSCRIBERS.toLocaleString('en')} realtime subscribers on its collection`,
  relativeTo: { name: 'create' },

  async prepare(ctx) {
    const collection = await createPosts(ctx.cairn, NAME);
    const rssBefore = ctx.cairnRss();
    const subscribers: Subscribers[] = [];
    for (let i = 0; i < PROCESSES; i++) {
      const n = Math.floor(SUBSCRIBERS / PROCESSES) + (i < SUBSCRIBERS % PROCESSES ? 1 : 0);
      subscribers.push(await Subscribers.start(ctx.cairn.url, n));
    }
    // Connecting leaves garbage behind; the idle figure is taken once allocations have settled.
    await new Promise((resolve) => setTimeout(resolve, 2000));
    const rssAfter = ctx.cairnRss();

    const started = performance.now();
    const created = await steadyCreates(ctx.cairn, RATE, SECONDS);
    const expected = created * SUBSCRIBERS;
    await waitFor(async () => (await statuses(subscribers)).received >= expected, { timeoutMs: 60_000, intervalMs: 50, what: `${expected} events at the subscribers` }).catch(() => undefined);
    const seconds = (performance.now() - started) / 1000;
    const reports = await Promise.all(subscribers.map((s) => s.ask<{ received: number; drops: number; histogram: Array<[number, number]> }>('report')));
    const histogram = new Map<number, number>();
    for (const r of reports) for (const [ms, n] of r.histogram) histogram.set(ms, (histogram.get(ms) ?? 0) + n);
    const received = reports.reduce((n, r) => n + r.received, 0);
    const drops = reports.reduce((n, r) => n + r.drops, 0);
    const p50 = percentile(histogram, received, 0.5);
    const p99 = percentile(histogram, received, 0.99);

    const notes = [
      rssBefore === undefined || rssAfter === undefined
        ? `${NAME}: memory per idle subscriber unknown (no /proc here).`
        : `${NAME}: ${SUBSCRIBERS.toLocaleString('en')} idle subscribers: Cairn's RSS ${kb(rssBefore)} → ${kb(rssAfter)} KiB, ${kb((rssAfter - rssBefore) / SUBSCRIBERS)} KiB per subscriber (target ≤ 30 KB: ${(rssAfter - rssBefore) / SUBSCRIBERS <= 30 * 1000 ? 'met' : '**above**'}).`,
      `${NAME}: ${RATE} creates/s for ${SECONDS} s (${created} creates) to ${SUBSCRIBERS.toLocaleString('en')} subscribers: ${received.toLocaleString('en')} of ${expected.toLocaleString('en')} events received, ` +
        `${Math.round(received / seconds).toLocaleString('en')} events/s delivered over ${seconds.toFixed(1)} s; latency from \`created\` to arrival p50 ${p50} ms, p99 ${p99} ms ` +
        `(target p99 ≤ 250 ms: ${p99 <= 250 ? 'met' : '**above**'}), max ${Math.max(...histogram.keys())} ms; ${drops} streams dropped.`,
    ];
    ctx.copyToBaseline(NAME);
    rememberCollection(ctx.baseline, NAME, collection.id);
    return { subscribers, notes, steadyDrops: drops };
  },

  baseline: (app, db) => baselineCreate(app, db, NAME),

  request: () => ({ method: 'POST', paths: [`/api/collections/${NAME}/records`], body: post(7), expectStatus: 200 }),

  async afterRound(state) {
    await quiet(state.subscribers, 120_000);
  },

  // The 1,000 streams would otherwise stay open through every case measured later (views, lists),
  // whose Cairn would then carry them.
  async done(state) {
    state.loadDrops = (await statuses(state.subscribers)).drops - state.steadyDrops;
    for (const s of state.subscribers) s.child.kill();
  },

  report: async (state) => [...state.notes, `${NAME}: streams dropped (and reconnected) during the load rounds: ${state.loadDrops ?? '?'}.`],
};
