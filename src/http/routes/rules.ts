import type { FastifyInstance } from 'fastify';
import type { CollectionService } from '../../collections/service.ts';
import { rulesOf, updateRules } from '../../rules/access/rules-resource.ts';
import type { Automigrate } from '../../pbmigrations/automigrate.ts';
import { requireAdmin } from '../guards.ts';

type Params = { Params: { name: string } };

/** The access-rule resource of a collection (API contract §6); a change is automigrate's, as the collection's PATCH. */
export function ruleRoutes(collections: CollectionService, automigrate?: Automigrate) {
  return async (app: FastifyInstance): Promise<void> => {
    app.get<Params>('/api/collections/:name/rules', async (req) => {
      requireAdmin(req.ctx);
      return rulesOf(await collections.get(req.ctx.db, req.params.name));
    });

    app.put<Params>('/api/collections/:name/rules', async (req) => {
      requireAdmin(req.ctx);
      const update = () => updateRules(collections, req.ctx.db, req.params.name, req.body ?? {});
      return automigrate ? automigrate.around(collections, req.ctx.db, req.params.name, update) : update();
    });
  };
}
