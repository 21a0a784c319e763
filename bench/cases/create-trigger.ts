import { once } from 'node:events';
import { createServer } from 'node:http';
import { waitFor } from '../../test/helpers/wait.ts';
import type { BenchCase } from '../case.ts';
import { baselineCreate } from './create.ts';
import { createPosts, post, rememberCollection } from './posts.ts';

const NAME = 'bench_create_hook';

/** A webhook receiver on loopback, in the bench process, answering 204 to everything. */
async function startReceiver(): Promise<{ url: string; received: () => number }> {
  let received = 0;
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      received++;
      res.writeHead(204).end();
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  // Lives as long as the bench process, without keeping it alive at the end.
  server.unref();
  const address = server.address();
  return { url: `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/hook`, received: () => received };
}

/**
 * The create case with one webhook trigger on the collection: each create also writes an outbox event
 * in its transaction, and Cairn delivers it (claim, POST to the receiver, log) while the load runs.
 * Compared with `create`, it shows what the outbox and delivery cost (docs/performance.md).
 */
export const createTriggerCase: BenchCase = {
  name: 'create-trigger',
  description: 'create a record with one webhook trigger (receiver on loopback)',
  // The outbox may cost at most a fifth of `create`'s throughput: 0.8 × its 0.5.
  target: 0.4,

  async prepare(ctx) {
    const receiver = await startReceiver();
    const collection = await createPosts(ctx.cairn, NAME);
    await ctx.cairn.admin('PATCH', `/api/collections/${NAME}`, { options: { triggers: [{ action: 'create', url: receiver.url, method: 'POST' }] } });
    // Checks the trigger works before measuring it.
    await ctx.cairn.admin('POST', `/api/collections/${NAME}/records`, post(0));
    await waitFor(() => receiver.received() > 0, { what: 'the first webhook at the bench receiver' });
    ctx.copyToBaseline(NAME);
    rememberCollection(ctx.baseline, NAME, collection.id);
  },

  baseline: (app, db) => baselineCreate(app, db, NAME),

  request: () => ({ method: 'POST', paths: [`/api/collections/${NAME}/records`], body: post(7), expectStatus: 200 }),
};
