import { adminsTableStep, adminsTokenSecretStep, adminsTokenSecretsStep, superusersViewStep } from './auth/admins.ts';
import { apiKeysTableStep } from './auth/api-keys.ts';
import { externalAuthsTableStep } from './auth/oauth2/login.ts';
import { mfasTableStep } from './auth/mfa.ts';
import { oneTimeTokensNewEmailStep, oneTimeTokensTableStep } from './auth/one-time-tokens.ts';
import { otpsTableStep } from './auth/otp.ts';
import { collectionsTableStep } from './collections/store.ts';
import { recordIdsStep } from './collections/table-sync.ts';
import { POCKETBASE_SYSTEM_COLLECTIONS, pocketBaseSystemTablesStep } from './collections/pocketbase-system.ts';
import { usersCollectionStep, usersMappedFieldsStep, usersRulesStep } from './collections/service.ts';
import { settingsTableStep } from './settings/service.ts';
import { secretsTableStep } from './auth/secret.ts';
import { cronJobsTableStep } from './jobs/store.ts';
import { fulltextTableStep } from './migrations/fts.ts';
import { migrationFilesTableStep } from './migrations/files.ts';
import { journalTableStep } from './migrations/journal.ts';
import type { SchemaStep } from './storage/index.ts';
import { hookCronRunsStep } from './hooks/cron.ts';
import { logsEventSeqStep, logsNodeStep, logsTableStep } from './webhooks/logs.ts';
import type { OutboxStore } from './webhooks/store.ts';
import { realtimeClientsNodeStep, realtimeClientsStep, realtimeForwardsStep } from './realtime/postgres-directory.ts';
import { workflowRunLeasesStep, workflowTablesStep } from './workflows/store.ts';
import { rateLimitsTableStep } from './ratelimit/database.ts';

/**
 * Cairn's own tables, in the order they are created. Each domain contributes its steps here; a step
 * runs once per database file and is recorded by id in `_cairn_schema`.
 */

/** Instance-wide tables in system.db. */
export const systemSteps: SchemaStep[] = [
  {
    id: 'system.databases',
    async up(tx) {
      await tx.exec('CREATE TABLE _databases (name TEXT PRIMARY KEY NOT NULL, created TEXT NOT NULL)');
    },
  },
  adminsTableStep,
  settingsTableStep,
  journalTableStep,
  // Administrator password resets keep their single-use tokens beside the administrators.
  oneTimeTokensTableStep,
  secretsTableStep,
  migrationFilesTableStep,
  // Shared rate-limit counters (used where several nodes share the database).
  rateLimitsTableStep,
  realtimeClientsStep,
  // Which node runs each tick of the cron jobs application hooks add.
  hookCronRunsStep,
  oneTimeTokensNewEmailStep,
  adminsTokenSecretStep,
  adminsTokenSecretsStep,
  // What views read as PocketBase's `_superusers` (PostgreSQL; SQLite needs no table for it).
  superusersViewStep,
  realtimeClientsNodeStep,
  realtimeForwardsStep,
];

/** Tables of every database (`main` and those created through /api/databases); the outbox's are
 * the storage driver's own. */
export function databaseSteps(outbox: OutboxStore): SchemaStep[] {
  return [
    collectionsTableStep,
    usersCollectionStep,
    usersRulesStep,
    apiKeysTableStep,
    ...outbox.steps,
    logsTableStep,
    cronJobsTableStep,
    fulltextTableStep,
    oneTimeTokensTableStep,
    externalAuthsTableStep,
    workflowTablesStep,
    logsEventSeqStep,
    logsNodeStep,
    workflowRunLeasesStep,
    otpsTableStep,
    mfasTableStep,
    oneTimeTokensNewEmailStep,
    // Moves the OAuth2 links, MFA and OTP rows above into PocketBase's system collections' tables.
    pocketBaseSystemTablesStep,
    recordIdsStep(POCKETBASE_SYSTEM_COLLECTIONS.map((c) => c.name)),
    usersMappedFieldsStep,
  ];
}
