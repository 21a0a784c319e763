import http from 'node:http';

/**
 * Requests as PocketBase's benchmark sends them: a new TCP connection for every request (its Go client
 * builds a new transport per request), never a kept-alive one, so each request pays for the connect
 * and for the server's per-connection set-up.
 */
export interface Answer {
  /** The HTTP status; 0 when the request failed before an answer (refused, reset, timed out). */
  status: number;
  text: string;
}

export function send(base: string, method: string, path: string, options: { body?: unknown; token?: string } = {}): Promise<Answer> {
  const url = new URL(path, base);
  const body = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve) => {
    const req = http.request(
      url,
      {
        method,
        agent: false,
        headers: {
          connection: 'close',
          ...(body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) }),
          ...(options.token ? { authorization: options.token } : {}),
        },
        timeout: 120_000,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
        res.on('error', (err) => resolve({ status: 0, text: String(err) }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', (err) => resolve({ status: 0, text: String(err) }));
    req.end(body);
  });
}

/** One scenario's outcome: PocketBase's "Completed" (wall time of all requests) and what we add. */
export interface Outcome {
  iterations: number;
  concurrency: number;
  completedMs: number;
  rps: number;
  p50Ms: number;
  p99Ms: number;
  /** Server CPU per request (the Cairn process; PostgreSQL's own work is not in it). */
  cpuUs?: number;
  errors: number;
  /** Statuses other than 2xx, and 0 for requests that got no answer, with a sample message. */
  failures: Record<string, { count: number; sample: string }>;
}

/**
 * Runs `iterations` requests, at most `concurrency` at once (PocketBase's errgroup with a limit), and
 * times them. `cpuSeconds` reads the server's CPU time before and after.
 */
export async function burst(iterations: number, concurrency: number, one: (i: number) => Promise<Answer>, cpuSeconds?: () => number | undefined): Promise<Outcome> {
  const times: number[] = new Array(iterations);
  const failures: Outcome['failures'] = {};
  let errors = 0;
  let next = 0;
  const cpuBefore = cpuSeconds?.();
  const started = performance.now();
  const worker = async () => {
    while (next < iterations) {
      const i = next++;
      const t = performance.now();
      const answer = await one(i);
      times[i] = performance.now() - t;
      if (answer.status < 200 || answer.status >= 300) {
        errors++;
        const f = (failures[String(answer.status)] ??= { count: 0, sample: answer.text.slice(0, 160) });
        f.count++;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, iterations) }, worker));
  const completedMs = performance.now() - started;
  const cpuAfter = cpuSeconds?.();
  const sorted = [...times].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
  return {
    iterations,
    concurrency,
    completedMs,
    rps: iterations / (completedMs / 1000),
    p50Ms: at(0.5),
    p99Ms: at(0.99),
    cpuUs: cpuBefore === undefined || cpuAfter === undefined ? undefined : ((cpuAfter - cpuBefore) * 1e6) / iterations,
    errors,
    failures,
  };
}
