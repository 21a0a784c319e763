import type { Collection } from '../../src/collections/model.ts';
import { type RequestContext, systemContext } from '../../src/context.ts';
import type { Database } from '../../src/storage/index.ts';
import { createCollection, startServer, type TestServer } from '../../test/helpers/server.ts';

/** A Cairn in this process (test server, logs silent) for measuring record writes without HTTP. */
export interface InProcess {
  server: TestServer;
  db: Database;
  ctx: RequestContext;
}

/**
 * Starts a Cairn in process with two collections of the same three fields: `plain`, and `hooked`
 * with a create trigger to `hookUrl`.
 */
export async function plainAndHooked(hookUrl: string): Promise<InProcess> {
  const server = await startServer({ env: { CAIRN_LOG_LEVEL: 'silent' } });
  const fields = [
    { name: 'title', type: 'text' },
    { name: 'body', type: 'text' },
    { name: 'views', type: 'number' },
  ];
  await createCollection(server, { name: 'plain', fields });
  await createCollection(server, { name: 'hooked', fields, options: { triggers: [{ action: 'create', url: hookUrl, method: 'POST' }] } });
  const db = await server.services.registry.get('main');
  return { server, db, ctx: systemContext('main', db) };
}

/** Creates `n` records in `collection` through RecordService, `concurrency` at a time (as concurrent requests share group commits). */
export async function createMany(p: InProcess, collection: Collection, n: number, concurrency: number): Promise<void> {
  for (let i = 0; i < n; i += concurrency) {
    await Promise.all(
      Array.from({ length: Math.min(concurrency, n - i) }, (_, j) => p.server.services.records.create(p.ctx, collection, { title: `t${i + j}`, body: 'x'.repeat(200), views: i + j })),
    );
  }
}
