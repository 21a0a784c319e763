import { deep } from './cases.ts';
import type { Fixture } from './fixture.ts';

/**
 * Who may call a route: `public` anyone; `admin` administrators and admin-role API keys (401 without
 * a token, 403 for other callers); `session` any signed-in record or admin (401 without a token);
 * `admin-session` an administrator's own session (401 for everyone else); `superuser` an administrator's
 * own session too, 403 for every other caller (PocketBase's superuser-only routes).
 */
export type Access = 'public' | 'admin' | 'session' | 'admin-session' | 'superuser';

export interface RawBody {
  label: string;
  contentType: string;
  body: string | Buffer;
}

export interface RouteSpec {
  /** `METHOD /path/:param`, as registered. */
  route: string;
  access: Access;
  /** Existing values for the path parameters, so hostile values are tried one parameter at a time. */
  params?: Record<string, string>;
  /** Keys of the JSON object the route reads; absent for routes that take no body. */
  body?: string[];
  /** A valid body the wrong-typed keys are put into, to get past "required" checks. */
  base?: Record<string, unknown>;
  /** Whole hostile bodies for this route, besides the generic ones. */
  bodies?: unknown[];
  /** Bodies of other content types (uploads). */
  raw?: RawBody[];
  /** Query parameters the route reads. */
  query?: string[];
  /** What a caller without a token gets, when not 401 (a closed collection's records answer 403). */
  guest?: number;
  /** The route does not use `x-dbname`. */
  noDb?: boolean;
  /** The route never reads the Authorization header (downloads take `?token=`). */
  ignoresAuthorization?: boolean;
  /** The body may be a JSON array too (workflow events are any JSON document). */
  arrayBody?: boolean;
  /** A records route: the cases are sent by a signed-in user too, through the collection's rules. */
  records?: boolean;
  /** Who sends the body and query cases (default: the admin, or a guest on public routes). */
  as?: 'admin' | 'guest';
  /** A 200 answer is an endless stream (realtime): its status and headers are read, then it is closed. */
  stream?: boolean;
}

const LIST = ['page', 'perPage'];
const RECORD_LIST = ['page', 'perPage', 'sort', 'filter', 'expand', 'fields', 'skipTotal', 'search'];
const RECORD_KEYS = ['id', 'title', 'n', 'flag', 'when', 'mail', 'link', 'kind', 'meta', 'body', 'owner', 'parent', 'doc', 'created', 'collectionId', 'expand'];
const COLLECTION_KEYS = ['name', 'type', 'fields', 'schema', 'options', 'listRule', 'viewRule', 'createRule', 'updateRule', 'deleteRule', 'indexes', 'system'];
const ADMIN_KEYS = ['email', 'password', 'passwordConfirm', 'avatar'];
const CRON_KEYS = ['name', 'schedule', 'timezone', 'url', 'method', 'headers', 'body', 'secret', 'enabled'];
const yaml = (text: string): RawBody => ({ label: `yaml ${text.slice(0, 30)}`, contentType: 'application/yaml', body: text });
const ALIAS_BOMB = ['a: &a ["x","x","x","x","x","x","x","x","x"]', ...Array.from({ length: 8 }, (_, i) => `${String.fromCharCode(98 + i)}: &${String.fromCharCode(98 + i)} [*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)},*${String.fromCharCode(97 + i)}]`)].join('\n');
const HOSTILE_YAML = [
  yaml('version: [unclosed'),
  yaml('!!js/function "function () { return 1 }"'),
  yaml(ALIAS_BOMB),
  yaml('version: 20240101_000000_000\nname: x\ndatabases:\n  "../x":\n    collections: {}'),
  yaml('version: 20240101_000000_000\nname: ../../evil\ndatabases: {}'),
  yaml(`version: 20240101_000000_000\nname: deep\ndescription: ${'['.repeat(5000)}`),
  { label: 'yaml of 2 MiB', contentType: 'application/yaml', body: `a: "${'x'.repeat(2 * 1024 * 1024)}"` },
];
const HOSTILE_ZIP: RawBody[] = [
  { label: 'zip garbage', contentType: 'application/zip', body: Buffer.from('PK\u0003\u0004 not really a zip') },
  { label: 'empty zip body', contentType: 'application/zip', body: Buffer.alloc(0) },
  { label: 'multipart without boundary', contentType: 'multipart/form-data', body: 'x' },
  { label: 'multipart garbage', contentType: 'multipart/form-data; boundary=b', body: '--b\r\nContent-Disposition: form-data; name="file"; filename="../../x.zip"\r\n\r\nPK\r\n--b--' },
];

/** Every route Cairn registers, with what it takes. The sweep fails when a route is missing here. */
export function routeTable(f: Fixture): RouteSpec[] {
  const { ids } = f;
  const sweep = { collection: 'sweep' };
  const record = { collection: 'sweep', id: ids.sweepRecord };
  const users = { collection: 'users' };
  const flow = (action: string, body: string[]): RouteSpec => ({ route: `POST /api/collections/:collection/${action}`, access: 'public', params: users, body });
  return [
    { route: 'GET /api/health', access: 'public', noDb: true },
    { route: 'GET /api/openapi.json', access: 'admin' },

    { route: 'GET /api/admins', access: 'admin', noDb: true, query: LIST },
    { route: 'POST /api/admins', access: 'admin', noDb: true, body: ADMIN_KEYS },
    { route: 'POST /api/admins/auth-with-password', access: 'public', noDb: true, body: ['identity', 'email', 'password'] },
    { route: 'POST /api/admins/auth-refresh', access: 'admin-session', noDb: true },
    { route: 'GET /api/admins/me', access: 'admin-session', noDb: true },
    { route: 'GET /api/admins/has-admins', access: 'public', noDb: true },
    { route: 'POST /api/admins/init', access: 'public', noDb: true, body: ['email', 'password', 'passwordConfirm'] },
    { route: 'POST /api/admins/request-password-reset', access: 'public', noDb: true, body: ['email'] },
    { route: 'POST /api/admins/confirm-password-reset', access: 'public', noDb: true, body: ['token', 'password', 'passwordConfirm'] },
    { route: 'GET /api/admins/:id', access: 'admin', noDb: true, params: { id: ids.spareAdmin } },
    { route: 'PATCH /api/admins/:id', access: 'admin', noDb: true, params: { id: ids.spareAdmin }, body: [...ADMIN_KEYS, 'oldPassword'] },
    { route: 'DELETE /api/admins/:id', access: 'admin', noDb: true, params: { id: ids.spareAdmin } },

    { route: 'POST /api/auth/login', access: 'public', body: ['email', 'identity', 'password'] },
    {
      route: 'POST /api/auth/register',
      access: 'public',
      body: ['email', 'password', 'passwordConfirm', 'name', 'role', 'verified', 'emailVisibility', 'avatar', 'tokenKey', 'passwordHash'],
    },
    { route: 'POST /api/auth/refresh', access: 'session' },
    { route: 'GET /api/auth/me', access: 'session', query: ['expand', 'fields'] },
    { route: 'GET /api/auth/methods', access: 'public', query: ['redirectUrl'] },
    { route: 'GET /api/auth/oauth2-login', access: 'public', query: ['provider', 'code', 'codeVerifier', 'redirectUrl'] },

    { route: 'GET /api/collections', access: 'admin', query: [...LIST, 'type'] },
    {
      route: 'POST /api/collections',
      access: 'admin',
      body: COLLECTION_KEYS,
      base: { name: 'swept', fields: [{ name: 'title', type: 'text' }] },
      bodies: [
        { name: 'swept', fields: [{ name: 1, type: {} }] },
        { name: 'swept', fields: [{ name: 'a', type: 'text', options: [] }] },
        { name: 'swept', fields: [{ name: 'a', type: 'relation', options: { toCollection: { $ne: 1 } } }] },
        { name: 'swept', fields: [{ name: 'a', type: 'select', options: { values: 'abc' } }] },
        { name: 'swept', fields: [{ name: 'a', type: 'text', options: { pattern: '(a+)+$' } }] },
        { name: 'swept', fields: [{ name: 'a', type: 'text', options: { pattern: '[' } }] },
        { name: 'swept', options: '{"triggers": 5}' },
        { name: 'swept', options: 'not json' },
        { name: 'swept', options: { triggers: [{ action: 'create', url: 'http://x/', headers: { 'bad\nheader': 'x' } }] } },
        { name: 'swept', indexes: ['CREATE INDEX x ON canary (title); DROP TABLE canary'] },
        { name: 'swept', indexes: ['CREATE UNIQUE INDEX idx ON swept (nope)'] },
        { name: 'swept', listRule: '('.repeat(100000) },
        { name: 'swept', type: 'view', options: { query: 'DELETE FROM canary' } },
        { name: 'sqlite_master' },
        { name: '_admins' },
        { name: 'canary' },
        { name: 'users', type: 'base' },
      ],
    },
    { route: 'GET /api/collections/:name', access: 'admin', params: { name: 'sweep' } },
    {
      route: 'PATCH /api/collections/:name',
      access: 'admin',
      params: { name: 'sweep' },
      body: COLLECTION_KEYS,
      bodies: [{ fields: [{ name: 'title', type: 'number' }] }, { name: 'canary' }, { type: 'auth' }, { fields: [{ name: 'owner', type: 'relation', options: { toCollection: 'nope' } }] }],
    },
    { route: 'DELETE /api/collections/:name', access: 'admin', params: { name: 'sweep' } },
    { route: 'DELETE /api/collections/:name/truncate', access: 'admin', params: { name: 'sweep' } },
    { route: 'GET /api/collections/meta/scaffolds', access: 'admin' },

    { route: 'POST /api/collections/_superusers/auth-with-password', access: 'public', noDb: true, body: ['identity', 'email', 'password'] },
    { route: 'POST /api/collections/_superusers/auth-refresh', access: 'admin-session', noDb: true },
    { route: 'GET /api/collections/_superusers/auth-methods', access: 'public', noDb: true, query: ['fields'] },
    { route: 'POST /api/collections/_superusers/request-password-reset', access: 'public', noDb: true, body: ['email'] },
    { route: 'POST /api/collections/_superusers/confirm-password-reset', access: 'public', noDb: true, body: ['token', 'password', 'passwordConfirm'] },
    { route: 'POST /api/collections/_superusers/impersonate/:id', access: 'admin', noDb: true, params: { id: ids.spareAdmin }, body: ['duration'] },
    { route: 'GET /api/collections/_superusers/records', access: 'admin', noDb: true, guest: 403, query: [...LIST, 'sort', 'filter', 'skipTotal'] },
    { route: 'POST /api/collections/_superusers/records', access: 'admin', noDb: true, guest: 403, body: ADMIN_KEYS },
    { route: 'GET /api/collections/_superusers/records/:id', access: 'admin', noDb: true, guest: 403, params: { id: ids.spareAdmin } },
    { route: 'PATCH /api/collections/_superusers/records/:id', access: 'admin', noDb: true, guest: 403, params: { id: ids.spareAdmin }, body: ADMIN_KEYS },
    { route: 'DELETE /api/collections/_superusers/records/:id', access: 'admin', noDb: true, guest: 403, params: { id: ids.spareAdmin } },

    flow('auth-with-password', ['identity', 'email', 'password']),
    flow('auth-with-oauth2', ['provider', 'code', 'codeVerifier', 'redirectUrl', 'createData']),
    flow('request-otp', ['email']),
    flow('auth-with-otp', ['otpId', 'password', 'mfaId']),
    { route: 'POST /api/collections/:collection/impersonate/:id', access: 'admin', params: { collection: 'users', id: f.user.id }, body: ['duration'] },
    { route: 'POST /api/collections/:collection/auth-refresh', access: 'session', params: users },
    { route: 'GET /api/collections/:collection/auth-methods', access: 'public', params: users, query: ['redirectUrl', 'fields'] },
    flow('request-verification', ['email']),
    flow('request-password-reset', ['email']),
    flow('confirm-verification', ['token']),
    flow('confirm-password-reset', ['token', 'password', 'passwordConfirm']),
    flow('confirm-email-change', ['token', 'password']),
    { route: 'POST /api/collections/:collection/request-email-change', access: 'session', params: users, body: ['newEmail'] },
    { route: 'POST /api/collections/meta/dry-run-view', access: 'superuser', body: ['query'], base: { query: 'select 1 as id' }, bodies: [{ query: 'select 1 as id; drop table _collections' }, { query: 'select * from _collections' }] },
    { route: 'GET /api/collections/meta/oauth2-providers', access: 'admin' },
    // deleteMissing is left out: with it an administrator's import drops the canary's collections, as it must.
    { route: 'PUT /api/collections/import', access: 'admin', body: ['collections'], base: { collections: [{ name: 'sweep_import' }] }, bodies: [{ collections: [{ name: '../x' }] }, { collections: [{ name: 'x', fields: 'nope' }], deleteMissing: 'yes' }] },
    { route: 'GET /api/crons', access: 'superuser', noDb: true },
    { route: 'POST /api/crons/:id', access: 'superuser', noDb: true, params: { id: 'nightly' } },
    { route: 'POST /api/settings/test/s3', access: 'superuser', noDb: true, body: ['filesystem'] },
    { route: 'POST /api/settings/apple/generate-client-secret', access: 'superuser', noDb: true, body: ['clientId', 'teamId', 'keyId', 'privateKey', 'duration'] },
    { route: 'POST /api/sql', access: 'superuser', body: ['query'], base: { query: 'select 1' }, bodies: [{ query: 'select 1; drop table _collections; select 2; not sql' }] },

    { route: 'GET /api/collections/:collection/records', access: 'public', params: sweep, query: RECORD_LIST, as: 'admin', records: true },
    {
      route: 'POST /api/collections/:collection/records',
      access: 'public',
      params: sweep,
      body: RECORD_KEYS,
      base: { title: 'ok' },
      query: ['expand', 'fields'],
      as: 'admin', records: true,
      bodies: [{ meta: deep() }, { owner: ['a', 'b'] }, { parent: { id: ids.sweepRecord } }, { '@jsonPayload': '{"title": 1}' }, { title: 'x', 'doc+': 'a' }],
      raw: [
        { label: 'multipart without boundary', contentType: 'multipart/form-data', body: 'title=x' },
        { label: 'multipart garbage', contentType: 'multipart/form-data; boundary=b', body: '--b\r\nContent-Disposition: form-data; name="doc"; filename="../../../x"\r\n\r\nabc\r\n--b' },
        {
          label: 'multipart bad @jsonPayload',
          contentType: 'multipart/form-data; boundary=b',
          body: '--b\r\nContent-Disposition: form-data; name="@jsonPayload"\r\n\r\n{"title":\r\n--b--\r\n',
        },
        { label: 'urlencoded', contentType: 'application/x-www-form-urlencoded', body: 'title=x' },
      ],
    },
    { route: 'GET /api/collections/:collection/records/:id', access: 'public', params: record, query: ['expand', 'fields'], as: 'admin', records: true },
    { route: 'PATCH /api/collections/:collection/records/:id', access: 'public', params: record, body: RECORD_KEYS, query: ['expand', 'fields'], as: 'admin', records: true },
    { route: 'DELETE /api/collections/:collection/records/:id', access: 'public', params: { collection: 'sweep', id: ids.spareRecord } },

    {
      route: 'POST /api/batch',
      access: 'public',
      body: ['requests'],
      base: { requests: [{ method: 'POST', url: '/api/collections/sweep/records', body: { title: 'ok' } }] },
      as: 'admin',
      records: true,
      bodies: [
        // Writes outside the allowed set, nested batches, paths that climb out.
        { requests: [{ method: 'POST', url: '/api/batch', body: { requests: [{ method: 'POST', url: '/api/collections/sweep/records', body: {} }] } }] },
        { requests: [{ method: 'POST', url: '/api/collections/sweep/records/../../../../admins', body: { email: 'x@example.com', password: 'xxxxxxxxxx' } }] },
        { requests: [{ method: 'POST', url: '/api/collections', body: { name: 'batched' } }] },
        { requests: [{ method: 'DELETE', url: '/api/collections/canary' }] },
        { requests: [{ method: 'GET', url: '/api/collections/canary/records' }] },
        { requests: [{ method: 'POST', url: '//evil.example/api/collections/sweep/records', body: {} }] },
        { requests: [{ method: 'POST', url: '/api/collections/%2e%2e%2fcanary/records', body: {} }] },
        { requests: [{ method: 'POST', url: '/api/collections/_admins/records', body: {} }] },
        // The canary changed, then a request that fails whatever the sweep collection holds by then: the
        // change rolls back.
        { requests: [{ method: 'DELETE', url: `/api/collections/canary/records/${ids.canaryRecord}` }, { method: 'DELETE', url: '/api/collections/sweep/records/nosuchrecord000' }] },
        { requests: [{ method: 'PATCH', url: `/api/collections/canary/records/${ids.canaryRecord}`, body: { title: 'changed' } }, { method: 'DELETE', url: '/api/collections/sweep/records/nosuchrecord000' }] },
        // An Authorization header inside the batch is not the caller; admin-only fields stay admin-only.
        { requests: [{ method: 'PATCH', url: `/api/collections/users/records/${f.user.id}`, headers: { Authorization: f.server.adminToken }, body: { role: 'admin', verified: true } }] },
        { requests: [{ method: 'PUT', url: '/api/collections/users/records', body: { id: f.user.id, role: 'admin' } }] },
        // Too many, wrong shapes, hostile values.
        { requests: Array.from({ length: 51 }, () => ({ method: 'POST', url: '/api/collections/sweep/records', body: { title: 'x' } })) },
        { requests: [null, 1, 'x', []] },
        { requests: [{ method: ['POST'], url: { $ne: 1 } }] },
        { requests: [{ method: 'POST', url: '/api/collections/sweep/records', headers: { 'x-a': { toString: 'x' } }, body: { title: 'x' } }] },
        { requests: [{ method: 'POST', url: '/api/collections/sweep/records', body: { meta: deep() } }] },
        { requests: [{ method: 'POST', url: `/api/collections/sweep/records?expand=${'parent.'.repeat(10)}parent`, body: { title: 'x' } }] },
        { requests: [{ method: 'POST', url: '/api/collections/sweep/records?__proto__[x]=1&constructor[prototype][x]=1', body: { title: 'x', ['__proto__']: { polluted: true } } }, { method: 'POST', url: '/api/collections/sweep/records', body: { doc: { name: 'x' } } }] },
        { requests: [{ method: 'POST', url: `/api/collections/sweep/records/${'x'.repeat(9000)}`, body: {} }] },
      ],
      raw: [
        { label: 'multipart without boundary', contentType: 'multipart/form-data', body: '@jsonPayload=x' },
        { label: 'multipart garbage', contentType: 'multipart/form-data; boundary=b', body: '--b\r\nContent-Disposition: form-data; name="requests.0.doc"; filename="../../../x"\r\n\r\nabc\r\n--b' },
        {
          label: 'multipart bad @jsonPayload',
          contentType: 'multipart/form-data; boundary=b',
          body: '--b\r\nContent-Disposition: form-data; name="@jsonPayload"\r\n\r\n{"requests":\r\n--b--\r\n',
        },
        {
          label: 'multipart file for a request the batch does not hold',
          contentType: 'multipart/form-data; boundary=b',
          body:
            '--b\r\nContent-Disposition: form-data; name="requests.99.doc"; filename="x.txt"\r\n\r\nabc\r\n' +
            '--b\r\nContent-Disposition: form-data; name="@jsonPayload"\r\n\r\n{"requests":[{"method":"POST","url":"/api/collections/sweep/records","body":{"title":"x"}}]}\r\n--b--\r\n',
        },
        {
          label: 'multipart with two empty payloads',
          contentType: 'multipart/form-data; boundary=b',
          body: '--b\r\nContent-Disposition: form-data; name="@jsonPayload"\r\n\r\n{"requests":[]}\r\n--b\r\nContent-Disposition: form-data; name="@jsonPayload"\r\n\r\n{"requests":[]}\r\n--b--\r\n',
        },
        {
          label: 'multipart __proto__ file key',
          contentType: 'multipart/form-data; boundary=b',
          body: '--b\r\nContent-Disposition: form-data; name="requests.0.__proto__"; filename="x.txt"\r\n\r\nabc\r\n--b\r\nContent-Disposition: form-data; name="@jsonPayload"\r\n\r\n{"requests":[{"method":"POST","url":"/api/collections/sweep/records","body":{"n":"x"}}]}\r\n--b--\r\n',
        },
        { label: 'urlencoded', contentType: 'application/x-www-form-urlencoded', body: 'requests=x' },
      ],
    },

    { route: 'GET /api/collections/:name/rules', access: 'admin', params: { name: 'sweep' } },
    {
      route: 'PUT /api/collections/:name/rules',
      access: 'admin',
      params: { name: 'sweep' },
      body: ['list', 'view', 'create', 'update', 'delete'],
      bodies: [{ list: '('.repeat(100000) }, { list: 'title = "x" || 1=1; DROP TABLE canary' }, { list: `${'owner.'.repeat(50)}id = 1` }, { view: '@collection.canary.title ?= "x"' }],
    },

    { route: 'POST /api/keys', access: 'admin', body: ['name', 'enabled', 'roles'] },
    { route: 'GET /api/keys', access: 'admin', query: LIST },
    { route: 'GET /api/keys/:id', access: 'admin', params: { id: ids.spareKey } },
    { route: 'PATCH /api/keys/:id', access: 'admin', params: { id: ids.spareKey }, body: ['name', 'enabled', 'roles'] },
    { route: 'DELETE /api/keys/:id', access: 'admin', params: { id: ids.spareKey } },
    { route: 'POST /api/keys/:id/rotate', access: 'admin', params: { id: ids.spareKey } },

    { route: 'GET /api/settings', access: 'admin', noDb: true },
    {
      route: 'PATCH /api/settings',
      access: 'admin',
      noDb: true,
      body: ['meta', 'oauth2', 'superuserIPs'],
      bodies: [{ superuserIPs: ['10.0.0.1/99'] }, { superuserIPs: [{}] }, { oauth2: { providers: 'x' } }, { oauth2: { providers: [{ name: {} }] } }, { oauth2: { providers: [{ name: 'generic', authUrl: 'javascript:alert(1)' }] } }, { meta: [] }, { __proto__: null, smtp: {} }],
    },
    { route: 'POST /api/settings/test/email', access: 'admin', noDb: true, body: ['email', 'template'], base: { email: 'ops@example.com' }, bodies: [{ email: 'a@b.co', template: '../../x' }, { email: 'a@b.co\r\nBcc: x@y.z' }] },
    { route: 'GET /api/databases', access: 'admin', noDb: true },
    { route: 'POST /api/databases', access: 'admin', noDb: true, body: ['name'] },

    { route: 'POST /api/files/token', access: 'session' },
    {
      route: 'GET /api/files/:collection/:recordId/:filename',
      access: 'public',
      params: { collection: 'sweep', recordId: ids.sweepRecord, filename: ids.file },
      query: ['token', 'download', 'db', 'thumb'],
      ignoresAuthorization: true,
    },

    { route: 'GET /api/webhooks/logs', access: 'admin', query: [...LIST, 'collection', 'status', 'source', 'eventId'] },
    { route: 'POST /api/webhooks/logs/:id/retry', access: 'admin', params: { id: ids.log } },
    { route: 'GET /api/webhooks/cron', access: 'admin', query: LIST },
    {
      route: 'POST /api/webhooks/cron',
      access: 'admin',
      body: CRON_KEYS,
      base: { name: 'swept', schedule: '0 0 1 1 *', url: 'http://127.0.0.1:9/', method: 'POST' },
      bodies: [
        { name: 'x', schedule: '* * * * * * * *', url: 'http://127.0.0.1:9/', method: 'POST' },
        { name: 'x', schedule: '@every 0s', url: 'http://127.0.0.1:9/', method: 'POST' },
        { name: 'x', schedule: '@every 1ms', url: 'http://127.0.0.1:9/', method: 'POST' },
        { name: 'x', schedule: '0 0 1 1 *', timezone: 'Mars/Olympus', url: 'http://127.0.0.1:9/', method: 'POST' },
        { name: 'x', schedule: '0 0 1 1 *', url: 'file:///etc/passwd', method: 'POST' },
        { name: 'x', schedule: '0 0 1 1 *', url: 'http://127.0.0.1:9/', method: 'POST', headers: { 'x-a': 'b\r\nx-injected: 1' } },
      ],
    },
    { route: 'GET /api/hooks', access: 'admin', noDb: true },
    { route: 'POST /api/hooks/cron/:name', access: 'admin', noDb: true, params: { name: 'none' } },
    { route: 'GET /api/webhooks/cron/:id', access: 'admin', params: { id: ids.cron } },
    { route: 'PATCH /api/webhooks/cron/:id', access: 'admin', params: { id: ids.cron }, body: CRON_KEYS },
    { route: 'DELETE /api/webhooks/cron/:id', access: 'admin', params: { id: ids.cron } },

    {
      route: 'POST /api/workflows',
      access: 'admin',
      body: ['name', 'secret', 'steps'],
      base: { name: 'swept', steps: [{ type: 'create_record', collection: 'sweep', data: {} }] },
      bodies: [
        { name: 'x', steps: [{ type: 1 }] },
        { name: 'x', steps: [{ type: 'create_record', collection: {}, data: [] }] },
        { name: 'x', steps: [{ type: 'create_record', collection: 'canary', data: { title: '{{event.__proto__.x}}' } }] },
        { name: 'x', steps: [{ type: 'webhook', url: 'http://127.0.0.1:9/', method: 'POST', body: deep() }] },
      ],
    },
    { route: 'GET /api/workflows', access: 'admin', query: LIST },
    { route: 'GET /api/workflows/:name', access: 'admin', params: { name: ids.workflow } },
    { route: 'DELETE /api/workflows/:name', access: 'admin', params: { name: ids.workflow } },
    {
      route: 'POST /api/workflows/:name/events',
      access: 'public',
      params: { name: ids.workflow },
      as: 'admin',
      arrayBody: true,
      body: ['title'],
      bodies: [{ title: deep() }, { title: { toString: 'x' } }, { __proto__: null, constructor: { prototype: { x: 1 } } }],
    },
    { route: 'GET /api/workflows/:name/runs', access: 'admin', params: { name: ids.workflow }, query: LIST },
    { route: 'GET /api/workflows/:name/runs/:id', access: 'admin', params: { name: ids.workflow, id: ids.run } },

    { route: 'GET /api/realtime', access: 'public', noDb: true, ignoresAuthorization: true, stream: true, query: ['options'] },
    {
      route: 'POST /api/realtime',
      access: 'public',
      body: ['clientId', 'subscriptions'],
      base: { clientId: 'x'.repeat(40), subscriptions: ['sweep'] },
      bodies: [
        { clientId: 'x', subscriptions: ['x'.repeat(3000)] },
        { clientId: 'x', subscriptions: Array.from({ length: 2000 }, (_, i) => `sweep/${i}`) },
        { clientId: 'x', subscriptions: ['sweep\nevent:injected', 'sweep\u0000'] },
        { clientId: 'x', subscriptions: [`sweep?options=${'{'.repeat(5000)}`, 'sweep?options=%ZZ', '__proto__/*', '../../x/*'] },
        { clientId: 'x'.repeat(300), subscriptions: [] },
      ],
    },
    // Answers every request with a redirect to the dashboard's result page (none names a waiting client here).
    { route: 'GET /api/oauth2-redirect', access: 'public', noDb: true, ignoresAuthorization: true, query: ['state', 'code', 'error'] },
    { route: 'POST /api/oauth2-redirect', access: 'public', noDb: true, ignoresAuthorization: true, body: ['state', 'code', 'error'] },
    { route: 'GET /api/logs', access: 'admin', noDb: true, query: [...LIST, 'sort', 'filter', 'skipTotal'] },
    { route: 'GET /api/logs/stats', access: 'admin', noDb: true, query: ['filter'] },
    { route: 'GET /api/logs/:id', access: 'admin', noDb: true, params: { id: ids.requestLog } },

    { route: 'GET /api/backups', access: 'admin', noDb: true },
    { route: 'POST /api/backups', access: 'admin', noDb: true, body: ['name'] },
    { route: 'POST /api/backups/upload', access: 'admin', noDb: true, raw: HOSTILE_ZIP },
    { route: 'GET /api/backups/:key', access: 'public', noDb: true, params: { key: ids.backup }, query: ['token'], ignoresAuthorization: true },
    { route: 'DELETE /api/backups/:key', access: 'admin', noDb: true, params: { key: ids.spareBackup } },
    // Only ever an archive that fails its checks: a restore that worked would replace the fixture's data.
    { route: 'POST /api/backups/:key/restore', access: 'admin', noDb: true, params: { key: ids.badBackup } },

    { route: 'GET /api/migrations', access: 'admin', noDb: true },
    { route: 'GET /api/migrations/status', access: 'admin', noDb: true },
    { route: 'GET /api/migrations/generate', access: 'admin', noDb: true, query: ['name', 'description'] },
    { route: 'GET /api/migrations/load', access: 'admin', noDb: true, query: ['version'] },
    { route: 'GET /api/migrations/export', access: 'admin', noDb: true },
    {
      route: 'POST /api/migrations/save',
      access: 'admin',
      noDb: true,
      body: ['name', 'description', 'databases', 'yaml'],
      base: { name: 'swept', databases: {} },
      bodies: [
        { name: 'x', databases: { '../x': { collections: {} } } },
        { name: 'x', databases: { main: { collections: { canary: { drop_table: true } } } } },
        { name: 'x', databases: { main: { collections: { x: { create_table: 5 } } } } },
        { name: 'x', databases: { main: { collections: { x: { nope: {} } } } } },
        { yaml: ALIAS_BOMB },
        { yaml: '!!js/function "function () {}"' },
        { name: '../../evil', databases: {} },
      ],
      raw: HOSTILE_YAML,
    },
    { route: 'POST /api/migrations/upload', access: 'admin', noDb: true, raw: [...HOSTILE_YAML, ...HOSTILE_ZIP.slice(2)] },
    { route: 'POST /api/migrations/import', access: 'admin', noDb: true, raw: HOSTILE_ZIP },
    { route: 'POST /api/migrations/apply-pending', access: 'admin', noDb: true },
    { route: 'DELETE /api/migrations/:version', access: 'admin', noDb: true, params: { version: ids.migration } },
    { route: 'GET /api/migrations/:version/download', access: 'admin', noDb: true, params: { version: ids.migration } },
    { route: 'POST /api/migrations/:version/apply', access: 'admin', noDb: true, params: { version: ids.migration } },
    { route: 'POST /api/migrations/:version/rollback', access: 'admin', noDb: true, params: { version: ids.migration } },

    // The dashboard: static files, no database, and no use for a token.
    { route: 'GET /', access: 'public', noDb: true, ignoresAuthorization: true },
    { route: 'GET /_', access: 'public', noDb: true, ignoresAuthorization: true },
    { route: 'GET /_/*', access: 'public', noDb: true, ignoresAuthorization: true },
    // PocketBase's UI-extensions script, empty: SDK-era consoles ask for it.
    { route: 'GET /_/extensions.js', access: 'public', noDb: true, ignoresAuthorization: true },
  ];
}

/** A route pattern with parameter names dropped, to compare the table with what the router holds. */
export function shapeOf(route: string): string {
  return route.replace(/:[A-Za-z]+(\|:[A-Za-z]+)*/g, ':');
}

/**
 * The routes registered in a Fastify app, from `printRoutes()`'s tree: each line is a path segment
 * appended to its parent's, with its methods. HEAD routes Fastify adds for GET are left out, and so is
 * the CORS preflight route (`OPTIONS *`, answered before any of Cairn's code; test/http/cors.test.ts).
 */
export function registeredRoutes(tree: string): string[] {
  const stack: Array<{ indent: number; path: string }> = [];
  const out: string[] = [];
  for (const line of tree.split('\n')) {
    const m = /^([│\s]*)(?:[├└]── )(\S+)(?: \(([^)]+)\))?$/.exec(line);
    if (!m) continue;
    const indent = m[1].length;
    while (stack.length > 0 && stack[stack.length - 1].indent >= indent) stack.pop();
    const parent = stack.length > 0 ? stack[stack.length - 1].path : '';
    // A wildcard under a static segment is printed without its slash (`/_/*` shows as `_` then `*`).
    const path = parent + (m[2] === '*' && parent !== '' && !parent.endsWith('/') ? '/*' : m[2]);
    stack.push({ indent, path });
    for (const method of m[3]?.split(', ') ?? []) {
      if (method !== 'HEAD' && !(method === 'OPTIONS' && path === '*')) out.push(shapeOf(`${method} ${path}`));
    }
  }
  return out.sort();
}
