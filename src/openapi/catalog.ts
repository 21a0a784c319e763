/**
 * What `/api/openapi.json` says about each route beyond what the router knows (method, path, path
 * parameters, whether it reads `x-dbname`): a summary, a tag, who may call it, its query parameters,
 * its body and its answer. Keyed like the router's routes; a route missing here is still documented,
 * with generic answers (a test keeps this table complete).
 */

/** Who may call: as test/hardening/routes.ts names it, plus file tokens and workflow secrets. */
export type Access = 'public' | 'admin' | 'session' | 'admin-session' | 'superuser' | 'file-token' | 'workflow-secret';

export interface OperationInfo {
  summary: string;
  tag: string;
  access: Access;
  /** Success status (200 unless said; a 3xx is a redirect, without content). */
  status?: 200 | 202 | 204 | 303 | 307;
  /** Names of query parameters (see QUERY_PARAMETERS in document.ts). */
  query?: readonly string[];
  /** A components/schemas name for a JSON body, or `multipart`, or `object` for a free JSON object. */
  body?: string;
  /** A components/schemas name, `[Name]` for an array of them, or a content kind. */
  response?: string;
}

const LIST = ['page', 'perPage'];
const RECORD_LIST = ['page', 'perPage', 'sort', 'filter', 'expand', 'fields', 'skipTotal', 'search'];
const RECORD_VIEW = ['expand', 'fields'];

export const CATALOG: Record<string, OperationInfo> = {
  'GET /api/health': { summary: 'Health check', tag: 'health', access: 'public', response: 'Health' },
  'GET /api/openapi.json': { summary: 'This document, with the schemas of the x-dbname database\'s collections', tag: 'meta', access: 'admin', response: 'object' },

  'GET /api/admins': { summary: 'List administrators', tag: 'admins', access: 'admin', query: LIST, response: 'AdminList' },
  'POST /api/admins': { summary: 'Create an administrator', tag: 'admins', access: 'admin', body: 'AdminInput', response: 'Admin' },
  'POST /api/admins/auth-with-password': { summary: 'Sign in as an administrator', tag: 'admins', access: 'public', body: 'PasswordSignIn', response: 'AdminAuth' },
  'POST /api/admins/auth-refresh': { summary: "Renew an administrator's token", tag: 'admins', access: 'admin-session', response: 'AdminAuth' },
  'GET /api/admins/me': { summary: 'The signed-in administrator', tag: 'admins', access: 'admin-session', response: 'Admin' },
  'GET /api/admins/has-admins': { summary: 'Whether an administrator exists', tag: 'admins', access: 'public', response: 'object' },
  'POST /api/admins/init': { summary: 'Create the first administrator', tag: 'admins', access: 'public', body: 'AdminInput', response: 'AdminAuth' },
  'POST /api/admins/request-password-reset': { summary: "Mail an administrator a password reset link", tag: 'admins', access: 'public', body: 'object', status: 204 },
  'POST /api/admins/confirm-password-reset': { summary: "Set an administrator's password with a reset token", tag: 'admins', access: 'public', body: 'object', status: 204 },
  'GET /api/admins/:id': { summary: 'View an administrator', tag: 'admins', access: 'admin', response: 'Admin' },
  'PATCH /api/admins/:id': { summary: 'Update an administrator', tag: 'admins', access: 'admin', body: 'AdminInput', response: 'Admin' },
  'DELETE /api/admins/:id': { summary: 'Delete an administrator', tag: 'admins', access: 'admin', status: 204 },

  'POST /api/auth/login': { summary: 'Sign in a user with email and password', tag: 'auth', access: 'public', body: 'PasswordSignIn', response: 'RecordAuth' },
  'POST /api/auth/register': { summary: 'Register a user', tag: 'auth', access: 'public', body: 'object', response: 'Record' },
  'POST /api/auth/refresh': { summary: "Renew a user's token", tag: 'auth', access: 'session', response: 'RecordAuth' },
  'GET /api/auth/me': { summary: 'The signed-in user', tag: 'auth', access: 'session', query: RECORD_VIEW, response: 'Record' },
  'GET /api/auth/methods': { summary: 'Sign-in methods and OAuth2 providers', tag: 'auth', access: 'public', query: ['redirectUrl'], response: 'object' },
  'GET /api/auth/oauth2-login': { summary: 'Sign in with an OAuth2 authorization code', tag: 'auth', access: 'public', query: ['provider', 'code', 'codeVerifier', 'redirectUrl'], response: 'RecordAuth' },
  'POST /api/collections/:collection/auth-with-password': { summary: 'Sign in to an auth collection with a password', tag: 'auth', access: 'public', body: 'PasswordSignIn', response: 'RecordAuth' },
  'POST /api/collections/:collection/auth-with-oauth2': { summary: 'Sign in to an auth collection with OAuth2', tag: 'auth', access: 'public', body: 'object', response: 'RecordAuth' },
  'POST /api/collections/:collection/auth-refresh': { summary: "Renew an auth record's token", tag: 'auth', access: 'session', response: 'RecordAuth' },
  'GET /api/collections/:collection/auth-methods': { summary: "An auth collection's sign-in methods", tag: 'auth', access: 'public', query: ['redirectUrl', 'fields'], response: 'object' },
  'POST /api/collections/:collection/request-otp': { summary: 'Mail a one-time sign-in code (an otpId for any address)', tag: 'auth', access: 'public', body: 'OtpRequest', response: 'OtpSent' },
  'POST /api/collections/:collection/auth-with-otp': { summary: 'Sign in with a mailed one-time code', tag: 'auth', access: 'public', body: 'OtpSignIn', response: 'RecordAuth' },
  'POST /api/collections/:collection/impersonate/:id': { summary: "A superuser's static token for a record (no refresh)", tag: 'auth', access: 'admin-session', body: 'Impersonation', response: 'RecordAuth' },
  'POST /api/collections/:collection/request-verification': { summary: 'Mail a verification link', tag: 'auth', access: 'public', body: 'object', status: 204 },
  'POST /api/collections/:collection/confirm-verification': { summary: 'Verify an email address with a token', tag: 'auth', access: 'public', body: 'object', status: 204 },
  'POST /api/collections/:collection/request-password-reset': { summary: 'Mail a password reset link', tag: 'auth', access: 'public', body: 'object', status: 204 },
  'POST /api/collections/:collection/request-email-change': { summary: "Mail a link to move the signed-in account to a new address", tag: 'auth', access: 'session', body: 'object', status: 204 },
  'POST /api/collections/:collection/confirm-email-change': { summary: 'Move the account to the new address with the token and its password', tag: 'auth', access: 'public', body: 'object', status: 204 },
  'POST /api/collections/:collection/confirm-password-reset': { summary: 'Set a password with a reset token', tag: 'auth', access: 'public', body: 'object', status: 204 },

  'POST /api/collections/_superusers/auth-with-password': { summary: 'Sign in as a superuser (PocketBase 0.23 token)', tag: 'superusers', access: 'public', body: 'PasswordSignIn', response: 'SuperuserAuth' },
  'POST /api/collections/_superusers/auth-refresh': { summary: "Renew a superuser's token", tag: 'superusers', access: 'admin-session', response: 'SuperuserAuth' },
  'GET /api/collections/_superusers/auth-methods': { summary: 'How superusers sign in', tag: 'superusers', access: 'public', query: ['fields'], response: 'object' },
  'POST /api/collections/_superusers/request-password-reset': { summary: 'Mail a superuser a password reset link', tag: 'superusers', access: 'public', body: 'object', status: 204 },
  'POST /api/collections/_superusers/confirm-password-reset': { summary: "Set a superuser's password with a reset token", tag: 'superusers', access: 'public', body: 'object', status: 204 },
  'POST /api/collections/_superusers/impersonate/:id': { summary: "A static token of another superuser (no refresh)", tag: 'superusers', access: 'admin-session', body: 'Impersonation', response: 'SuperuserAuth' },
  'GET /api/collections/_superusers/records': { summary: 'List superusers', tag: 'superusers', access: 'admin', query: ['page', 'perPage', 'sort', 'filter', 'skipTotal'], response: 'SuperuserList' },
  'POST /api/collections/_superusers/records': { summary: 'Create a superuser', tag: 'superusers', access: 'admin', body: 'AdminInput', response: 'Record' },
  'GET /api/collections/_superusers/records/:id': { summary: 'View a superuser', tag: 'superusers', access: 'admin', response: 'Record' },
  'PATCH /api/collections/_superusers/records/:id': { summary: 'Update a superuser', tag: 'superusers', access: 'admin', body: 'AdminInput', response: 'Record' },
  'DELETE /api/collections/_superusers/records/:id': { summary: 'Delete a superuser (not the last one)', tag: 'superusers', access: 'admin', status: 204 },

  'GET /api/collections': { summary: 'List collections', tag: 'collections', access: 'admin', query: [...LIST, 'type'], response: 'CollectionList' },
  'POST /api/collections': { summary: 'Create a collection', tag: 'collections', access: 'admin', body: 'CollectionInput', response: 'Collection' },
  'GET /api/collections/:name': { summary: 'View a collection', tag: 'collections', access: 'admin', response: 'Collection' },
  'PATCH /api/collections/:name': { summary: 'Update a collection (fields are only added)', tag: 'collections', access: 'admin', body: 'CollectionInput', response: 'Collection' },
  'DELETE /api/collections/:name': { summary: 'Delete a collection (its table and data stay)', tag: 'collections', access: 'admin', status: 204 },
  'DELETE /api/collections/:name/truncate': { summary: 'Delete every record of a collection (in one transaction)', tag: 'collections', access: 'admin', status: 204 },
  'GET /api/collections/meta/oauth2-providers': { summary: 'The OAuth2 providers Cairn knows by name', tag: 'collections', access: 'admin', response: 'object' },
  'POST /api/collections/meta/dry-run-view': { summary: "A view query's fields and a sample of its rows, nothing kept", tag: 'collections', access: 'superuser', body: 'object', response: 'object' },
  'PUT /api/collections/import': { summary: "Make the database's collections the given ones (PocketBase's import)", tag: 'collections', access: 'admin', body: 'object', status: 204 },
  'GET /api/collections/meta/scaffolds': { summary: 'A new collection of each type, as PocketBase 0.23 scaffolds them', tag: 'collections', access: 'admin', response: 'Scaffolds' },
  'GET /api/collections/:name/rules': { summary: "A collection's access rules", tag: 'collections', access: 'admin', response: 'Rules' },
  'PUT /api/collections/:name/rules': { summary: "Replace a collection's access rules", tag: 'collections', access: 'admin', body: 'Rules', response: 'Rules' },

  'GET /api/collections/:collection/records': { summary: 'List records (rules apply)', tag: 'records', access: 'public', query: RECORD_LIST, response: 'RecordList' },
  'POST /api/collections/:collection/records': { summary: 'Create a record (JSON or multipart with files)', tag: 'records', access: 'public', query: RECORD_VIEW, body: 'Record', response: 'Record' },
  'GET /api/collections/:collection/records/:id': { summary: 'View a record', tag: 'records', access: 'public', query: RECORD_VIEW, response: 'Record' },
  'PATCH /api/collections/:collection/records/:id': { summary: 'Update a record', tag: 'records', access: 'public', query: RECORD_VIEW, body: 'Record', response: 'Record' },
  'DELETE /api/collections/:collection/records/:id': { summary: 'Delete a record', tag: 'records', access: 'public', status: 204 },
  'POST /api/batch': { summary: 'Create, update, upsert and delete records in one transaction (JSON, or multipart with @jsonPayload and files)', tag: 'records', access: 'public', body: 'BatchRequest', response: '[BatchResult]' },

  'POST /api/files/token': { summary: 'A short-lived token for protected files (and, for administrators, backup downloads)', tag: 'files', access: 'session', response: 'FileToken' },
  'GET /api/files/:collection/:recordId/:filename': { summary: "Download a record's file", tag: 'files', access: 'public', query: ['token', 'download', 'db', 'thumb'], response: 'file' },

  'POST /api/keys': { summary: 'Create an API key (its key is shown once)', tag: 'keys', access: 'admin', body: 'ApiKeyInput', response: 'ApiKey' },
  'GET /api/keys': { summary: 'List API keys', tag: 'keys', access: 'admin', query: LIST, response: 'object' },
  'GET /api/keys/:id': { summary: 'View an API key', tag: 'keys', access: 'admin', response: 'ApiKey' },
  'PATCH /api/keys/:id': { summary: 'Update an API key', tag: 'keys', access: 'admin', body: 'ApiKeyInput', response: 'ApiKey' },
  'DELETE /api/keys/:id': { summary: 'Delete an API key', tag: 'keys', access: 'admin', status: 204 },
  'POST /api/keys/:id/rotate': { summary: "Replace an API key's key", tag: 'keys', access: 'admin', response: 'ApiKey' },

  'GET /api/settings': { summary: 'Instance settings (secrets left out)', tag: 'settings', access: 'admin', response: 'object' },
  'PATCH /api/settings': { summary: 'Update instance settings', tag: 'settings', access: 'admin', body: 'object', response: 'object' },
  'POST /api/settings/test/email': { summary: "Send a test mail (one of PocketBase's five templates)", tag: 'settings', access: 'admin', body: 'object', status: 204 },
  'POST /api/settings/test/s3': { summary: 'Check that the S3 bucket of files or backups answers', tag: 'settings', access: 'superuser', body: 'object', status: 204 },
  'POST /api/settings/apple/generate-client-secret': { summary: "Make a Sign in with Apple client secret (ES256 JWT) from the app's key", tag: 'settings', access: 'superuser', body: 'object', response: 'object' },
  'POST /api/sql': { summary: "Run SQL on the database (PocketBase's SQL console): the last statement's columns and rows", tag: 'settings', access: 'superuser', body: 'object', response: 'object' },
  'GET /api/crons': { summary: "The hooks' cron jobs, as PocketBase lists its own", tag: 'hooks', access: 'superuser', response: 'object' },
  'POST /api/crons/:id': { summary: "Run one of the hooks' cron jobs now", tag: 'hooks', access: 'superuser', status: 204 },
  'GET /api/databases': { summary: 'List databases', tag: 'databases', access: 'admin', response: '[Database]' },
  'POST /api/databases': { summary: 'Create a database', tag: 'databases', access: 'admin', body: 'DatabaseInput', response: 'Database' },

  'GET /api/webhooks/logs': { summary: 'Webhook delivery attempts', tag: 'webhooks', access: 'admin', query: [...LIST, 'collection', 'status', 'source', 'eventId'], response: 'object' },
  'POST /api/webhooks/logs/:id/retry': { summary: "Send a logged attempt's event again", tag: 'webhooks', access: 'admin', response: 'object' },
  'GET /api/hooks': { summary: 'The application hooks loaded: files, handlers, routes, cron jobs, last load error', tag: 'hooks', access: 'admin', response: 'object' },
  'POST /api/hooks/cron/:name': { summary: 'Run a cron job added by a hook now, on this node', tag: 'hooks', access: 'admin', status: 204 },
  'GET /api/webhooks/cron': { summary: 'List cron jobs', tag: 'webhooks', access: 'admin', query: LIST, response: 'object' },
  'POST /api/webhooks/cron': { summary: 'Create a cron job', tag: 'webhooks', access: 'admin', body: 'object', response: 'object' },
  'GET /api/webhooks/cron/:id': { summary: 'View a cron job', tag: 'webhooks', access: 'admin', response: 'object' },
  'PATCH /api/webhooks/cron/:id': { summary: 'Update a cron job', tag: 'webhooks', access: 'admin', body: 'object', response: 'object' },
  'DELETE /api/webhooks/cron/:id': { summary: 'Delete a cron job', tag: 'webhooks', access: 'admin', status: 204 },

  'POST /api/workflows': { summary: 'Create or replace a workflow', tag: 'workflows', access: 'admin', body: 'object', response: 'object' },
  'GET /api/workflows': { summary: 'List workflows', tag: 'workflows', access: 'admin', query: LIST, response: 'object' },
  'GET /api/workflows/:name': { summary: 'View a workflow', tag: 'workflows', access: 'admin', response: 'object' },
  'DELETE /api/workflows/:name': { summary: 'Delete a workflow', tag: 'workflows', access: 'admin', status: 204 },
  'POST /api/workflows/:name/events': { summary: "Send an event to a workflow (its secret or an API key)", tag: 'workflows', access: 'workflow-secret', body: 'object', status: 202, response: 'object' },
  'GET /api/workflows/:name/runs': { summary: "A workflow's runs", tag: 'workflows', access: 'admin', query: LIST, response: 'object' },
  'GET /api/workflows/:name/runs/:id': { summary: 'One run of a workflow', tag: 'workflows', access: 'admin', response: 'object' },

  'GET /api/realtime': { summary: 'Open a realtime event stream (server-sent events; its first message, PB_CONNECT, gives the client id)', tag: 'realtime', access: 'public', response: 'event-stream' },
  'POST /api/realtime': { summary: "Replace a realtime client's subscriptions, as the caller and in the x-dbname database", tag: 'realtime', access: 'public', body: 'object', status: 204 },
  'GET /api/oauth2-redirect': { summary: "An OAuth2 provider's redirect in the SDK's popup flow: hands the code to the realtime client named by state (waiting on @oauth2), then redirects to the dashboard's result page", tag: 'auth', access: 'public', query: ['code', 'state', 'error'], status: 307 },
  'POST /api/oauth2-redirect': { summary: "The same, for a provider that posts a form (Apple's form_post)", tag: 'auth', access: 'public', body: 'object', status: 303 },

  'GET /api/logs': { summary: 'Request logs (filter and sort over their fields)', tag: 'logs', access: 'admin', query: [...LIST, 'sort', 'filter', 'skipTotal'], response: 'RequestLogList' },
  'GET /api/logs/stats': { summary: 'Requests per hour', tag: 'logs', access: 'admin', query: ['filter'], response: '[LogStat]' },
  'GET /api/logs/:id': { summary: 'One request log', tag: 'logs', access: 'admin', response: 'RequestLog' },

  'GET /api/backups': { summary: 'List backups', tag: 'backups', access: 'admin', response: '[Backup]' },
  'POST /api/backups': { summary: 'Take a backup (writes go on meanwhile)', tag: 'backups', access: 'admin', body: 'BackupInput', status: 204 },
  'POST /api/backups/upload': { summary: 'Upload a backup (multipart field "file")', tag: 'backups', access: 'admin', body: 'multipart', status: 204 },
  'GET /api/backups/:key': { summary: "Download a backup with an administrator's file token", tag: 'backups', access: 'file-token', query: ['token'], response: 'zip' },
  'DELETE /api/backups/:key': { summary: 'Delete a backup', tag: 'backups', access: 'admin', status: 204 },
  'POST /api/backups/:key/restore': { summary: 'Restore a backup: checked, then swapped in and the services restarted', tag: 'backups', access: 'admin', status: 204 },

  'GET /api/migrations': { summary: 'List migrations', tag: 'migrations', access: 'admin', response: 'object' },
  'GET /api/migrations/status': { summary: 'Counts of applied, pending and failed migrations', tag: 'migrations', access: 'admin', response: 'object' },
  'GET /api/migrations/generate': { summary: 'Generate a migration from the live schema', tag: 'migrations', access: 'admin', query: ['name', 'description'], response: 'object' },
  'GET /api/migrations/load': { summary: 'Read a migration', tag: 'migrations', access: 'admin', query: ['version'], response: 'object' },
  'GET /api/migrations/export': { summary: 'Every migration file, as a ZIP', tag: 'migrations', access: 'admin', response: 'zip' },
  'POST /api/migrations/save': { summary: 'Save a pending migration', tag: 'migrations', access: 'admin', body: 'object', response: 'object' },
  'POST /api/migrations/upload': { summary: 'Upload one YAML migration', tag: 'migrations', access: 'admin', body: 'multipart', response: 'object' },
  'POST /api/migrations/import': { summary: 'Import a ZIP of migrations', tag: 'migrations', access: 'admin', body: 'multipart', response: 'object' },
  'POST /api/migrations/apply-pending': { summary: 'Apply every pending migration', tag: 'migrations', access: 'admin', response: 'object' },
  'DELETE /api/migrations/:version': { summary: 'Delete a pending or failed migration', tag: 'migrations', access: 'admin', status: 204 },
  'GET /api/migrations/:version/download': { summary: 'Download a migration file', tag: 'migrations', access: 'admin', response: 'yaml' },
  'POST /api/migrations/:version/apply': { summary: 'Apply a migration', tag: 'migrations', access: 'admin', response: 'object' },
  'POST /api/migrations/:version/rollback': { summary: 'Roll back the latest applied migration', tag: 'migrations', access: 'admin', response: 'object' },
};
