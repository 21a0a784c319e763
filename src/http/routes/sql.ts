import type { FastifyInstance } from 'fastify';
import { runSql } from '../../sql/console.ts';
import { requireSuperuser } from '../guards.ts';

/** `POST /api/sql`: the SQL console of the `x-dbname` database, for superusers (PocketBase ≥ 0.37). */
export function sqlRoutes() {
  return async (app: FastifyInstance): Promise<void> => {
    app.post('/api/sql', async (req) => {
      requireSuperuser(req.ctx, 'run SQL');
      return runSql(req.ctx.db, req.body);
    });
  };
}
