// Preloaded into the Cairn process by the soak (`node --import bench/lib/loop-delay.mjs bin/cairn.js
// …`): every BENCH_LOOP_DELAY_INTERVAL_MS it appends one JSON line to BENCH_LOOP_DELAY_FILE with the
// event-loop delay over that interval (perf_hooks.monitorEventLoopDelay, 10 ms resolution, the
// resolution subtracted) and the process's memory. It measures the real loop from inside without a
// line of Cairn changing; the histogram costs a few kilobytes.
import { appendFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const file = process.env.BENCH_LOOP_DELAY_FILE;
if (file) {
  const interval = Number(process.env.BENCH_LOOP_DELAY_INTERVAL_MS || 30_000);
  const RESOLUTION_MS = 10;
  const histogram = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  histogram.enable();
  // The histogram holds the time between the sampling timer's runs, the resolution included: an idle
  // loop reads 10.1 ms. The delay is what exceeds it.
  const ms = (ns) => Math.max(0, Math.round((ns / 1e6 - RESOLUTION_MS) * 100) / 100);
  const timer = setInterval(() => {
    const m = process.memoryUsage();
    const line = {
      at: Date.now(),
      rss: m.rss,
      heapUsed: m.heapUsed,
      p50: ms(histogram.percentile(50)),
      p99: ms(histogram.percentile(99)),
      max: ms(histogram.max),
      mean: ms(histogram.mean),
    };
    histogram.reset();
    appendFileSync(file, `${JSON.stringify(line)}\n`);
  }, interval);
  timer.unref();
}
