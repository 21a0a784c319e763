import { filterCollections, sortCollections } from '../../collections/list-query.ts';
import type { FastifyInstance } from 'fastify';
import { DEFAULT_AUTH_SETTINGS } from '../../collections/auth-settings.ts';
import { blankCollection, type Collection, type CollectionType } from '../../collections/model.ts';
import { asPocketBaseCreate, collectionJson, type CollectionJsonDefaults, fieldJson, pocketBaseSystemFields } from '../../collections/pocketbase-shapes.ts';
import { dryRunView } from '../../migrations/views.ts';
import { importCollections } from '../../migrations/collections-import.ts';
import { knownOAuth2Providers } from '../../auth/auth-methods.ts';
import { MAX_QUERY_LENGTH } from '../../sql/console.ts';
import { badRequest, isApiError, validationFailed } from '../../errors.ts';
import { requireSuperuser } from '../guards.ts';
import type { CollectionService } from '../../collections/service.ts';
import { isSuperusers, SUPERUSERS_COLLECTION } from '../../collections/superusers.ts';
import { pagination, param } from '../../records/query-params.ts';
import type { RecordService } from '../../records/service.ts';
import { truncateCollection } from '../../records/truncate.ts';
import { requireAdmin } from '../guards.ts';
import type { Automigrate } from '../../pbmigrations/automigrate.ts';
import type { Database } from '../../storage/index.ts';

type NameParams = { Params: { name: string } };

/** A new collection of each type as the create form starts from (PocketBase's scaffolds). */
function scaffold(type: CollectionType): Collection {
  return blankCollection(type, { options: type === 'auth' ? { ...DEFAULT_AUTH_SETTINGS } : type === 'view' ? { query: '' } : {} });
}

/** `_superusers` is Cairn's administrators: listed with every database's collections, never changed here. */
function refuseSuperusers(name: string, action: string): void {
  if (isSuperusers(name)) throw badRequest(`_superusers is a system collection and cannot be ${action}; manage administrators through its records.`);
}

/**
 * The OAuth2 providers Cairn knows by name, as PocketBase lists its own (`{name, displayName, logo}`,
 * `logo` an SVG): its presets, then the three names PocketBase's dashboard offers for generic OpenID
 * Connect providers (`oidc`, `oidc2`, `oidc3`), whose URLs the settings give.
 */
function oauth2Presets(): Array<{ name: string; displayName: string; logo: string }> {
  return knownOAuth2Providers();
}

export function collectionRoutes(collections: CollectionService, records: RecordService, defaults: CollectionJsonDefaults, automigrate?: Automigrate) {
  const json = (c: Collection) => collectionJson(c, defaults);
  // A change through the API is automigrate's, when it is on.
  const changing = <T>(db: Database, name: string, change: () => Promise<T>) => (automigrate ? automigrate.around(collections, db, name, change) : change());
  return async (app: FastifyInstance): Promise<void> => {
    app.get('/api/collections', async (req) => {
      requireAdmin(req.ctx);
      const query = req.query as Record<string, unknown>;
      const { page, perPage } = pagination(query);
      const set = await collections.all(req.ctx.db);
      const type = param(query.type);
      const listed = [SUPERUSERS_COLLECTION, ...set.list].filter((c) => type === '' || c.type === type).map(json) as unknown as Array<Record<string, unknown>>;
      const all = sortCollections(filterCollections(listed, param(query.filter)), param(query.sort));
      return {
        page,
        perPage,
        totalItems: all.length,
        totalPages: Math.ceil(all.length / perPage),
        items: all.slice((page - 1) * perPage, page * perPage),
      };
    });

    app.post('/api/collections', async (req) => {
      requireAdmin(req.ctx);
      // No body is an empty one (SDKs send bodiless requests): every required field is then named.
      const body = req.body ?? {};
      // A client signed in as PocketBase ≥ 0.23's (`_superusers`) gets its collection as that makes it.
      const superuser = req.ctx.auth.type === 'admin' && req.ctx.auth.superuser === true;
      const created = await collections.create(req.ctx.db, superuser ? asPocketBaseCreate(body) : body);
      await automigrate?.record(req.ctx.db, undefined, created);
      return json(created);
    });

    app.get('/api/collections/meta/scaffolds', async (req) => {
      requireAdmin(req.ctx);
      // A template lists the system fields a new collection of its type has, as PocketBase's do.
      const template = (type: CollectionType) => {
        const fields = pocketBaseSystemFields(type);
        return { ...json(scaffold(type)), fields };
      };
      return { base: template('base'), auth: template('auth'), view: template('view') };
    });

    // PocketBase's import of a whole schema: every collection created or updated, in one transaction.
    app.put('/api/collections/import', async (req, reply) => {
      requireAdmin(req.ctx);
      await importCollections(req.ctx.db, collections, req.body ?? {});
      return reply.status(204).send();
    });

    // PocketBase's dry run of a view collection: its fields (the id first) and a sample of its rows.
    app.post('/api/collections/meta/dry-run-view', async (req) => {
      requireSuperuser(req.ctx, 'try view queries');
      const query = (req.body as { query?: unknown } | null)?.query;
      if (typeof query !== 'string' || query.trim() === '') throw validationFailed({ query: { code: 'validation_required', message: 'Cannot be blank.' } });
      if (query.length > MAX_QUERY_LENGTH) {
        throw validationFailed({ query: { code: 'validation_length_out_of_range', message: `The length must be between 0 and ${MAX_QUERY_LENGTH}.` } });
      }
      try {
        const { fields, sample } = await dryRunView(req.ctx.db, query);
        const id = { name: 'id', type: 'text', system: true, required: true, hidden: false, presentable: false, primaryKey: true };
        return { fields: [id, ...fields.map(fieldJson)], sample };
      } catch (err) {
        if (isApiError(err) && err.status === 400) throw badRequest(`Invalid view query. Raw error: \n${err.message}`);
        throw err;
      }
    });

    // PocketBase's list of the OAuth2 providers it knows: Cairn's presets (any other name is generic OAuth2/OIDC).
    app.get('/api/collections/meta/oauth2-providers', async (req) => {
      requireAdmin(req.ctx);
      return oauth2Presets();
    });

    app.get<NameParams>('/api/collections/:name', async (req) => {
      requireAdmin(req.ctx);
      if (isSuperusers(req.params.name)) return json(SUPERUSERS_COLLECTION);
      return json(await collections.get(req.ctx.db, req.params.name));
    });

    app.patch<NameParams>('/api/collections/:name', async (req) => {
      requireAdmin(req.ctx);
      refuseSuperusers(req.params.name, 'changed');
      return json(await changing(req.ctx.db, req.params.name, () => collections.update(req.ctx.db, req.params.name, req.body ?? {})));
    });

    app.delete<NameParams>('/api/collections/:name', async (req, reply) => {
      requireAdmin(req.ctx);
      refuseSuperusers(req.params.name, 'deleted');
      await changing(req.ctx.db, req.params.name, () => collections.remove(req.ctx.db, req.params.name));
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
