import type { Collection } from '../collections/model.ts';

/**
 * The migration file format (spec "Migration file format", API contract §8) and the schema model the
 * planner and the executor work on. A file names, per database and collection, the operations to run.
 */

export const OPERATIONS = [
  'create_table',
  'drop_table',
  'add_columns',
  'drop_columns',
  'add_indexes',
  'drop_indexes',
  'create_views',
  'drop_views',
  'create_fts',
  'drop_fts',
  'update_rules',
] as const;

export type OperationName = (typeof OPERATIONS)[number];

/** A column definition as files carry it; `id` keeps a field's identity across instances. */
export interface FieldSpec {
  id?: string;
  name: string;
  type: string;
  required?: boolean;
  unique?: boolean;
  hidden?: boolean;
  system?: boolean;
  presentable?: boolean;
  default?: unknown;
  options?: Record<string, unknown>;
}

export interface CreateTableSpec {
  name: string;
  type: 'base' | 'auth';
  schema: FieldSpec[];
  system?: boolean;
}

export interface IndexSpec {
  name: string;
  sql: string;
}

export interface ViewSpec {
  name: string;
  sql: string;
}

export interface FtsConfig {
  fields: string[];
  tokenize?: string;
}

/** `update_rules`: each key absent (unchanged), null (administrators only), "" (everyone) or an expression. */
export interface RulesSpec {
  list?: string | null;
  view?: string | null;
  create?: string | null;
  update?: string | null;
  delete?: string | null;
}

export const RULE_KEYS = ['list', 'view', 'create', 'update', 'delete'] as const;

export interface CollectionOps {
  create_table?: CreateTableSpec;
  drop_table?: boolean;
  add_columns?: FieldSpec[];
  drop_columns?: string[];
  add_indexes?: IndexSpec[];
  drop_indexes?: string[];
  create_views?: ViewSpec[];
  drop_views?: string[];
  create_fts?: FtsConfig;
  drop_fts?: boolean;
  update_rules?: RulesSpec;
}

export interface DatabaseOps {
  collections: Record<string, CollectionOps>;
}

export interface Migration {
  version: string;
  name: string;
  created_at: string;
  description?: string;
  databases: Record<string, DatabaseOps>;
}

export type MigrationStatus = 'pending' | 'applied' | 'failed';

/**
 * The schema of one database as migrations see it: its collections as stored in `_collections`
 * (views carry their SQL in `options.query`) and its full-text indexes by collection name.
 */
export interface DatabaseSchema {
  collections: Collection[];
  fts: Record<string, FtsConfig>;
}

/** The schema of every database of an instance, by database name. */
export type InstanceSchema = Record<string, DatabaseSchema>;

export const EMPTY_DATABASE_SCHEMA: DatabaseSchema = Object.freeze({ collections: [], fts: {} }) as DatabaseSchema;
