import type { Collection } from '../collections/model.ts';
import { VERSION } from '../version.ts';
import { CATALOG, type OperationInfo } from './catalog.ts';
import { collectionSchemas, type JsonSchema, typeNames } from './collections.ts';

/**
 * `/api/openapi.json`: an OpenAPI 3.1 document of every route the router holds (read from Fastify's
 * route table as routes are registered, with their own `schema` summary/description/tags when they
 * have one, else the catalog's), plus, for each collection of the `x-dbname` database, its record,
 * create and update schemas and its own record paths, so generators give typed calls per collection.
 */

/** What the HTTP layer knows of a route. */
export interface RouteInfo {
  method: string;
  url: string;
  /** Fastify's `schema` of the route, when it has one. */
  schema?: { summary?: string; description?: string; tags?: string[] };
  /** false for routes that ignore `x-dbname`. */
  database?: boolean;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const STRING = { type: 'string' };
const OBJECT = { type: 'object', additionalProperties: true };

const QUERY_PARAMETERS: Record<string, { schema: JsonSchema; description: string }> = {
  page: { schema: { type: 'integer', minimum: 1 }, description: 'Page number (from 1).' },
  perPage: { schema: { type: 'integer', minimum: 1, maximum: 500 }, description: 'Items per page (30 by default, at most 500).' },
  sort: { schema: STRING, description: 'Sort terms, e.g. `-created,title`.' },
  filter: { schema: STRING, description: 'A filter expression, e.g. `status >= 400 && method = "POST"`.' },
  expand: { schema: STRING, description: 'Relations to expand, e.g. `author,tags`.' },
  fields: { schema: STRING, description: 'Fields to return, e.g. `id,title,expand.author.name`.' },
  skipTotal: { schema: { type: 'boolean' }, description: 'Skip counting (totalItems and totalPages are -1).' },
  search: { schema: STRING, description: 'Full-text search terms (collections with a full-text index).' },
  token: { schema: STRING, description: 'A file token (`POST /api/files/token`).' },
  code: { schema: STRING, description: "The OAuth2 provider's authorization code." },
  state: { schema: STRING, description: 'The realtime client id the SDK sent as the OAuth2 state.' },
  error: { schema: STRING, description: "The OAuth2 provider's error, when it refused." },
};

function listOf(item: JsonSchema): JsonSchema {
  return {
    type: 'object',
    required: ['page', 'perPage', 'totalItems', 'totalPages', 'items'],
    properties: {
      page: { type: 'integer' },
      perPage: { type: 'integer' },
      totalItems: { type: 'integer' },
      totalPages: { type: 'integer' },
      items: { type: 'array', items: item },
    },
  };
}

/** Shared schemas of the main routes' bodies and answers. */
function commonSchemas(): Record<string, JsonSchema> {
  const record: JsonSchema = {
    type: 'object',
    required: ['id', 'created', 'updated', 'collectionId', 'collectionName'],
    properties: { id: STRING, created: STRING, updated: STRING, collectionId: STRING, collectionName: STRING },
    additionalProperties: true,
  };
  const admin = { type: 'object', required: ['id', 'email', 'created', 'updated'], properties: { id: STRING, email: STRING, avatar: { type: 'integer' }, created: STRING, updated: STRING } };
  const requestLog = {
    type: 'object',
    required: ['id', 'created', 'updated', 'level', 'message', 'data'],
    properties: {
      id: STRING,
      created: STRING,
      updated: STRING,
      level: { type: 'integer', description: '0 info, 8 error (4xx and 5xx)' },
      message: STRING,
      data: {
        type: 'object',
        properties: {
          type: { const: 'request' },
          method: STRING,
          url: { type: 'string', description: 'with credentials in the query string redacted' },
          status: { type: 'integer' },
          execTime: { type: 'number', description: 'milliseconds' },
          auth: { enum: ['guest', 'admin', 'authRecord', 'apikey'] },
          authId: STRING,
          database: STRING,
          userIp: STRING,
          remoteIp: STRING,
          userAgent: STRING,
          referer: STRING,
          error: STRING,
        },
      },
    },
  };
  return {
    Error: {
      type: 'object',
      required: ['status', 'code', 'message', 'data'],
      properties: { status: { type: 'integer' }, code: { type: 'integer' }, message: STRING, data: { type: 'object', additionalProperties: true } },
    },
    Health: { type: 'object', required: ['code', 'message', 'data'], properties: { code: { type: 'integer' }, message: STRING, data: OBJECT } },
    Record: record,
    RecordList: listOf(ref('Record')),
    BatchRequest: {
      type: 'object',
      required: ['requests'],
      properties: {
        requests: {
          type: 'array',
          items: {
            type: 'object',
            required: ['method', 'url'],
            properties: {
              method: { enum: ['POST', 'PUT', 'PATCH', 'DELETE'] },
              url: { type: 'string', examples: ['/api/collections/posts/records?expand=author'] },
              headers: { type: 'object', additionalProperties: STRING },
              body: OBJECT,
            },
          },
        },
      },
    },
    BatchResult: { type: 'object', required: ['status', 'body'], properties: { status: { type: 'integer' }, body: { type: ['object', 'null'], additionalProperties: true } } },
    Admin: admin,
    AdminList: listOf(ref('Admin')),
    AdminInput: { type: 'object', properties: { email: STRING, password: STRING, passwordConfirm: STRING, avatar: { type: 'integer' } } },
    PasswordSignIn: { type: 'object', required: ['password'], properties: { identity: STRING, email: STRING, password: STRING, identityField: STRING, mfaId: { type: 'string', description: 'the second factor of a multi-factor sign-in' } } },
    AdminAuth: { type: 'object', required: ['token', 'admin'], properties: { token: STRING, admin: ref('Admin'), user: ref('Admin') } },
    RecordAuth: { type: 'object', required: ['token', 'record'], properties: { token: STRING, record: ref('Record'), user: ref('Record') } },
    Field: { type: 'object', required: ['name', 'type'], properties: { id: STRING, name: STRING, type: STRING, required: { type: 'boolean' }, options: OBJECT }, additionalProperties: true },
    Collection: {
      type: 'object',
      required: ['id', 'name', 'type', 'fields'],
      properties: {
        id: STRING,
        name: STRING,
        type: { enum: ['base', 'auth', 'view'] },
        fields: { type: 'array', items: ref('Field') },
        schema: { type: 'array', items: ref('Field') },
        options: OBJECT,
        system: { type: 'boolean' },
        listRule: { type: ['string', 'null'] },
        viewRule: { type: ['string', 'null'] },
        createRule: { type: ['string', 'null'] },
        updateRule: { type: ['string', 'null'] },
        deleteRule: { type: ['string', 'null'] },
        indexes: { type: 'array', items: STRING },
        created: STRING,
        updated: STRING,
        passwordAuth: { type: 'object', description: 'auth collections (also in options): {enabled, identityFields}', properties: { enabled: { type: 'boolean' }, identityFields: { type: 'array', items: STRING } } },
        oauth2: { type: 'object', description: 'auth collections (also in options): {enabled}', properties: { enabled: { type: 'boolean' } } },
        otp: { type: 'object', description: 'auth collections (also in options): {enabled, duration, length}', properties: { enabled: { type: 'boolean' }, duration: { type: 'integer' }, length: { type: 'integer' } } },
        mfa: { type: 'object', description: 'auth collections (also in options): {enabled, duration, rule}', properties: { enabled: { type: 'boolean' }, duration: { type: 'integer' }, rule: STRING } },
        authToken: { type: 'object', description: 'auth collections (also in options): {duration}', properties: { duration: { type: 'integer' } } },
        viewQuery: { type: 'string', description: 'view collections: their SQL (also options.query)' },
      },
    },
    Scaffolds: { type: 'object', required: ['base', 'auth', 'view'], properties: { base: ref('Collection'), auth: ref('Collection'), view: ref('Collection') } },
    SuperuserAuth: { type: 'object', required: ['token', 'record'], properties: { token: { type: 'string', description: 'PocketBase 0.23 claims: type "auth", collectionId "pbc_3142635823", refreshable' }, record: ref('Record') } },
    SuperuserList: listOf(ref('Record')),
    OtpRequest: { type: 'object', required: ['email'], properties: { email: STRING } },
    OtpSent: { type: 'object', required: ['otpId'], properties: { otpId: STRING } },
    OtpSignIn: { type: 'object', required: ['otpId', 'password'], properties: { otpId: STRING, password: { type: 'string', description: 'the mailed code' }, mfaId: STRING } },
    Impersonation: { type: 'object', properties: { duration: { type: 'integer', minimum: 0, description: 'seconds; 0 for the collection token lifetime' } } },
    CollectionInput: { type: 'object', properties: { name: STRING, type: { enum: ['base', 'auth'] }, fields: { type: 'array', items: ref('Field') } }, additionalProperties: true },
    CollectionList: listOf(ref('Collection')),
    Rules: { type: 'object', properties: Object.fromEntries(['list', 'view', 'create', 'update', 'delete'].map((k) => [k, { type: ['string', 'null'] }])) },
    FileToken: { type: 'object', required: ['token'], properties: { token: STRING } },
    ApiKey: { type: 'object', required: ['id', 'name'], properties: { id: STRING, name: STRING, enabled: { type: 'boolean' }, roles: { type: 'array', items: STRING }, key: STRING, token: STRING, created: STRING } },
    ApiKeyInput: { type: 'object', properties: { name: STRING, enabled: { type: 'boolean' }, roles: { type: 'array', items: STRING } } },
    Database: { type: 'object', required: ['name', 'created'], properties: { name: STRING, created: STRING } },
    DatabaseInput: { type: 'object', required: ['name'], properties: { name: { type: 'string', pattern: '^[a-z][a-z0-9_]{0,62}$' } } },
    RequestLog: requestLog,
    RequestLogList: listOf(ref('RequestLog')),
    LogStat: { type: 'object', required: ['total', 'date'], properties: { total: { type: 'integer' }, date: STRING } },
    Backup: { type: 'object', required: ['key', 'size', 'modified'], properties: { key: STRING, size: { type: 'integer' }, modified: STRING } },
    BackupInput: { type: 'object', properties: { name: { type: 'string', pattern: '^[a-z0-9_-]{1,96}\\.zip$' } } },
  };
}

const ERROR_RESPONSE = { content: { 'application/json': { schema: ref('Error') } } };
const ERROR_TEXT: Record<string, string> = {
  '400': 'Invalid input.',
  '401': 'Missing or invalid credentials.',
  '403': 'Not allowed for these credentials.',
  '404': 'Not found.',
};

function content(kind: string | undefined): JsonSchema | undefined {
  if (kind === undefined) return undefined;
  if (kind === 'zip') return { 'application/zip': { schema: { type: 'string', contentMediaType: 'application/zip' } } };
  if (kind === 'yaml') return { 'application/yaml': { schema: STRING } };
  if (kind === 'event-stream') return { 'text/event-stream': { schema: STRING } };
  if (kind === 'file') return { 'application/octet-stream': { schema: { type: 'string', contentMediaType: 'application/octet-stream' } } };
  if (kind === 'object') return { 'application/json': { schema: OBJECT } };
  const array = /^\[(\w+)\]$/.exec(kind);
  return { 'application/json': { schema: array ? { type: 'array', items: ref(array[1]) } : ref(kind) } };
}

function requestBody(kind: string | undefined): JsonSchema | undefined {
  if (kind === undefined) return undefined;
  if (kind === 'multipart') {
    return { required: true, content: { 'multipart/form-data': { schema: { type: 'object', properties: { file: { type: 'string', contentMediaType: 'application/octet-stream' } } } } } };
  }
  return { content: { 'application/json': { schema: kind === 'object' ? OBJECT : ref(kind) } } };
}

function security(access: OperationInfo['access']): JsonSchema[] {
  switch (access) {
    case 'public':
      return [{}, { bearer: [] }];
    case 'file-token':
      return [{ fileToken: [] }];
    case 'workflow-secret':
      return [{ bearer: [] }];
    default:
      return [{ bearer: [] }];
  }
}

/** `/api/collections/:collection/records/:id` → `/api/collections/{collection}/records/{id}`. */
export function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

function operationId(method: string, url: string): string {
  const words = url
    .split('/')
    .filter((s) => s !== '' && s !== 'api')
    .map((s) => (s.startsWith(':') ? `by-${s.slice(1)}` : s))
    .join('-')
    .split(/[^A-Za-z0-9]+/)
    .filter((w) => w !== '');
  return [method.toLowerCase(), ...words.map((w) => w[0].toUpperCase() + w.slice(1))].join('');
}

const DBNAME_PARAMETER = {
  name: 'x-dbname',
  in: 'header',
  required: false,
  description: 'The database (default `main`).',
  schema: { type: 'string', pattern: '^[a-z][a-z0-9_]{0,62}$' },
};

function operation(route: RouteInfo, info: OperationInfo | undefined, extra: { id?: string; body?: JsonSchema; response?: JsonSchema; summary?: string } = {}): JsonSchema {
  const params = [...route.url.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g)].map((m) => ({ name: m[1], in: 'path', required: true, schema: STRING }));
  const query = (info?.query ?? []).map((name) => ({ name, in: 'query', required: false, ...(QUERY_PARAMETERS[name] ?? { schema: STRING, description: '' }) }));
  const status = String(info?.status ?? (route.method === 'DELETE' ? 204 : 200));
  const body = extra.body ?? requestBody(info?.body);
  const answer = extra.response ?? content(info?.response);
  const responses: JsonSchema = {
    [status]: status.startsWith('3')
      ? { description: 'Redirect (the Location header).' }
      : { description: status === '204' ? 'Done (no content).' : 'Success.', ...(status !== '204' ? { content: answer ?? content('object') } : {}) },
  };
  for (const [code, text] of Object.entries(ERROR_TEXT)) responses[code] = { description: text, ...ERROR_RESPONSE };
  return {
    operationId: extra.id ?? operationId(route.method, route.url),
    summary: extra.summary ?? route.schema?.summary ?? info?.summary ?? `${route.method} ${route.url}`,
    ...(route.schema?.description ? { description: route.schema.description } : {}),
    tags: route.schema?.tags ?? [info?.tag ?? 'other'],
    parameters: [...params, ...query, ...(route.database === false ? [] : [DBNAME_PARAMETER])],
    ...(body && !['GET', 'HEAD', 'DELETE'].includes(route.method) ? { requestBody: body } : {}),
    responses,
    security: security(info?.access ?? 'admin'),
  };
}

export interface DocumentInput {
  routes: readonly RouteInfo[];
  /** The collections of the `x-dbname` database, and its name. */
  collections: readonly Collection[];
  database: string;
}

export function buildOpenApiDocument(input: DocumentInput): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  const add = (url: string, method: string, op: JsonSchema) => {
    (paths[openApiPath(url)] ??= {})[method.toLowerCase()] = op;
  };
  for (const route of [...input.routes].sort((a, b) => a.url.localeCompare(b.url) || a.method.localeCompare(b.method))) {
    add(route.url, route.method, operation(route, CATALOG[`${route.method} ${route.url}`]));
  }

  // Each collection's own record paths, with its schemas: concrete paths, which OpenAPI matches before
  // the templated `/api/collections/{collection}/records`.
  const schemas = commonSchemas();
  const names = typeNames(input.collections);
  for (const c of [...input.collections].sort((a, b) => a.name.localeCompare(b.name))) {
    const name = names.get(c)!;
    const s = collectionSchemas(c, name);
    schemas[`${name}Record`] = s.record;
    schemas[`${name}List`] = listOf(ref(`${name}Record`));
    if (s.create) schemas[`${name}Create`] = s.create;
    if (s.update) schemas[`${name}Update`] = s.update;
    const base = `/api/collections/${c.name}/records`;
    const json = (schema: string) => ({ 'application/json': { schema: ref(schema) } });
    const tags = [`collection: ${c.name}`];
    const op = (method: string, url: string, key: string, summary: string, extra: { body?: JsonSchema; response?: JsonSchema }) => {
      const generic = CATALOG[`${method} ${key}`];
      add(url, method, { ...operation({ method, url: url.replace(/\{id\}$/, ':id') }, generic, { id: `${method.toLowerCase()}${name}${summary}`, summary: `${generic.summary}: ${c.name}`, ...extra }), tags });
    };
    op('GET', base, '/api/collections/:collection/records', 'List', { response: json(`${name}List`) });
    op('GET', `${base}/{id}`, '/api/collections/:collection/records/:id', 'View', { response: json(`${name}Record`) });
    if (s.createForm) schemas[`${name}CreateForm`] = s.createForm;
    if (s.updateForm) schemas[`${name}UpdateForm`] = s.updateForm;
    if (s.create && s.update) {
      const form = (schema: string) => ({ 'multipart/form-data': { schema: ref(schema) } });
      op('POST', base, '/api/collections/:collection/records', 'Create', { body: { required: true, content: { ...json(`${name}Create`), ...form(`${name}CreateForm`) } }, response: json(`${name}Record`) });
      op('PATCH', `${base}/{id}`, '/api/collections/:collection/records/:id', 'Update', { body: { required: true, content: { ...json(`${name}Update`), ...form(`${name}UpdateForm`) } }, response: json(`${name}Record`) });
      op('DELETE', `${base}/{id}`, '/api/collections/:collection/records/:id', 'Delete', {});
    }
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'Cairn',
      version: VERSION,
      description: `The Cairn API (PocketBase v0.22-compatible). Collection schemas are those of the database "${input.database}".`,
    },
    jsonSchemaDialect: 'https://spec.openapis.org/oas/3.1/dialect/base',
    paths,
    components: {
      schemas,
      securitySchemes: {
        bearer: { type: 'apiKey', in: 'header', name: 'Authorization', description: 'An auth token or API key, with or without `Bearer `.' },
        fileToken: { type: 'apiKey', in: 'query', name: 'token', description: 'A file token from `POST /api/files/token`.' },
      },
    },
  };
}
