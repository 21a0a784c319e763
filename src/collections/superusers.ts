import { systemCollectionDates } from './pocketbase-fields.ts';
import { DEFAULT_AUTH_SETTINGS } from './auth-settings.ts';
import { blankCollection, type Collection } from './model.ts';

/**
 * PocketBase ≥ 0.23's `_superusers`: the system auth collection whose records are Cairn's
 * administrators (system.db `_admins`, instance-wide). It is not stored in any database: the
 * collections API lists it in every one, and `src/auth/superusers.ts` serves its records and sign-in.
 * The id is PocketBase's own, which its SDK (0.23 and later) compares tokens with.
 */
export const SUPERUSERS_ID = 'pbc_3142635823';
export const SUPERUSERS_NAME = '_superusers';

/** Whether a collection name or id in a path names `_superusers`. */
export function isSuperusers(nameOrId: string): boolean {
  return nameOrId === SUPERUSERS_ID || nameOrId.toLowerCase() === SUPERUSERS_NAME;
}

/** The collection as the collections API shows it: password sign-in by email, every rule closed. */
export const SUPERUSERS_COLLECTION: Collection = Object.freeze(
  blankCollection('auth', {
    id: SUPERUSERS_ID,
    name: SUPERUSERS_NAME,
    system: true,
    // The first of PocketBase's system collections (pocketbase-system.ts follows it).
    created: '2026-11-28 00:00:00.000Z',
    updated: '2026-11-28 00:00:00.000Z', options: { ...DEFAULT_AUTH_SETTINGS, oauth2: { enabled: false }, systemFields: systemCollectionDates() } }),
);
