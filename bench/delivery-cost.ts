// `node --import tsx bench/delivery-cost.ts`: what a webhook costs a record create, delivery included,
// in process and without the API's HTTP: records are created through RecordService (as
// bench/outbox-write.ts does) in a collection without trigger and in one with a trigger to a receiver
// in its own process, alternating over rounds. A trigger round ends when the receiver has every event
// and the outcomes and logs are written; the process's CPU time (process.cpuUsage) over each round,
// per create, is printed with the difference: the outbox write plus the delivery (the request,
// signature, log and settle). Creates go DELIVERY_BENCH_CONCURRENCY at a time (default 20), flat out,
// so the event loop saturates and the pacer defers deliveries as under sustained load. On a busy
// machine compare the difference between code versions, run alternately, rather than absolute figures.
import { waitFor } from '../test/helpers/wait.ts';
import { received, startReceiver } from './cases/create-trigger.ts';
import { createMany, plainAndHooked } from './lib/in-process.ts';

const N = Number(process.env.DELIVERY_BENCH_RECORDS ?? 10_000);
const CONCURRENCY = Number(process.env.DELIVERY_BENCH_CONCURRENCY ?? 20);
const ROUNDS = Number(process.env.DELIVERY_BENCH_ROUNDS ?? 4);
const receiver = await startReceiver();
const cairn = await plainAndHooked(`${receiver}/hook`);
const { server, db } = cairn;
try {
  const results: Record<string, number[]> = { plain: [], hooked: [] };
  let expected = await received(receiver);
  for (let round = 0; round < ROUNDS; round++) {
    for (const name of ['plain', 'hooked']) {
      const collection = await server.services.collections.get(db, name);
      const cpu = process.cpuUsage();
      await createMany(cairn, collection, N, CONCURRENCY);
      if (name === 'hooked') {
        expected += N;
        await waitFor(async () => (await received(receiver)) >= expected, { timeoutMs: 300_000, intervalMs: 100, what: `the receiver to get ${expected} webhooks` });
        await waitFor(async () => Number((await db.get<{ n: number }>("SELECT COUNT(*) AS n FROM _webhook_logs WHERE collection = 'hooked'"))?.n) >= expected, {
          timeoutMs: 60_000,
          intervalMs: 100,
          what: 'every attempt to be logged',
        });
      }
      const used = process.cpuUsage(cpu);
      results[name].push((used.user + used.system) / N);
    }
  }
  const fmt = (xs: number[]) => xs.map((x) => String(Math.round(x)).padStart(4)).join(' ');
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(`CPU µs per create, ${N} creates per round, ${CONCURRENCY} at a time (the first round warms up):`);
  console.log(`plain   ${fmt(results.plain)}`);
  console.log(`hooked  ${fmt(results.hooked)}`);
  const diff = results.hooked.map((h, i) => h - results.plain[i]).slice(1);
  console.log(`difference (outbox write + delivery), rounds after the first: ${fmt(diff)}; median ${Math.round(median(diff))}`);
} finally {
  await server.close();
}
