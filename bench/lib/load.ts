import autocannon from 'autocannon';
import type { BenchRequest } from '../case.ts';

export interface LoadOptions {
  connections: number;
  /** Seconds of measured load per target, split over `rounds`. */
  duration: number;
  /** Seconds of unmeasured load per target first, so all are measured warm (JIT, caches). */
  warmup: number;
  /** Measured rounds per target; each round runs every target compared, in alternating order, so a
   * burst of load from elsewhere on the machine, or its drift, hits all of them alike instead of
   * skewing the ratios. */
  rounds: number;
  /** Requests per second to send instead of as many as possible (0: no cap). At a fixed rate both
   * servers batch alike, so their CPU time per request compares their work alone. */
  rate: number;
}

export interface Measurement {
  /** Requests per second over all rounds. */
  rps: number;
  /** Requests per second of each round, in the order they ran. */
  roundRps: number[];
  /** Median over the rounds of each round's 99th-percentile latency, in ms. */
  p99: number;
  /** CPU time the server used per request, in microseconds: steadier than throughput on a busy
   * machine, so it is the figure to watch while optimising (undefined where the OS does not say). */
  cpuUs?: number;
  /** With an `after` step: its wall time per round (ms), and CPU per request including it. */
  drain?: { ms: number[]; cpuUs?: number };
  total: number;
  /** Answers with another status than expected, plus connection errors and timeouts. */
  failures: number;
  statuses: Record<string, number>;
}

/** One case's two measurements of a run, for what reads the run's results (bench/guard.ts). */
export interface MeasuredCase {
  name: string;
  baseline: Measurement;
  cairn: Measurement;
}

export interface Round {
  requests: number;
  cpuSeconds?: number;
  /** Wall time of the `after` step (ms) and CPU seconds up to its end. */
  drainMs?: number;
  cpuWithDrain?: number;
  seconds: number;
  p99: number;
  failures: number;
  statuses: Record<string, number>;
}

/** One stretch of load on one target (exported for the solo cases, which run their own rounds). */
export async function round(target: Target, connections: number, seconds: number, rate: number): Promise<Round> {
  const { url, request } = target;
  const cpuBefore = target.cpuSeconds?.();
  const headers: Record<string, string> = { ...request.headers };
  const body = request.body === undefined ? undefined : JSON.stringify(request.body);
  if (body !== undefined) headers['content-type'] = 'application/json';
  // The server closes the connection after its answer and autocannon opens a new one (its
  // reconnectRate of 1 counts no request at all).
  if (request.freshConnections) headers.connection = 'close';
  let next = 0;
  const paths = request.paths;
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    ...(rate > 0 ? { overallRate: rate } : {}),
    requests: [
      {
        method: request.method,
        headers,
        body,
        path: request.nextPath ? '/' : paths[0],
        ...(request.nextPath
          ? { setupRequest: (req) => ({ ...req, path: request.nextPath!() }) }
          : paths.length > 1
            ? { setupRequest: (req) => ({ ...req, path: paths[next++ % paths.length] }) }
            : {}),
      },
    ],
  });
  if (process.env.BENCH_VERBOSE || process.env.BENCH_LATENCY) {
    const l = result.latency;
    process.stderr.write(`  ${url} ${Math.round(result.requests.average)} req/s; latency ms mean ${l.mean} p50 ${l.p50} p90 ${l.p90} p99 ${l.p99} max ${l.max}\n`);
  }
  const statuses = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => [code, s.count]));
  const expected = String(request.expectStatus ?? 200);
  const unexpected = Object.entries(statuses).reduce((n, [code, count]) => (code === expected ? n : n + count), 0);
  const cpuAfter = target.cpuSeconds?.();
  const cpuSeconds = cpuBefore === undefined || cpuAfter === undefined ? undefined : cpuAfter - cpuBefore;
  let drainMs: number | undefined;
  let cpuWithDrain: number | undefined;
  if (target.after) {
    const started = performance.now();
    await target.after(statuses[expected] ?? 0);
    drainMs = performance.now() - started;
    const cpuDrained = target.cpuSeconds?.();
    cpuWithDrain = cpuBefore === undefined || cpuDrained === undefined ? undefined : cpuDrained - cpuBefore;
  }
  return { requests: result.requests.total, cpuSeconds, drainMs, cpuWithDrain, seconds: result.duration, p99: result.latency.p99, failures: unexpected + result.errors + result.timeouts, statuses };
}

function summarize(rounds: Round[]): Measurement {
  const total = rounds.reduce((n, r) => n + r.requests, 0);
  const seconds = rounds.reduce((n, r) => n + r.seconds, 0);
  const p99s = rounds.map((r) => r.p99).sort((a, b) => a - b);
  const statuses: Record<string, number> = {};
  for (const r of rounds) for (const [code, n] of Object.entries(r.statuses)) statuses[code] = (statuses[code] ?? 0) + n;
  const cpu = rounds.every((r) => r.cpuSeconds !== undefined) ? rounds.reduce((n, r) => n + r.cpuSeconds!, 0) : undefined;
  let drain: Measurement['drain'];
  if (rounds.every((r) => r.drainMs !== undefined)) {
    const withDrain = rounds.every((r) => r.cpuWithDrain !== undefined) ? rounds.reduce((n, r) => n + r.cpuWithDrain!, 0) : undefined;
    drain = { ms: rounds.map((r) => r.drainMs!), cpuUs: withDrain === undefined || total === 0 ? undefined : (withDrain * 1e6) / total };
  }
  return { rps: total / seconds, roundRps: rounds.map((r) => r.requests / r.seconds), cpuUs: cpu === undefined || total === 0 ? undefined : (cpu * 1e6) / total, drain, p99: p99s[Math.floor(p99s.length / 2)], total, failures: rounds.reduce((n, r) => n + r.failures, 0), statuses };
}

export interface Target {
  url: string;
  request: BenchRequest;
  cpuSeconds?: () => number | undefined;
  /** Runs after each round (see BenchCase.afterRound), with the number of requests answered as expected. */
  after?: (answered: number) => Promise<void>;
}

/**
 * Warms each target up in turn, then measures them in rounds that run every target, in reverse order
 * every other round (A B C D, D C B A, A B C D, …): the machine drifts over a run, and a drift linear
 * in time then hits all targets alike (exactly with an even number of rounds). Each target's `after`
 * step runs right after its own round.
 */
export async function compare(targets: Target[], options: LoadOptions): Promise<Measurement[]> {
  if (options.warmup > 0) for (const t of targets) await round(t, options.connections, options.warmup, options.rate);
  const perRound = Math.max(1, options.duration / options.rounds);
  const rounds: Round[][] = targets.map(() => []);
  const forward = targets.map((_, i) => i);
  const backward = [...forward].reverse();
  for (let r = 0; r < options.rounds; r++) {
    for (const i of r % 2 === 0 ? forward : backward) rounds[i].push(await round(targets[i], options.connections, perRound, options.rate));
  }
  return rounds.map(summarize);
}
