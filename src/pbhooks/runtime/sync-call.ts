import { receiveMessageOnPort, type MessagePort } from 'node:worker_threads';

/**
 * The worker's side of the synchronous bridge to the main thread, shared by pb_hooks and
 * pb_migrations workers: post a call, block on the shared flag, read the answer from shared memory
 * (or from `port` when it did not fit). `label` names the runtime in the error of a lost answer.
 */
export function syncCaller(host: { postMessage(message: unknown): void }, shared: SharedArrayBuffer, port: MessagePort, label: string): (op: string, args: unknown[]) => string {
  /** [0]: 1 once the host's answer is ready, [1]: its length after these 8 bytes, or -1 when it is on the port. */
  const flag = new Int32Array(shared, 0, 2);
  const sleeper = new Int32Array(new SharedArrayBuffer(4));
  return (op, args) => {
    Atomics.store(flag, 0, 0);
    host.postMessage({ type: 'call', op, args });
    Atomics.wait(flag, 0, 0);
    const length = Atomics.load(flag, 1);
    if (length >= 0) return Buffer.from(shared, 8, length).toString('utf8');
    let msg = receiveMessageOnPort(port);
    // Now and then (2 in 300,000 calls measured on Node 20) the wake-up comes before the answer is
    // on the port: wait for it a little rather than fail the handler.
    for (let i = 0; !msg && i < 5000; i++) {
      Atomics.wait(sleeper, 0, 0, i < 100 ? 0.05 : 1);
      msg = receiveMessageOnPort(port);
    }
    if (!msg) throw new Error(`${label}: no answer to ${op}`);
    return msg.message as string;
  };
}
