export type { Database, Dialect, Queryable, Row, RunResult, Transaction, ColumnKind, StorageErrorKind } from './types.ts';
export type { SchemaStep } from './schema-steps.ts';
export { applySchemaSteps, orderColumn } from './schema-steps.ts';
export { DatabaseRegistry, DEFAULT_DATABASE, type DatabaseInfo } from './registry.ts';
export { Sql, sql, raw, ident, join, list, EMPTY } from './sql.ts';
export type { Notifications, StorageBackend, TransactionLock } from './backend.ts';
export { StorageStartError } from './backend.ts';
export { openBackend } from './open.ts';
export { baseDatabase, transactionOf, withinTransaction } from './within.ts';
