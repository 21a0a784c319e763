/**
 * The pb_migrations worker thread: this module and the pb_hooks runtime's modules it imports are
 * bundled by esbuild into the worker's script (worker.ts), so migrations run PocketBase's JavaScript
 * API from the same implementation as pb_hooks. Each file runs in a runtime of its own (PocketBase
 * gives each file a fresh VM), with `migrate(up, down)` received here; the chosen function gets
 * `$app` (≥ 0.23) or a `db` handle that `new Dao(db)` takes (v0.22).
 *
 * Its `$app` calls are posted to the host, which answers them in the file's transaction; this
 * thread waits on a shared integer meanwhile, so the calls are synchronous, as in PocketBase's goja.
 */
import { parentPort, workerData, type MessagePort } from 'node:worker_threads';
import { syncCaller } from '../pbhooks/runtime/sync-call.ts';
import { createPbRuntime, serialize } from '../pbhooks/runtime/index.ts';
import { generation } from '../pbhooks/runtime/loader.ts';

const { shared, port } = workerData as { shared: SharedArrayBuffer; port: MessagePort };
const host = parentPort!;
const call = syncCaller(host, shared, port, 'pb_migrations');

interface RunMessage {
  type: 'run';
  source: string;
  path: string;
  dir: string;
  direction: 'up' | 'down';
}

function run(msg: RunMessage): { registered: boolean } {
  let registered: [unknown, unknown] | undefined;
  const runtime = createPbRuntime({
    bridge: { call, log: (level, text, data) => host.postMessage({ type: 'log', level, args: [text, data] }) },
    hooksDir: msg.dir,
    // PocketBase keeps the first registration of a file.
    migrate: (up, down) => {
      registered ??= [up, down];
    },
  });
  runtime.evaluate(msg.path, msg.source);
  if (!registered) return { registered: false };
  const fn = msg.direction === 'up' ? registered[0] : registered[1];
  if (typeof fn === 'function') {
    const $app = runtime.globals.$app;
    // v0.22 gave the function the database handle (`new Dao(db)` takes it; `db.newQuery(…)` runs SQL);
    // ≥ 0.23 gives the app. The handle answers the app's calls too, for files that mix both.
    const v22 = generation(msg.source) === 22 || /migrate\(\s*(?:function\s*)?\(?\s*db\b/.test(msg.source);
    const arg = v22 ? handle($app, $app.db()) : $app;
    fn(arg);
    runtime.settle();
  }
  return { registered: true };
}

/** The database handle of v0.22's `migrate((db) => …)`: dbx's builder, with the app's calls beside it. */
function handle($app: any, db: any): any {
  return new Proxy(db, {
    get(target, key) {
      const own = key in target;
      const value = own ? target[key] : $app[key];
      return typeof value === 'function' ? value.bind(own ? target : $app) : value;
    },
  });
}

host.on('message', (msg: RunMessage) => {
  if (msg.type !== 'run') return;
  try {
    host.postMessage({ type: 'done', result: run(msg) });
  } catch (err) {
    // The stack names the file's line (an error from a host call too: it is made where the file called).
    const error = serialize(err);
    const stack = err && typeof err === 'object' && 'stack' in err ? String((err as Error).stack) : undefined;
    const name = err && typeof err === 'object' && 'name' in err ? String((err as Error).name) : undefined;
    host.postMessage({ type: 'fail', error: { ...error, stack, name } });
  }
});
host.postMessage({ type: 'ready' });
