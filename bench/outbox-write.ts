// `node --import tsx bench/outbox-write.ts`: what writing a webhook event costs a record create, apart
// from delivering it. In process, without HTTP: records are created through RecordService in two
// collections, one without trigger and one with a trigger, alternating over 4 rounds, with the
// delivery worker stopped. Creates go OUTBOX_BENCH_CONCURRENCY at a time (default 20), as a server's
// concurrent requests do, so they share group commits as there. Prints CPU time (process.cpuUsage)
// and wall time per create. OUTBOX_BENCH_ONLY=plain|hooked and OUTBOX_BENCH_ROUNDS (default 4) serve
// instruction counts under `valgrind --tool=callgrind` (repeatable where CPU time on a shared
// machine is not): the difference between a `hooked` and a `plain` run of N creates, over N.
// See docs/performance.md; the history of the outbox measurements is in the commit log.
import { createMany, plainAndHooked } from './lib/in-process.ts';

const N = Number(process.env.OUTBOX_BENCH_RECORDS ?? 2000);
const CONCURRENCY = Number(process.env.OUTBOX_BENCH_CONCURRENCY ?? 20);
const cairn = await plainAndHooked('http://127.0.0.1:9/hook');
const { server, db } = cairn;
try {
  // Events stay in the outbox: only the write in the record's transaction is measured.
  await server.services.webhooks.stop();
  const results: Record<string, string[]> = { plain: [], hooked: [] };
  for (let round = 0; round < Number(process.env.OUTBOX_BENCH_ROUNDS ?? 4); round++) {
    for (const name of (process.env.OUTBOX_BENCH_ONLY ? [process.env.OUTBOX_BENCH_ONLY] : ['plain', 'hooked'])) {
      const collection = await server.services.collections.get(db, name);
      const cpu = process.cpuUsage();
      const started = performance.now();
      await createMany(cairn, collection, N, CONCURRENCY);
      const used = process.cpuUsage(cpu);
      results[name].push(`${Math.round((used.user + used.system) / N)} / ${Math.round(((performance.now() - started) * 1000) / N)}`);
    }
  }
  console.log(`µs per create, CPU / wall, ${N} creates per round, ${CONCURRENCY} at a time (the first round warms up):`);
  for (const [name, rounds] of Object.entries(results)) console.log(`${name.padEnd(7)} ${rounds.join('   ')}`);
} finally {
  await server.close();
}
