import type { FastifyInstance } from 'fastify';
import type { CollectionService } from '../../collections/service.ts';
import { rulesOf, updateRules } from '../../rules/access/rules-resource.ts';
import { requireAdmin } from '../guards.ts';

type Params = { Params: { name: string } };

/** The access-rule resource of a collection (API contract §6). */
export function ruleRoutes(collections: CollectionService) {
  return async (app: FastifyInstance): Promise<void> => {
    app.get<Params>('/api/collections/:name/rules', async (req) => {
      requireAdmin(req.ctx);
      return rulesOf(await collections.get(req.ctx.db, req.params.name));
    });

    app.put<Params>('/api/collections/:name/rules', async (req) => {
      requireAdmin(req.ctx);
      return updateRules(collections, req.ctx.db, req.params.name, req.body ?? {});
    });
  };
}
