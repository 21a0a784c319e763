// A node:test reporter for what CI's log must show without reading the TAP output:
//
// - when a pass ends, the test files that took longest (the sum of their top-level tests' durations)
//   and the pass's wall time: CI's whole run must stay under 30 minutes, and this shows where the
//   time goes. Written synchronously to stderr on the runner's closing `todo` count, because
//   --test-force-exit ends the process before a reporter's stream would close.
// - each failed test, with its error and the last lines its file printed (a server's logged cause),
//   appended to the file named by CAIRN_TEST_FAILURES: scripts/run-tests.mjs prints them after every
//   pass, at the very end of the log, where a shortened copy of the log still shows them.
import { appendFileSync, writeSync } from 'node:fs';

const OUTPUT_LINES = 30;

function describeError(error) {
  const cause = error?.cause ?? error;
  const text = String(cause?.stack ?? cause?.message ?? cause);
  return text.split('\n').slice(0, 12).join('\n');
}

// The bundle a test ran from (.test-build/012/test/x.test.mjs) named by its source (test/x.test.ts).
function sourceOf(file) {
  return (file ?? '?').replace(`${process.cwd()}/`, '').replace(/^\.test-build\/\d+\/(.*)\.mjs$/, '$1.ts');
}

export default async function* slowestFiles(source) {
  const started = Date.now();
  const byFile = new Map();
  const output = new Map();
  const failures = [];
  for await (const event of source) {
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0 && event.data.file) {
      byFile.set(event.data.file, (byFile.get(event.data.file) ?? 0) + (event.data.details?.duration_ms ?? 0));
    }
    if ((event.type === 'test:stdout' || event.type === 'test:stderr') && event.data.file) {
      const lines = output.get(event.data.file) ?? [];
      lines.push(...String(event.data.message).trimEnd().split('\n'));
      output.set(event.data.file, lines.slice(-OUTPUT_LINES));
    }
    // A suite fails when a test in it fails; the test itself says why.
    if (event.type === 'test:fail' && event.data.details?.error?.failureType !== 'subtestsFailed') {
      failures.push({ file: event.data.file, name: event.data.name, error: describeError(event.data.details?.error) });
    }
    if (event.type === 'test:diagnostic' && event.data.nesting === 0 && /^todo \d+$/.test(event.data.message)) {
      const slowest = [...byFile].sort((a, b) => b[1] - a[1]).slice(0, 15);
      const total = [...byFile.values()].reduce((a, b) => a + b, 0);
      const lines = [`\n# wall time ${((Date.now() - started) / 1000).toFixed(0)} s, files' durations summed ${(total / 1000).toFixed(0)} s; slowest files (seconds, their tests' durations summed):`];
      for (const [file, ms] of slowest) lines.push(`#   ${(ms / 1000).toFixed(1).padStart(7)}  ${file.replace(`${process.cwd()}/`, '')}`);
      writeSync(2, `${lines.join('\n')}\n`);
      if (failures.length > 0 && process.env.CAIRN_TEST_FAILURES) {
        const report = failures.map((f) => {
          const printed = output.get(f.file) ?? [];
          return [
            `## ${sourceOf(f.file)}: ${f.name}`,
            f.error,
            ...(printed.length > 0 ? [`-- the file's last ${printed.length} printed lines:`, ...printed] : []),
          ].join('\n');
        });
        appendFileSync(process.env.CAIRN_TEST_FAILURES, `${report.join('\n\n')}\n\n`);
      }
    }
  }
  yield '';
}
