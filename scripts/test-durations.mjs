// A node:test reporter that prints, when a pass ends, the test files that took longest (the sum of
// their top-level tests' durations) and the pass's wall time: CI's whole run must stay under 30
// minutes, and this shows where the time goes without reading the TAP output. Written synchronously
// to stderr on the runner's closing `todo` count, because --test-force-exit ends the process before
// a reporter's stream would close.
import { writeSync } from 'node:fs';

export default async function* slowestFiles(source) {
  const started = Date.now();
  const byFile = new Map();
  for await (const event of source) {
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0 && event.data.file) {
      byFile.set(event.data.file, (byFile.get(event.data.file) ?? 0) + (event.data.details?.duration_ms ?? 0));
    }
    if (event.type === 'test:diagnostic' && event.data.nesting === 0 && /^todo \d+$/.test(event.data.message)) {
      const slowest = [...byFile].sort((a, b) => b[1] - a[1]).slice(0, 15);
      const total = [...byFile.values()].reduce((a, b) => a + b, 0);
      const lines = [`\n# wall time ${((Date.now() - started) / 1000).toFixed(0)} s, files' durations summed ${(total / 1000).toFixed(0)} s; slowest files (seconds, their tests' durations summed):`];
      for (const [file, ms] of slowest) lines.push(`#   ${(ms / 1000).toFixed(1).padStart(7)}  ${file.replace(`${process.cwd()}/`, '')}`);
      writeSync(2, `${lines.join('\n')}\n`);
    }
  }
  yield '';
}
