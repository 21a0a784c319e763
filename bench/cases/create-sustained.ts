import { waitFor } from '../../test/helpers/wait.ts';
import type { SoloCase } from '../case.ts';
import { round } from '../lib/load.ts';
import { received, startReceiver } from './create-trigger.ts';
import { createPosts, post } from './posts.ts';

const PLAIN = 'bench_sustained';
const HOOKED = 'bench_sustained_hook';

// The issue's targets (22, point 3): with one trigger, sustained create throughput at least 60 % of
// that without, and a create plus its delivery at most 1.6× a create's CPU.
const THROUGHPUT_TARGET = 0.6;
const CPU_TARGET = 1.6;

interface State {
  receiver: string;
  /** Events the receiver has had so far. */
  delivered: number;
}

interface Window {
  creates: number;
  /** From the start of the load until the receiver had every event of it (the load's length without a trigger). */
  seconds: number;
  /** Cairn's CPU seconds over that window. */
  cpu?: number;
  /** How long after the load ended the last event arrived. */
  lagMs: number;
  p99: number;
}

function fmt(n: number, digits = 0): string {
  return n.toLocaleString('en', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

/**
 * Creates at saturation for a long stretch into a collection with a trigger to a receiver on loopback
 * (BENCH_SUSTAINED_S, default 60 s, in two halves) and into one without (half as long, also in two
 * halves: its steady state comes at once, and the whole bench should stay within minutes), ordered
 * plain, trigger, trigger, plain so a drift hits both alike. Unlike `create-trigger`, whose rounds are
 * short enough for the pacer to hold deliveries back until the load ends, this is longer than
 * CAIRN_WEBHOOK_MAX_DEFER_MS: deliveries go during the load. The window of a trigger round ends when
 * the receiver has every event of it, so every delivery is inside it; Cairn's CPU (/proc utime +
 * stime) is read at both ends.
 */
export const createSustainedCase: SoloCase<State> = {
  name: 'create-sustained',
  description: 'creates at saturation for a minute, with and without one webhook trigger, every delivery inside the window',

  async prepare(ctx) {
    const receiver = await startReceiver();
    await createPosts(ctx.cairn, PLAIN);
    await createPosts(ctx.cairn, HOOKED);
    await ctx.cairn.admin('PATCH', `/api/collections/${HOOKED}`, { options: { triggers: [{ action: 'create', url: `${receiver}/hook`, method: 'POST' }] } });
    await ctx.cairn.admin('POST', `/api/collections/${HOOKED}/records`, post(0));
    await waitFor(async () => (await received(receiver)) > 0, { what: 'the first webhook at the bench receiver' });
    return { receiver, delivered: await received(receiver) };
  },

  async measure(state, { cairn, load }) {
    const seconds = Number(process.env.BENCH_SUSTAINED_S || 60);
    const run = async (name: string, hooked: boolean): Promise<Window> => {
      const half = Math.max(1, hooked ? seconds / 2 : seconds / 4);
      const cpuBefore = cairn.cpuSeconds();
      const started = performance.now();
      const r = await round({ url: cairn.url, request: { method: 'POST', paths: [`/api/collections/${name}/records`], body: post(7), expectStatus: 200 }, cpuSeconds: cairn.cpuSeconds }, load.connections, half, load.rate);
      if (r.failures > 0) throw new Error(`create-sustained: ${r.failures} unexpected answers (${JSON.stringify(r.statuses)})`);
      const loadEnded = performance.now();
      const creates = r.statuses['200'] ?? 0;
      if (hooked) {
        state.delivered += creates;
        await waitFor(async () => (await received(state.receiver)) >= state.delivered, { timeoutMs: 300_000, intervalMs: 5, what: `the receiver to get ${state.delivered} webhooks` });
      }
      const ended = performance.now();
      const cpuAfter = cairn.cpuSeconds();
      // Let the last outcomes and logs be written before the next window starts.
      if (hooked) await new Promise((resolve) => setTimeout(resolve, 200));
      return { creates, seconds: (ended - started) / 1000, cpu: cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore, lagMs: ended - loadEnded, p99: r.p99 };
    };
    const plain: Window[] = [];
    const hooked: Window[] = [];
    plain.push(await run(PLAIN, false));
    hooked.push(await run(HOOKED, true));
    hooked.push(await run(HOOKED, true));
    plain.push(await run(PLAIN, false));
    const sum = (ws: Window[]) => {
      const creates = ws.reduce((n, w) => n + w.creates, 0);
      const secs = ws.reduce((n, w) => n + w.seconds, 0);
      const cpu = ws.every((w) => w.cpu !== undefined) ? ws.reduce((n, w) => n + w.cpu!, 0) : undefined;
      return { rps: creates / secs, cpuUs: cpu === undefined ? undefined : (cpu * 1e6) / creates, p99: Math.max(...ws.map((w) => w.p99)) };
    };
    const p = sum(plain);
    const h = sum(hooked);
    const ratio = h.rps / p.rps;
    const cpuRatio = p.cpuUs && h.cpuUs ? h.cpuUs / p.cpuUs : undefined;
    return [
      `create-sustained: creates at saturation, ${fmt(seconds)} s into a collection with one trigger and ${fmt(seconds / 2)} s into one without, in halves ordered plain, trigger, trigger, plain; ${load.connections} connections${load.rate > 0 ? ` at ${load.rate} requests/s` : ''}; a trigger window ends when the receiver has every event.`,
      '',
      '| | creates/s | CPU µs per create | p99 ms (worse half) | last event after the load ended (ms) |',
      '| --- | ---: | ---: | ---: | --- |',
      `| no trigger | ${fmt(p.rps)} | ${p.cpuUs === undefined ? '?' : fmt(p.cpuUs)} | ${fmt(p.p99)} | |`,
      `| one trigger, deliveries included | ${fmt(h.rps)} | ${h.cpuUs === undefined ? '?' : fmt(h.cpuUs)} | ${fmt(h.p99)} | ${hooked.map((w) => fmt(w.lagMs)).join(', ')} |`,
      '',
      `create-sustained: throughput with a trigger ${fmt(ratio * 100)}% of without (target ≥ ${fmt(THROUGHPUT_TARGET * 100)}%: ${ratio >= THROUGHPUT_TARGET ? 'met' : '**below**'}); ` +
        `CPU per create with its delivery ${cpuRatio === undefined ? '?' : `${fmt(cpuRatio, 2)}×`} a plain create's (target ≤ ${fmt(CPU_TARGET, 1)}×: ${cpuRatio !== undefined && cpuRatio <= CPU_TARGET ? 'met' : '**not met**'}).`,
    ];
  },
};
