import type { FastifyInstance } from 'fastify';
import { DEFAULT_AUTH_SETTINGS } from '../../collections/auth-settings.ts';
import { blankCollection, type Collection, type CollectionType } from '../../collections/model.ts';
import { collectionJson, type CollectionJsonDefaults } from '../../collections/pocketbase-shapes.ts';
import type { CollectionService } from '../../collections/service.ts';
import { isSuperusers, SUPERUSERS_COLLECTION } from '../../collections/superusers.ts';
import { badRequest } from '../../errors.ts';
import { pagination, param } from '../../records/query-params.ts';
import type { RecordService } from '../../records/service.ts';
import { truncateCollection } from '../../records/truncate.ts';
import { requireAdmin } from '../guards.ts';

type NameParams = { Params: { name: string } };

/** A new collection of each type as the create form starts from (PocketBase's scaffolds). */
function scaffold(type: CollectionType): Collection {
  return blankCollection(type, { options: type === 'auth' ? { ...DEFAULT_AUTH_SETTINGS } : type === 'view' ? { query: '' } : {} });
}

/** `_superusers` is Cairn's administrators: listed with every database's collections, never changed here. */
function refuseSuperusers(name: string, action: string): void {
  if (isSuperusers(name)) throw badRequest(`_superusers is a system collection and cannot be ${action}; manage administrators through its records.`);
}

export function collectionRoutes(collections: CollectionService, records: RecordService, defaults: CollectionJsonDefaults) {
  const json = (c: Collection) => collectionJson(c, defaults);
  return async (app: FastifyInstance): Promise<void> => {
    app.get('/api/collections', async (req) => {
      requireAdmin(req.ctx);
      const query = req.query as Record<string, unknown>;
      const { page, perPage } = pagination(query);
      const set = await collections.all(req.ctx.db);
      const type = param(query.type);
      const all = [SUPERUSERS_COLLECTION, ...set.list].filter((c) => type === '' || c.type === type);
      return {
        page,
        perPage,
        totalItems: all.length,
        totalPages: Math.ceil(all.length / perPage),
        items: all.slice((page - 1) * perPage, page * perPage).map(json),
      };
    });

    app.post('/api/collections', async (req) => {
      requireAdmin(req.ctx);
      return json(await collections.create(req.ctx.db, req.body));
    });

    app.get('/api/collections/meta/scaffolds', async (req) => {
      requireAdmin(req.ctx);
      return { base: json(scaffold('base')), auth: json(scaffold('auth')), view: json(scaffold('view')) };
    });

    app.get<NameParams>('/api/collections/:name', async (req) => {
      requireAdmin(req.ctx);
      if (isSuperusers(req.params.name)) return json(SUPERUSERS_COLLECTION);
      return json(await collections.get(req.ctx.db, req.params.name));
    });

    app.patch<NameParams>('/api/collections/:name', async (req) => {
      requireAdmin(req.ctx);
      refuseSuperusers(req.params.name, 'changed');
      return json(await collections.update(req.ctx.db, req.params.name, req.body ?? {}));
    });

    app.delete<NameParams>('/api/collections/:name', async (req, reply) => {
      requireAdmin(req.ctx);
      refuseSuperusers(req.params.name, 'deleted');
      await collections.remove(req.ctx.db, req.params.name);
      return reply.status(204).send();
    });

    app.delete<NameParams>('/api/collections/:name/truncate', async (req, reply) => {
      requireAdmin(req.ctx);
      refuseSuperusers(req.params.name, 'truncated');
      await truncateCollection(records, req.ctx, await collections.get(req.ctx.db, req.params.name));
      return reply.status(204).send();
    });
  };
}
