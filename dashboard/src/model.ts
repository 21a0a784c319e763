// Shapes of the API's answers the console reads (docs/api.md).

export interface FieldDef {
  id?: string;
  name: string;
  type: string;
  required: boolean;
  unique: boolean;
  hidden: boolean;
  system?: boolean;
  presentable: boolean;
  default?: unknown;
  options: Record<string, any>;
}

export interface Trigger {
  action: string;
  url: string;
  method?: string;
  headers?: Record<string, string>;
  secret?: string;
  enabled?: boolean;
}

/** An auth collection's sign-in settings (PocketBase ≥ 0.23's names; docs/auth.md "Auth collection settings"). */
export interface AuthSettings {
  passwordAuth: { enabled: boolean; identityFields: string[] };
  oauth2: { enabled: boolean };
  otp: { enabled: boolean; duration: number; length: number };
  mfa: { enabled: boolean; duration: number; rule: string };
  authToken: { duration: number };
}

export const AUTH_SETTINGS = ['passwordAuth', 'oauth2', 'otp', 'mfa', 'authToken'] as const;

/**
 * PocketBase ≥ 0.23's collection of administrators, listed among every database's collections. Its
 * definition is fixed (changing it is a 400): the console manages its records on the Administrators screen.
 */
export const SUPERUSERS = '_superusers';

export interface Collection extends Partial<AuthSettings> {
  id: string;
  name: string;
  type: 'base' | 'auth' | 'view';
  system: boolean;
  fields: FieldDef[];
  options: Record<string, any> & { triggers?: Trigger[] };
  listRule: string | null;
  viewRule: string | null;
  createRule: string | null;
  updateRule: string | null;
  deleteRule: string | null;
  indexes: string[];
  created: string;
  updated: string;
}

export type RecordData = Record<string, any> & { id: string; created: string; updated: string; collectionId: string; collectionName: string };

export const RULES = [
  { key: 'listRule', label: 'List rule', what: 'list and search records' },
  { key: 'viewRule', label: 'View rule', what: 'view one record' },
  { key: 'createRule', label: 'Create rule', what: 'create records' },
  { key: 'updateRule', label: 'Update rule', what: 'update records' },
  { key: 'deleteRule', label: 'Delete rule', what: 'delete records' },
] as const;

export type RuleKey = (typeof RULES)[number]['key'];

export const FIELD_TYPES = ['text', 'editor', 'number', 'bool', 'email', 'url', 'date', 'select', 'json', 'relation', 'file'] as const;

/** Auth collections' system fields, shown and edited besides the collection's own. */
export const AUTH_FIELDS = ['email', 'emailVisibility', 'verified'];

/** The name to show for a record: its presentable fields, else a name, title or text field, else its id. */
export function recordTitle(record: Record<string, any> | undefined, collection: Collection | undefined): string {
  if (!record) return '';
  const fields = collection?.fields ?? [];
  const shown = fields.filter((f) => f.presentable).map((f) => record[f.name]).filter((v) => v !== undefined && v !== null && v !== '');
  if (shown.length > 0) return shown.join(' · ');
  for (const key of ['name', 'title', 'email']) if (typeof record[key] === 'string' && record[key] !== '') return record[key];
  const text = fields.find((f) => f.type === 'text' && record[f.name]);
  return text ? String(record[text.name]) : record.id;
}

/** The URL of a stored file, with a token for protected fields. */
export function fileUrl(collection: string, recordId: string, name: string, db: string, token?: string): string {
  const q = new URLSearchParams({ db });
  if (token) q.set('token', token);
  return `/api/files/${encodeURIComponent(collection)}/${encodeURIComponent(recordId)}/${encodeURIComponent(name)}?${q}`;
}

export const isImage = (name: string) => /\.(png|jpe?g|gif|webp|avif|svg)$/i.test(name);
