import type { FastifyInstance } from 'fastify';
import { DEFAULT_AUTH_COLLECTION, type RecordAuthService } from '../../auth/record-auth.ts';
import { unauthorized } from '../../errors.ts';

type Body = Record<string, unknown> | undefined;
type CollectionParams = { Params: { collection: string } };

/** OAuth2 providers as the auth-method list shows them; filled in by the OAuth2 domain. */
export type ProviderLister = (redirectUrl?: string) => Promise<Array<Record<string, unknown>>>;

/** The spec's /api/auth/* endpoints and PocketBase's per-collection auth endpoints. */
export function authRoutes(recordAuth: RecordAuthService, listProviders: ProviderLister = async () => []) {
  return async (app: FastifyInstance): Promise<void> => {
    app.post('/api/auth/login', async (req) => {
      const body = (req.body ?? {}) as Body;
      const collection = await recordAuth.authCollection(req.ctx, DEFAULT_AUTH_COLLECTION);
      return recordAuth.authWithPassword(req.ctx, collection, body?.email ?? body?.identity, body?.password);
    });

    app.post('/api/auth/register', async (req) => recordAuth.register(req.ctx, req.body ?? {}));

    app.post('/api/auth/refresh', async (req) => {
      const { token, user } = await recordAuth.refresh(req.ctx);
      return { token, user, record: user };
    });

    app.get('/api/auth/me', async (req) => {
      if (req.ctx.auth.type !== 'record') throw unauthorized();
      return recordAuth.me(req.ctx);
    });

    app.get('/api/auth/methods', async (req) => {
      const providers = await listProviders((req.query as Record<string, string>).redirectUrl);
      return { password: { enabled: true }, oauth2: { enabled: providers.length > 0, providers } };
    });

    app.post<CollectionParams>('/api/collections/:collection/auth-with-password', async (req) => {
      const body = (req.body ?? {}) as Body;
      const collection = await recordAuth.authCollection(req.ctx, req.params.collection);
      return recordAuth.authWithPassword(req.ctx, collection, body?.identity ?? body?.email, body?.password);
    });

    app.post<CollectionParams>('/api/collections/:collection/auth-refresh', async (req) => {
      const collection = await recordAuth.authCollection(req.ctx, req.params.collection);
      return recordAuth.refresh(req.ctx, collection);
    });

    app.get<CollectionParams>('/api/collections/:collection/auth-methods', async (req) => {
      await recordAuth.authCollection(req.ctx, req.params.collection);
      const providers = await listProviders((req.query as Record<string, string>).redirectUrl);
      // PocketBase v0.22's shape, which its SDK 0.21 reads, plus the spec's.
      return {
        usernamePassword: false,
        emailPassword: true,
        onlyVerified: false,
        authProviders: providers,
        password: { enabled: true },
        oauth2: { enabled: providers.length > 0, providers },
      };
    });
  };
}
