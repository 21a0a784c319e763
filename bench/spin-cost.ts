// `node --import tsx bench/spin-cost.ts`: does a response's kernel cost depend on how fast the server
// answers? A bare Fastify endpoint (no database: a fixed record) is measured at 50 connections as is
// and again burning SPIN_COST_US (default 40) of CPU per request in a busy loop, alternating over
// rounds. If the system's cost per response were fixed, the slow variant's CPU per request would be
// the fast one's plus the spin; what it costs beyond that is what the slower answers add elsewhere:
// on a virtual machine, chiefly waking the client (autocannon sleeps more often while a slower
// server answers, and each wake-up is an interrupt through the hypervisor). docs/performance.md uses
// it to tell Cairn's own work per view from what the machine adds to it.
import autocannon from 'autocannon';
import { startProcess } from './lib/servers.ts';

const SPIN_US = Number(process.env.SPIN_COST_US ?? 40);
const ROUNDS = Number(process.env.SPIN_COST_ROUNDS ?? 3);
const SECONDS = Number(process.env.SPIN_COST_SECONDS ?? 8);

// The child: the endpoint, its spin given by SPIN_US in its environment.
if (process.env.SPIN_COST_CHILD) {
  const { default: Fastify } = await import('fastify');
  const spin = BigInt(Number(process.env.SPIN_US) * 1000);
  const record = { id: 'abcdefghijklmno', collectionId: 'pbc_1234567890', collectionName: 'posts', created: '2026-11-25T10:00:00.000Z', updated: '2026-11-25T10:00:00.000Z', title: 'Post number 1', body: '<p>Body of post 1, long enough to look like a short paragraph of text.</p>', views: 1, published: false };
  const app = Fastify({ logger: false });
  app.get('/api/health', async () => ({ ok: true }));
  app.get('/record', async () => {
    if (spin > 0n) {
      const end = process.hrtime.bigint() + spin;
      while (process.hrtime.bigint() < end);
    }
    return record;
  });
  const port = Number(process.argv[process.argv.indexOf('--port') + 1]);
  await app.listen({ port, host: '127.0.0.1' });
} else {
  const cpu: Record<string, number[]> = { fast: [], slow: [] };
  for (let round = 0; round < ROUNDS; round++) {
    for (const variant of round % 2 === 0 ? ['fast', 'slow'] : ['slow', 'fast']) {
      const server = await startProcess(['--import', 'tsx', new URL(import.meta.url).pathname], { SPIN_COST_CHILD: '1', SPIN_US: variant === 'slow' ? String(SPIN_US) : '0' }, '/api/health');
      try {
        await autocannon({ url: `${server.url}/record`, connections: 50, duration: 1 });
        const before = server.cpuSeconds()!;
        const result = await autocannon({ url: `${server.url}/record`, connections: 50, duration: SECONDS });
        cpu[variant].push(((server.cpuSeconds()! - before) * 1e6) / result.requests.total);
      } finally {
        await server.stop();
      }
    }
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const fast = median(cpu.fast);
  const slow = median(cpu.slow);
  const f = (x: number) => x.toFixed(0);
  console.log(`CPU µs per request (median of ${ROUNDS} rounds; rounds ${cpu.fast.map(f).join(', ')} and ${cpu.slow.map(f).join(', ')}):`);
  console.log(`- as is: ${f(fast)}; burning ${SPIN_US} µs per request: ${f(slow)}`);
  console.log(`- the slower server pays ${f(slow - fast)} µs more per request for ${SPIN_US} µs of its own work: ${((slow - fast) / SPIN_US).toFixed(2)}×`);
}
