/** The schema metadata of Cairn: collections and their fields, as stored in `_collections`. */

export type CollectionType = 'base' | 'auth' | 'view';

export interface FieldDef {
  /** Stable identity (a UUID); a field keeps it for life, which is how renames are detected. */
  id: string;
  name: string;
  type: string;
  required: boolean;
  unique: boolean;
  /** Hidden fields are returned to administrators only. */
  hidden: boolean;
  system: boolean;
  presentable: boolean;
  /** Value used on create when the field is absent from the input. */
  default: unknown;
  /** A line for whoever fills the field in (PocketBase ≥ 0.26's `help`); absent when none. */
  help?: string;
  options: Record<string, unknown>;
}

export interface CollectionOptions {
  /** Outbound webhook triggers (see src/webhooks); kept verbatim by the collections layer. */
  triggers?: unknown[];
  [key: string]: unknown;
}

export type RuleName = 'listRule' | 'viewRule' | 'createRule' | 'updateRule' | 'deleteRule';
export const RULE_NAMES: readonly RuleName[] = ['listRule', 'viewRule', 'createRule', 'updateRule', 'deleteRule'];

export interface Collection {
  id: string;
  name: string;
  type: CollectionType;
  system: boolean;
  fields: FieldDef[];
  options: CollectionOptions;
  listRule: string | null;
  viewRule: string | null;
  createRule: string | null;
  updateRule: string | null;
  deleteRule: string | null;
  /** `CREATE INDEX` statements, as PocketBase keeps them. */
  indexes: string[];
  created: string;
  updated: string;
}

/** A collection with no fields and every rule closed, for those made in code (scaffolds, `_superusers`). */
export function blankCollection(type: CollectionType, overrides: Partial<Collection> = {}): Collection {
  return {
    id: '',
    name: '',
    type,
    system: false,
    fields: [],
    options: {},
    listRule: null,
    viewRule: null,
    createRule: null,
    updateRule: null,
    deleteRule: null,
    indexes: [],
    created: '',
    updated: '',
    ...overrides,
  };
}

/** Columns every record table has. */
export const BASE_SYSTEM_FIELDS = ['id', 'created', 'updated'] as const;

/**
 * Columns an auth collection adds. They are managed by Cairn (auth issue), never part of `fields`,
 * and never exposed except `email` (to the owner and admins, or when emailVisibility is on),
 * `emailVisibility` and `verified`.
 */
export const AUTH_SYSTEM_COLUMNS = [
  'email',
  'emailVisibility',
  'verified',
  'passwordHash',
  'tokenKey',
  'lastResetSentAt',
  'lastVerificationSentAt',
] as const;

/** Auth columns that are never part of a record's JSON. */
export const AUTH_SECRET_COLUMNS = new Set(['passwordHash', 'tokenKey', 'lastResetSentAt', 'lastVerificationSentAt']);

/**
 * Names no user-defined field may take: system columns of every table and keys of the record JSON,
 * and the system columns PostgreSQL gives every table (refused on SQLite too, so that a schema moves
 * between the drivers).
 */
export const RESERVED_FIELD_NAMES = new Set(
  [...BASE_SYSTEM_FIELDS, 'collectionId', 'collectionName', 'expand', 'rowid', 'tableoid', 'xmin', 'cmin', 'xmax', 'cmax', 'ctid'].map((n) => n.toLowerCase()),
);

/**
 * Names only an auth collection keeps for itself: its auth columns and the keys of its records'
 * forms. A base collection or a view may have fields of these names (`email`, `password`,
 * `tokenKey`, …), as in PocketBase.
 */
export const AUTH_RESERVED_FIELD_NAMES = new Set(
  ['email', 'emailVisibility', 'verified', ...AUTH_SECRET_COLUMNS, 'password', 'passwordConfirm', 'oldPassword'].map((n) => n.toLowerCase()),
);

/** Whether a collection of `type` keeps `name` for itself. */
export function isReservedFieldName(name: string, type: CollectionType): boolean {
  const lower = name.toLowerCase();
  return RESERVED_FIELD_NAMES.has(lower) || (type === 'auth' && AUTH_RESERVED_FIELD_NAMES.has(lower));
}

/**
 * Whether a collection is Cairn's own default `users` (made with every database, `system`), whose
 * `role` only administrators write. A PocketBase `users` carried by an import replaces it with
 * PocketBase's flag (not system): it is the application's collection then.
 */
export function isCairnUsers(collection: Pick<Collection, 'type' | 'system' | 'name'>): boolean {
  return collection.type === 'auth' && collection.system && collection.name.toLowerCase() === 'users';
}

export function findField(collection: Collection, name: string): FieldDef | undefined {
  return collection.fields.find((f) => f.name === name);
}
