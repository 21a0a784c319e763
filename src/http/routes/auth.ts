import { bodyValues } from '../form-fields.ts';
import type { FastifyInstance } from 'fastify';
import { authMethodsJson } from '../../auth/auth-methods.ts';
import type { EmailFlows } from '../../auth/email-flows.ts';
import type { OAuth2Input, OAuth2Service } from '../../auth/oauth2/login.ts';
import type { OtpService } from '../../auth/otp.ts';
import { DEFAULT_AUTH_COLLECTION, type RecordAuthService } from '../../auth/record-auth.ts';
import { authSettingsOf } from '../../collections/auth-settings.ts';
import type { Collection } from '../../collections/model.ts';
import { inRuleContext, type RequestContext } from '../../context.ts';
import { unauthorized } from '../../errors.ts';
import { param } from '../../records/query-params.ts';
import { parseFieldsParam, pickFields } from '../../records/fields-param.ts';
import { requireSuperuser } from '../guards.ts';
import { identityLimited } from '../plugins/rate-limit.ts';

type Body = Record<string, unknown> | undefined;
type CollectionParams = { Params: { collection: string } };

export interface AuthRouteDeps {
  recordAuth: RecordAuthService;
  flows: EmailFlows;
  oauth2: OAuth2Service;
  otp: OtpService;
}


function redirectUrlOf(query: unknown): string | undefined {
  const v = (query as Record<string, unknown>).redirectUrl;
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/** The spec's /api/auth/* endpoints and PocketBase's per-collection auth endpoints. */
export function authRoutes({ recordAuth, flows, oauth2, otp }: AuthRouteDeps) {
  return async (app: FastifyInstance): Promise<void> => {
    app.post('/api/auth/login', identityLimited, async (req) => {
      const body = (req.body ?? {}) as Body;
      const collection = await recordAuth.authCollection(req.ctx, DEFAULT_AUTH_COLLECTION);
      return recordAuth.authWithPassword(inRuleContext(req.ctx, 'password'), collection, body?.email ?? body?.identity, body?.password);
    });

    app.post('/api/auth/register', identityLimited, async (req) => recordAuth.register(req.ctx, req.body ?? {}));

    app.post('/api/auth/refresh', async (req) => recordAuth.refresh(req.ctx));

    app.get('/api/auth/me', async (req) => {
      if (req.ctx.auth.type !== 'record') throw unauthorized();
      return recordAuth.me(req.ctx);
    });

    app.get('/api/auth/methods', async (req) => {
      const providers = await oauth2.list(redirectUrlOf(req.query));
      return { password: { enabled: true }, oauth2: { enabled: providers.length > 0, providers } };
    });

    app.get('/api/auth/oauth2-login', identityLimited, async (req) => {
      const collection = await recordAuth.authCollection(req.ctx, DEFAULT_AUTH_COLLECTION);
      return oauth2.authenticate(inRuleContext(req.ctx, 'oauth2'), collection, req.query as OAuth2Input);
    });

    app.post<CollectionParams>('/api/collections/:collection/auth-with-password', identityLimited, async (req) => {
      const body = (await bodyValues(req)) as Body;
      const collection = await recordAuth.authCollection(req.ctx, req.params.collection);
      return recordAuth.authWithPassword(inRuleContext(req.ctx, 'password'), collection, body?.identity ?? body?.email, body?.password, body?.identityField);
    });

    app.post<CollectionParams>('/api/collections/:collection/request-otp', identityLimited, async (req) => {
      const collection = await recordAuth.authCollection(req.ctx, req.params.collection);
      return otp.request(req.ctx, collection, req.body ?? {});
    });

    app.post<CollectionParams>('/api/collections/:collection/auth-with-otp', identityLimited, async (req) => {
      const collection = await recordAuth.authCollection(req.ctx, req.params.collection);
      return recordAuth.authWithOtp(inRuleContext(req.ctx, 'otp'), collection, await otp.verify(req.ctx, collection, req.body ?? {}));
    });

    app.post<{ Params: { collection: string; id: string } }>('/api/collections/:collection/impersonate/:id', async (req) => {
      requireSuperuser(req.ctx, 'impersonate');
      const collection = await recordAuth.authCollection(req.ctx, req.params.collection);
      return recordAuth.impersonate(req.ctx, collection, req.params.id, req.body);
    });

    app.post<CollectionParams>('/api/collections/:collection/auth-with-oauth2', identityLimited, async (req) => {
      const collection = await recordAuth.authCollection(req.ctx, req.params.collection);
      return oauth2.authenticate(inRuleContext(req.ctx, 'oauth2'), collection, (req.body ?? {}) as OAuth2Input);
    });

    app.post<CollectionParams>('/api/collections/:collection/auth-refresh', async (req) => {
      const collection = await recordAuth.ownAuthCollection(req.ctx, req.params.collection);
      return recordAuth.refresh(req.ctx, collection);
    });

    app.post<CollectionParams>('/api/collections/:collection/request-email-change', identityLimited, async (req, reply) => {
      const collection = await recordAuth.ownAuthCollection(req.ctx, req.params.collection);
      await flows.requestEmailChange(req.ctx, collection, req.body ?? {});
      return reply.status(204).send();
    });

    app.get<CollectionParams>('/api/collections/:collection/auth-methods', async (req) => {
      const collection = await recordAuth.authCollection(req.ctx, req.params.collection);
      const methods = authMethodsJson(authSettingsOf(collection), await oauth2.list(redirectUrlOf(req.query), collection));
      // SDK 0.23+ asks for v0.23's keys only (`fields=mfa,otp,password,oauth2`).
      const fields = parseFieldsParam(param((req.query as Record<string, unknown>).fields));
      return fields ? pickFields(methods, fields) : methods;
    });

    // The email flows answer 204 as PocketBase does; the request endpoints whether or not the address is known.
    const flowRoutes: Array<[string, (ctx: RequestContext, c: Collection, body: unknown) => Promise<void>]> = [
      ['request-verification', (ctx, c, body) => flows.requestVerification(ctx, c, body)],
      ['confirm-verification', (ctx, c, body) => flows.confirmVerification(ctx, c, body)],
      ['request-password-reset', (ctx, c, body) => flows.requestPasswordReset(ctx, c, body)],
      ['confirm-password-reset', (ctx, c, body) => flows.confirmPasswordReset(ctx, c, body)],
      ['confirm-email-change', (ctx, c, body) => flows.confirmEmailChange(ctx, c, body)],
    ];
    for (const [action, run] of flowRoutes) {
      app.post<CollectionParams>(`/api/collections/:collection/${action}`, identityLimited, async (req, reply) => {
        const collection = await recordAuth.authCollection(req.ctx, req.params.collection);
        await run(req.ctx, collection, req.body ?? {});
        return reply.status(204).send();
      });
    }
  };
}
