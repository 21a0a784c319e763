/**
 * PocketBase's `_superusers` as SQL written by users (a view collection's query) reads it: Cairn's
 * administrators, instance-wide (`_admins` in system.db or `cairn_system`, src/auth/admins.ts), with
 * PocketBase's public columns only. The password hash and tokenKey are not there to select, so no view
 * can expose them; `emailVisibility` is false and `verified` true, as for PocketBase's superusers.
 */
export const SUPERUSERS_VIEW_COLUMNS = ['id', 'email', 'emailVisibility', 'verified', 'created', 'updated'] as const;

/** Those columns, read from `_admins` in the instance's own database. */
export const SUPERUSERS_SELECT = 'SELECT id, email, FALSE AS "emailVisibility", TRUE AS verified, created, updated FROM _admins';
