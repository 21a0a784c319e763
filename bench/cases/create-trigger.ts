import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { waitFor } from '../../test/helpers/wait.ts';
import type { BenchCase, CairnClient } from '../case.ts';
import { baselineCreate } from './create.ts';
import { createPosts, post, rememberCollection } from './posts.ts';

const NAME = 'bench_create_hook';

// A receiver answering 204 to everything, counting what it got (GET /count). It runs in its own
// process: inside the bench process it would take CPU from the load generator and slow both targets.
const RECEIVER = `
const http = require('node:http');
let received = 0;
const server = http.createServer((req, res) => {
  if (req.method === 'GET') return res.end(String(received));
  req.resume();
  req.on('end', () => { received++; res.writeHead(204).end(); });
});
server.listen(0, '127.0.0.1', () => process.stdout.write(server.address().port + '\\n'));
`;

export async function startReceiver(): Promise<string> {
  const child = spawn(process.execPath, ['-e', RECEIVER], { stdio: ['ignore', 'pipe', 'inherit'] });
  const [port] = await once(child.stdout!, 'data');
  // Neither the child nor its pipe may keep the bench process alive at the end; it goes with it.
  child.stdout!.destroy();
  child.unref();
  process.on('exit', () => child.kill());
  return `http://127.0.0.1:${String(port).trim()}`;
}

export async function received(receiver: string): Promise<number> {
  return Number(await (await fetch(`${receiver}/count`)).text());
}

interface State {
  receiver: string;
  cairn: CairnClient;
  /** Events the receiver must have got by the end of the current round's drain. */
  expected: number;
}

/**
 * The create case with one webhook trigger on the collection: each create also writes an outbox event
 * in its transaction, and Cairn delivers it (POST to the receiver, log), during the load or, when the
 * load saturates it, after. After each round the bench waits until the receiver has every event of
 * the round and Cairn has logged each, and reports that drain time and the CPU per create including
 * it: the whole cost of delivery, wherever it falls. Compared with `create`, it shows what the outbox
 * and delivery cost (docs/performance.md).
 */
export const createTriggerCase: BenchCase<State> = {
  name: 'create-trigger',
  description: 'create a record with one webhook trigger (receiver on loopback)',
  // The outbox may cost at most a fifth of `create`'s throughput (issue 6): 0.8 × its 0.5 against the
  // baseline, and 0.8 of `create` itself when both run.
  target: 0.4,
  relativeTo: { name: 'create', target: 0.8 },

  async prepare(ctx) {
    const receiver = await startReceiver();
    const collection = await createPosts(ctx.cairn, NAME);
    await ctx.cairn.admin('PATCH', `/api/collections/${NAME}`, { options: { triggers: [{ action: 'create', url: `${receiver}/hook`, method: 'POST' }] } });
    // Checks the trigger works before measuring it.
    await ctx.cairn.admin('POST', `/api/collections/${NAME}/records`, post(0));
    await waitFor(async () => (await received(receiver)) > 0, { what: 'the first webhook at the bench receiver' });
    ctx.copyToBaseline(NAME);
    rememberCollection(ctx.baseline, NAME, collection.id);
    return { receiver, cairn: ctx.cairn, expected: await received(receiver) };
  },

  baseline: (app, db) => baselineCreate(app, db, NAME),

  request: () => ({ method: 'POST', paths: [`/api/collections/${NAME}/records`], body: post(7), expectStatus: 200 }),

  async afterRound(state, answered) {
    state.expected += answered;
    await waitFor(async () => (await received(state.receiver)) >= state.expected, {
      timeoutMs: 120_000,
      intervalMs: 10,
      what: `the receiver to get ${state.expected} webhooks`,
    });
    // Then until every attempt's outcome and log is written: that is background work of the round
    // too, and left running it would slow whichever round comes next.
    await waitFor(async () => (await state.cairn.admin<{ totalItems: number }>('GET', `/api/webhooks/logs?collection=${NAME}&perPage=1`)).totalItems >= state.expected, {
      timeoutMs: 120_000,
      intervalMs: 25,
      what: `Cairn to log ${state.expected} webhooks`,
    });
  },
};
