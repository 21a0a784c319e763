import autocannon from 'autocannon';
import type { BenchRequest } from '../case.ts';

export interface LoadOptions {
  connections: number;
  /** Seconds of measured load per target, split over `rounds`. */
  duration: number;
  /** Seconds of unmeasured load per target first, so both are measured warm (JIT, caches). */
  warmup: number;
  /** Measured rounds per target, alternating targets, so a burst of load from elsewhere on the
   * machine hits both sides alike instead of skewing the ratio. */
  rounds: number;
}

export interface Measurement {
  /** Requests per second over all rounds. */
  rps: number;
  /** Median over the rounds of each round's 99th-percentile latency, in ms. */
  p99: number;
  total: number;
  /** Answers with another status than expected, plus connection errors and timeouts. */
  failures: number;
  statuses: Record<string, number>;
}

interface Round {
  requests: number;
  seconds: number;
  p99: number;
  failures: number;
  statuses: Record<string, number>;
}

async function round(url: string, request: BenchRequest, connections: number, seconds: number): Promise<Round> {
  const headers: Record<string, string> = { ...request.headers };
  const body = request.body === undefined ? undefined : JSON.stringify(request.body);
  if (body !== undefined) headers['content-type'] = 'application/json';
  let next = 0;
  const paths = request.paths;
  const result = await autocannon({
    url,
    connections,
    duration: seconds,
    requests: [
      {
        method: request.method,
        headers,
        body,
        path: paths[0],
        ...(paths.length > 1 ? { setupRequest: (req) => ({ ...req, path: paths[next++ % paths.length] }) } : {}),
      },
    ],
  });
  const statuses = Object.fromEntries(Object.entries(result.statusCodeStats ?? {}).map(([code, s]) => [code, s.count]));
  const expected = String(request.expectStatus ?? 200);
  const unexpected = Object.entries(statuses).reduce((n, [code, count]) => (code === expected ? n : n + count), 0);
  return { requests: result.requests.total, seconds: result.duration, p99: result.latency.p99, failures: unexpected + result.errors + result.timeouts, statuses };
}

function summarize(rounds: Round[]): Measurement {
  const total = rounds.reduce((n, r) => n + r.requests, 0);
  const seconds = rounds.reduce((n, r) => n + r.seconds, 0);
  const p99s = rounds.map((r) => r.p99).sort((a, b) => a - b);
  const statuses: Record<string, number> = {};
  for (const r of rounds) for (const [code, n] of Object.entries(r.statuses)) statuses[code] = (statuses[code] ?? 0) + n;
  return { rps: total / seconds, p99: p99s[Math.floor(p99s.length / 2)], total, failures: rounds.reduce((n, r) => n + r.failures, 0), statuses };
}

export interface Target {
  url: string;
  request: BenchRequest;
}

/** Warms both targets up, then measures them in alternating rounds (A B, B A, A B, …). */
export async function compare(a: Target, b: Target, options: LoadOptions): Promise<[Measurement, Measurement]> {
  if (options.warmup > 0) {
    await round(a.url, a.request, options.connections, options.warmup);
    await round(b.url, b.request, options.connections, options.warmup);
  }
  const perRound = Math.max(1, options.duration / options.rounds);
  const ra: Round[] = [];
  const rb: Round[] = [];
  for (let i = 0; i < options.rounds; i++) {
    const order: Array<[Target, Round[]]> = i % 2 === 0 ? [[a, ra], [b, rb]] : [[b, rb], [a, ra]];
    for (const [t, out] of order) out.push(await round(t.url, t.request, options.connections, perRound));
  }
  return [summarize(ra), summarize(rb)];
}
