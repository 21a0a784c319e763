// A host for the runtime's unit tests: answers `$app` operations from a table and records every
// call and log line, so a module's requests to the host can be read back.
import vm from 'node:vm';
import { createPbRuntime, type PbRuntime } from '../../../src/pbhooks/runtime/index.ts';

export interface TestHost {
  runtime: PbRuntime;
  calls: { op: string; args: any[] }[];
  logs: { level: string; msg: string; data: Record<string, unknown> }[];
  /** Evaluates `src` as a hook file and returns the value of `expr` in the context afterwards. */
  eval(expr: string): any;
}

export function testHost(answers: Record<string, (...args: any[]) => unknown> = {}, options: { migrate?: (up: unknown, down: unknown) => void; hooksDir?: string } = {}): TestHost {
  const calls: TestHost['calls'] = [];
  const logs: TestHost['logs'] = [];
  const runtime = createPbRuntime({
    hooksDir: options.hooksDir ?? '/nowhere',
    migrate: options.migrate,
    bridge: {
      call: (op, args) => {
        calls.push({ op, args });
        const answer = answers[op];
        if (!answer) return { error: { status: 404, message: `no ${op} here` } };
        return { value: answer(...args) };
      },
      log: (level, msg, data) => logs.push({ level, msg, data }),
    },
  });
  return { runtime, calls, logs, eval: (expr) => vm.runInContext(expr, runtime.context) };
}
