import type { FastifyInstance } from 'fastify';
import { VERSION } from '../../version.ts';

export async function healthRoutes(app: FastifyInstance): Promise<void> {
  app.get('/api/health', { config: { database: false } }, async () => ({ code: 200, message: 'API is healthy.', data: { version: VERSION } }));
}
