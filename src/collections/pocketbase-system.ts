import { defaultLeadingSystemFields, systemCollectionDates } from './pocketbase-fields.ts';
import type { SchemaStep } from '../storage/index.ts';
import { quoteIdent } from '../lib/identifiers.ts';
import { blankCollection, type Collection, type FieldDef } from './model.ts';
import { syncTable } from './table-sync.ts';

/**
 * PocketBase ≥ 0.23's system base collections of auth data, served in every database as record
 * collections with PocketBase's ids, fields and rules (an account lists and views its own rows, and
 * deletes its own OAuth2 links and sign-in origins; only superusers create or change rows):
 *
 * - `_externalAuths` — OAuth2 links (src/auth/oauth2/login.ts writes them);
 * - `_mfas` — first factors of multi-factor sign-ins under way (src/auth/mfa.ts);
 * - `_otps` — one-time codes (src/auth/otp.ts; the code's HMAC and the tries are columns, not fields);
 * - `_authOrigins` — the devices an account signed in from.
 *
 * Their metadata is not stored in `_collections` (so migrations, typegen and exports never see them):
 * `CollectionService` adds them to every database's collections. Their tables are real and are
 * created by `pocketBaseSystemTablesStep`; `syncTable` gives them the columns and indexes a record
 * table has, so the records API, rules, filters, expand and realtime work on them unchanged.
 */
export const EXTERNAL_AUTHS = '_externalAuths';
export const MFAS = '_mfas';
export const OTPS = '_otps';
export const AUTH_ORIGINS = '_authOrigins';

const OWNER_RULE = "@request.auth.id != '' && recordRef = @request.auth.id && collectionRef = @request.auth.collectionId";

function text(id: string, name: string, options: { required?: boolean; hidden?: boolean } = {}): FieldDef {
  return {
    id,
    name,
    type: 'text',
    required: options.required ?? false,
    unique: false,
    hidden: options.hidden ?? false,
    system: true,
    presentable: false,
    default: null,
    options: { min: null, max: null, pattern: '' },
  };
}

const refs = (prefix: string) => [text(`${prefix}_collectionRef`, 'collectionRef', { required: true }), text(`${prefix}_recordRef`, 'recordRef', { required: true })];

/**
 * When these collections first appeared in Cairn, fixed so answers do not change between calls: a
 * millisecond apart, after `_superusers`, in the order PocketBase creates them (`sort=-created`
 * pages through them as it does).
 */
export const SYSTEM_COLLECTIONS_SINCE = '2026-11-28 00:00:00.000Z';
const since = (ms: number) => SYSTEM_COLLECTIONS_SINCE.replace('.000Z', `.00${ms}Z`);

function systemCollection(id: string, name: string, fields: FieldDef[], deletable: boolean, indexes: string[], order: number, options: Record<string, unknown> = { systemFields: systemCollectionDates() }): Collection {
  const created = since(order);
  return Object.freeze(
    blankCollection('base', {
      id,
      name,
      system: true,
      fields,
      listRule: OWNER_RULE,
      viewRule: OWNER_RULE,
      deleteRule: deletable ? OWNER_RULE : null,
      indexes,
      created,
      updated: created,
      options,
    }),
  );
}

export const POCKETBASE_SYSTEM_COLLECTIONS: readonly Collection[] = [
  systemCollection('pbc_2281828961', EXTERNAL_AUTHS, [...refs('ea'), text('ea_provider', 'provider', { required: true }), text('ea_providerId', 'providerId', { required: true })], true, [
    'CREATE UNIQUE INDEX idx_externalAuths_record_provider ON _externalAuths (collectionRef, recordRef, provider)',
    'CREATE UNIQUE INDEX idx_externalAuths_collection_provider ON _externalAuths (collectionRef, provider, providerId)',
  ], 1),
  systemCollection('pbc_2279338944', MFAS, [...refs('mfa'), text('mfa_method', 'method', { required: true })], false, [
    'CREATE INDEX idx_mfas_collectionRef_recordRef ON _mfas (collectionRef, recordRef)',
  ], 2),
  systemCollection('pbc_1638494021', OTPS, [...refs('otp'), text('otp_sentTo', 'sentTo', { hidden: true })], false, [
    'CREATE INDEX idx_otps_collectionRef_recordRef ON _otps (collectionRef, recordRef)',
  ], 3, {
    // PocketBase lists the code as a hidden password field; Cairn keeps its HMAC in a column of its own.
    systemFields: [
      ...defaultLeadingSystemFields('base'),
      { cost: 8, help: '', hidden: true, id: 'password901924565', max: 0, min: 0, name: 'password', pattern: '', presentable: false, required: true, system: true, type: 'password' },
      ...systemCollectionDates(),
    ],
    fieldOrder: ['id', 'collectionRef', 'recordRef', 'password', 'sentTo', 'created', 'updated'],
  }),
  systemCollection('pbc_4275539003', AUTH_ORIGINS, [...refs('ao'), text('ao_fingerprint', 'fingerprint', { required: true })], true, [
    'CREATE UNIQUE INDEX idx_authOrigins_unique_pairs ON _authOrigins (collectionRef, recordRef, fingerprint)',
  ], 4),
];

const byName = new Map(POCKETBASE_SYSTEM_COLLECTIONS.map((c) => [c.name.toLowerCase(), c]));

/** The PocketBase system collection of that name (case-insensitive), if it is one. */
export function pocketBaseSystemCollection(name: string): Collection | undefined {
  return byName.get(name.toLowerCase());
}

/**
 * Creates the four tables in every database, moving what Cairn kept before in tables of its own
 * (`_external_auths`, and `_mfas`/`_otps` with `collectionId`/`recordId` columns) into them.
 */
export const pocketBaseSystemTablesStep: SchemaStep = {
  id: 'collections.pocketbase-system',
  async up(tx) {
    const q = quoteIdent;
    // The old tables of the same names make way, with their indexes (index names are per database).
    for (const [table, index] of [
      [MFAS, '_mfas_created'],
      [OTPS, '_otps_created'],
    ] as const) {
      if (!(await tx.dialect.tableExists(tx, table))) continue;
      await tx.exec(`DROP INDEX IF EXISTS ${q(index)}`);
      await tx.exec(`ALTER TABLE ${q(table)} RENAME TO ${q(`${table}_before`)}`);
    }
    for (const collection of POCKETBASE_SYSTEM_COLLECTIONS) await syncTable(tx, undefined, collection);
    // What the OTP flow keeps beside the fields: the code's HMAC and the wrong tries so far.
    await tx.exec(`ALTER TABLE ${q(OTPS)} ADD COLUMN hash TEXT DEFAULT '' NOT NULL`);
    await tx.exec(`ALTER TABLE ${q(OTPS)} ADD COLUMN attempts INTEGER DEFAULT 0 NOT NULL`);

    if (await tx.dialect.tableExists(tx, '_external_auths')) {
      await tx.exec(`INSERT INTO ${q(EXTERNAL_AUTHS)} (id, collectionRef, recordRef, provider, providerId, created, updated)
        -- (WHERE true: SQLite's parser needs it between a SELECT and ON CONFLICT)
        SELECT id, collectionId, recordId, provider, providerId, created, updated FROM _external_auths WHERE true ON CONFLICT DO NOTHING`);
      await tx.exec('DROP TABLE _external_auths');
    }
    if (await tx.dialect.tableExists(tx, `${MFAS}_before`)) {
      await tx.exec(`INSERT INTO ${q(MFAS)} (id, collectionRef, recordRef, method, created, updated)
        SELECT id, collectionId, recordId, method, created, created FROM ${q(`${MFAS}_before`)}`);
      await tx.exec(`DROP TABLE ${q(`${MFAS}_before`)}`);
    }
    if (await tx.dialect.tableExists(tx, `${OTPS}_before`)) {
      await tx.exec(`INSERT INTO ${q(OTPS)} (id, collectionRef, recordRef, hash, sentTo, attempts, created, updated)
        SELECT id, collectionId, recordId, hash, sentTo, attempts, created, created FROM ${q(`${OTPS}_before`)}`);
      await tx.exec(`DROP TABLE ${q(`${OTPS}_before`)}`);
    }
  },
};
