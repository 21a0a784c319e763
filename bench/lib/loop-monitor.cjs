// BENCH_LOOP=1: preloaded (`node --require`) into both servers to say where their latency goes,
// in figures the rest of the machine's load barely moves. CommonJS and plain JavaScript, so it loads
// before anything else (and before tsx) in either process.
//
// - Turns: for each event loop turn that handled requests, its wall time split into the main
//   thread's own CPU time and its time waiting for a core (run queue), from
//   /proc/thread-self/schedstat. At saturation a request's latency is about a turn or two, so the
//   turns' CPU shows what the server itself adds to the tail, and their wait what the machine adds
//   (a turn is counted from its first request to the end of the turn: the socket reads before that
//   are left out, alike on both servers).
// - GC pauses on the main thread (PerformanceObserver).
// - CPU by thread (/proc/self/task): the event loop, V8's helper threads (parallel scavenges,
//   concurrent marking) and the rest (worker threads, libuv's pool).
//
// The bench sends SIGUSR2 before and after each case: the monitor appends what it saw since the
// previous signal to BENCH_LOOP_FILE as one JSON line, then starts again. Linux only (elsewhere the
// turn and thread figures are absent).
'use strict';
const fs = require('node:fs');
const http = require('node:http');
const { PerformanceObserver, constants } = require('node:perf_hooks');

const out = process.env.BENCH_LOOP_FILE;
if (out) {
  let schedFd;
  try {
    schedFd = fs.openSync('/proc/thread-self/schedstat', 'r');
  } catch {}
  const buf = Buffer.alloc(128);
  /** [on-CPU ms, run-queue ms] of this thread so far. */
  const sched = () => {
    const n = fs.readSync(schedFd, buf, 0, buf.length, 0);
    const [run, wait] = buf.toString('latin1', 0, n).split(' ');
    return [Number(run) / 1e6, Number(wait) / 1e6];
  };
  const threadCpu = () => {
    const ms = {};
    try {
      for (const tid of fs.readdirSync('/proc/self/task')) {
        const stat = fs.readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
        const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
        ms[tid] = (Number(f[11]) + Number(f[12])) * 10; // utime + stime, in clock ticks of 10 ms
      }
    } catch {}
    return ms;
  };
  // V8's platform threads start with the process, right after the main thread; everything else
  // (libuv's pool, worker threads) starts later. Their thread ids are in creation order.
  const v8Threads = new Set(
    Object.keys(threadCpu())
      .map(Number)
      .filter((tid) => tid !== process.pid)
      .sort((a, b) => a - b)
      .slice(0, 4)
      .map(String),
  );

  let requests = 0;
  let turns = [];
  let gc = [];
  let cpu0 = threadCpu();
  let armed = false;
  let t0 = 0;
  let s0 = [0, 0];
  let inTurn = 0;
  const endTurn = () => {
    armed = false;
    // schedstat's run-queue time is exact (a wait is counted when the thread gets its core back), its
    // on-CPU time is not for a running thread (updated at scheduler ticks): the turn's CPU is its wall
    // time less its wait, since the loop thread does not sleep inside a turn.
    const wall = performance.now() - t0;
    const wait = sched()[1] - s0[1];
    turns.push([wall, Math.max(0, wall - wait), wait, inTurn]);
  };
  const emit = http.Server.prototype.emit;
  http.Server.prototype.emit = function (event, ...args) {
    if (event === 'request') {
      requests++;
      if (schedFd !== undefined && !armed) {
        armed = true;
        inTurn = 0;
        t0 = performance.now();
        s0 = sched();
        setImmediate(endTurn);
      }
      inTurn++;
    }
    return emit.call(this, event, ...args);
  };
  const kinds = { [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge', [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact', [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental' };
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) gc.push([kinds[e.detail?.kind] ?? 'other', e.duration]);
  }).observe({ entryTypes: ['gc'] });

  const pct = (values, q) => {
    if (values.length === 0) return 0;
    const s = [...values].sort((a, b) => a - b);
    return s[Math.min(s.length - 1, Math.floor(q * s.length))];
  };
  const round1 = (n) => Math.round(n * 10) / 10;
  process.on('SIGUSR2', () => {
    const cpu1 = threadCpu();
    if (requests > 0) {
      let main = 0;
      let v8 = 0;
      let other = 0;
      for (const [tid, ms] of Object.entries(cpu1)) {
        const used = ms - (cpu0[tid] ?? 0);
        if (tid === String(process.pid)) main += used;
        else if (v8Threads.has(tid)) v8 += used;
        else other += used;
      }
      // Turns that handled a good share of the connections: the saturated ones.
      const busy = turns.filter((t) => t[3] >= 10);
      const col = (i) => busy.map((t) => t[i]);
      const pauses = gc.map((g) => g[1]);
      const perRequest = (ms) => round1((ms * 1000) / requests);
      const report = {
        requests,
        turns: busy.length,
        requestsPerTurn: pct(col(3), 0.5),
        wallMs: { p50: round1(pct(col(0), 0.5)), p99: round1(pct(col(0), 0.99)) },
        cpuMs: { p50: round1(pct(col(1), 0.5)), p99: round1(pct(col(1), 0.99)) },
        waitMs: { p50: round1(pct(col(2), 0.5)), p99: round1(pct(col(2), 0.99)) },
        gc: { pauses: pauses.length, usPerRequest: round1((pauses.reduce((a, b) => a + b, 0) * 1000) / requests), p99Ms: round1(pct(pauses, 0.99)), maxMs: round1(Math.max(0, ...pauses)), markCompacts: gc.filter((g) => g[0] === 'mark-compact').length },
        cpuUsPerRequest: { loop: perRequest(main), v8Helpers: perRequest(v8), otherThreads: perRequest(other) },
      };
      fs.appendFileSync(out, `${JSON.stringify(report)}\n`);
    } else {
      fs.appendFileSync(out, '{}\n');
    }
    requests = 0;
    turns = [];
    gc = [];
    cpu0 = cpu1;
  });
}
