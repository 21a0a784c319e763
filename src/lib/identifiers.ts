/**
 * Names that become SQL identifiers (collection, field and database names). Anything that reaches SQL
 * as an identifier passes one of these checks first; values never do, they are always parameters.
 */

/**
 * Collection and field names: PocketBase's `^\w+$` (a leading digit included), at most 63 characters
 * (PostgreSQL's identifier limit), not starting with `_` (Cairn's and PocketBase's own tables).
 */
export const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_]{0,62}$/;

/** Database names (API contract §2); lower case so they map one-to-one onto file names. */
export const DATABASE_NAME_PATTERN = /^[a-z][a-z0-9_]{0,62}$/;

export function isValidName(name: unknown): name is string {
  return typeof name === 'string' && NAME_PATTERN.test(name);
}

/**
 * Collection names become table (or view) names: SQLite keeps `sqlite_*` for its own tables, and
 * PostgreSQL's `pg_*` catalogues come first on its search path. Both are refused on either driver, so
 * that a schema moves between them.
 */
export function isValidCollectionName(name: unknown): name is string {
  return isValidName(name) && !/^(sqlite|pg)_/i.test(name);
}

/** Names a database cannot have on either driver, so that a database moves between them: on
 * PostgreSQL a database is a schema, and these are PostgreSQL's own or Cairn's instance schema. */
export function isReservedDatabaseName(name: string): boolean {
  return name === 'public' || name === 'information_schema' || name === 'cairn_system' || name.startsWith('pg_');
}

export function isValidDatabaseName(name: unknown): name is string {
  return typeof name === 'string' && DATABASE_NAME_PATTERN.test(name) && !isReservedDatabaseName(name);
}

/** Double-quotes an identifier that has already passed a name check (defence in depth: quotes doubled). */
export function quoteIdent(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}
