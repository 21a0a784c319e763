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

/** Names no user-defined field may take: system columns, auth columns and keys of the record JSON. */
export const RESERVED_FIELD_NAMES = new Set(
  [
    ...BASE_SYSTEM_FIELDS,
    ...AUTH_SYSTEM_COLUMNS,
    'collectionId',
    'collectionName',
    'expand',
    'password',
    'passwordConfirm',
    'oldPassword',
    'rowid',
  ].map((n) => n.toLowerCase()),
);

export function findField(collection: Collection, name: string): FieldDef | undefined {
  return collection.fields.find((f) => f.name === name);
}
