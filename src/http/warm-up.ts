import type { FastifyInstance, InjectOptions } from 'fastify';
import type { CollectionService } from '../collections/service.ts';
import { rendererOf } from '../records/render.ts';
import { shapeOf } from '../records/shape.ts';
import type { DatabaseRegistry } from '../storage/registry.ts';

/**
 * What the first requests after a start would otherwise pay for (issue 48: 50 creates right after
 * start cost 1.7× the CPU of the next 50, and one request before them took nearly all of the
 * difference): V8 compiles a function when it is first called, so the first request through the HTTP
 * layer compiles Node's HTTP server, Fastify's routing, hooks and reply, and Cairn's request context,
 * logging, error answers and JSON body parsing, besides its own work.
 *
 * `warmUp` sends a few requests through the app in process (`inject`, no socket) before the server
 * listens. None of them reaches a collection, a rule or an application hook: they name a collection
 * no collection can be called (names are letters, digits and underscores), so each is answered 404
 * after the path every record request takes up to the collection's lookup; the health check reads
 * the system database. While it runs (`WarmUp.active`, before any client can connect) the request
 * log records nothing and the rate limits count nothing. Then each collection's record plan is made
 * (its shape, SQL texts and the JSON renderer a guest and a user get: records/shape.ts, render.ts),
 * as the first request on it would, and its lookup by id prepared on the reading connection: on
 * PostgreSQL that is the database's shared-read connection (postgres.md#shared-reads), which the
 * first view and the first signed-in request would otherwise open (a connection's set-up, 4–24 ms).
 */
export interface WarmUp {
  active: boolean;
}

const NOWHERE = '/api/collections/cairn-warm-up/records';

const REQUESTS: InjectOptions[] = [
  { method: 'GET', url: '/api/health' },
  { method: 'GET', url: `${NOWHERE}?perPage=1&filter=${encodeURIComponent("id='x'")}` },
  { method: 'GET', url: `${NOWHERE}/warmupwarmupwar` },
  { method: 'POST', url: NOWHERE, payload: { title: 'warm-up', views: 1, published: true } },
  { method: 'PATCH', url: `${NOWHERE}/warmupwarmupwar`, payload: { title: 'warm-up' } },
  { method: 'DELETE', url: `${NOWHERE}/warmupwarmupwar` },
];

// Each request twice: the second runs what the first left for later (inline caches, lazily made objects).
const ROUNDS = 2;

export interface WarmUpServices {
  registry: DatabaseRegistry;
  collections: CollectionService;
}

/** Sends the warm-up requests and makes the plans (a few milliseconds); a failure is ignored, never stops a start. */
export async function warmUp(app: FastifyInstance, state: WarmUp, services: WarmUpServices): Promise<void> {
  state.active = true;
  try {
    for (let round = 0; round < ROUNDS; round++) for (const request of REQUESTS) await app.inject(request);
  } catch {
    // Only a warm-up: the requests it sends are served as any other would be.
  } finally {
    state.active = false;
  }
  for (const name of services.registry.openedNames()) {
    try {
      const db = services.registry.opened(name);
      if (!db) continue;
      for (const collection of (await services.collections.all(db)).list) {
        const shape = shapeOf(collection);
        rendererOf(shape, { privileged: false });
        // A view's lookup runs its query: left to the first request that asks.
        if (collection.type !== 'view') await db.lookup(shape.selectById, ['']);
      }
    } catch {
      // As above.
    }
  }
}
