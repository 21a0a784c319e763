/**
 * A pb_hooks worker thread (API contract §22): this module and what it imports are bundled by
 * esbuild into the worker's script (bundle.ts). It evaluates every `*.pb.js` file in one runtime
 * (index.ts) and reports what they registered; the host then runs a handler by its index.
 *
 * What a handler asks of `$app` is posted to the host, and this thread waits on a shared integer
 * (`Atomics.wait`) until the answer is in shared memory or on its port: the handler's calls are
 * synchronous, as in PocketBase's goja, and only this thread blocks.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { syncCaller } from './sync-call.ts';
import { createPbRuntime, runForHost } from './index.ts';

const { files, hooksDir, shared, port, sources } = workerData as { files: string[]; hooksDir: string; shared: SharedArrayBuffer; port: MessagePort; sources?: boolean };
const host = parentPort!;
const call = syncCaller(host, shared, port, 'pb_hooks');

const runtime = createPbRuntime({
  bridge: { call, log: (level, msg, data) => host.postMessage({ type: 'log', level, args: [msg, data] }) },
  hooksDir,
  sources,
});
for (const file of files) runtime.evaluate(file);
host.on('message', (msg: any) => {
  if (msg.type === 'run') host.postMessage(runForHost(runtime, msg.index, msg.payload));
});
host.postMessage({ type: 'loaded', regs: runtime.regs });
