import { goTemplate } from './gotemplate.ts';
import { workerMain } from './worker.ts';

/** Helpers the compiled functions below may name (esbuild's `__name`), defined in the source they run in. */
const PRELUDE = 'var __name = (t, v) => Object.defineProperty(t, "name", { value: v, configurable: true });\n';

/** The pb_hooks runtime's source (worker.ts), run as a worker thread's script or, once, on the main thread (main-runtime.ts). */
export function runtimeSource(): string {
  return `${PRELUDE}var __goTemplate = ${goTemplate.toString()};\n(${workerMain.toString()})()`;
}

/** Room for an answer to a handler's `$app` call in the runtime's shared memory; larger ones go on its port. */
export const ANSWER_BYTES = 256 * 1024;
