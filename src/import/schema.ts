import { RESERVED_FIELD_NAMES } from '../collections/model.ts';
import { isValidName } from '../lib/identifiers.ts';
import type { Generation, PbCollection, PbField } from './source.ts';
import { type Converter, toBool, toDate, toJson, toList, toNumber, toSingle, toText } from './values.ts';

/**
 * Pure mapping of PocketBase's stored collections (both generations) onto Cairn's collection
 * definition: which fields become which Cairn fields with which options, how each column's values
 * convert, and what is left behind (with why). The collection bodies it makes are validated by the
 * collections domain (`normalizeCollection`) in plan.ts, as a collection created through the API is.
 */

/** Something of PocketBase that the import does not carry, or carries changed. */
export interface Note {
  /** `collection`, `collection.field`, `collection.listRule`, … */
  what: string;
  why: string;
}

export interface FieldDraft {
  /** The PocketBase column. */
  source: string;
  /** A field body for `normalizeCollection` (nested options). */
  body: Record<string, unknown>;
  convert: Converter;
  /** For file fields: whether the value holds several names. */
  file?: { multiple: boolean };
}

/** A PocketBase collection as Cairn will hold it, before validation. */
export interface CollectionDraft {
  pb: PbCollection;
  type: 'base' | 'auth' | 'view';
  fields: FieldDraft[];
  /** PocketBase columns of Cairn's system columns (`created`, `updated`; for auth collections the
   * auth columns), absent where the PocketBase table has none. */
  system: Map<string, { source: string; convert: Converter }>;
  /** CREATE INDEX statements in Cairn's quoting. */
  indexes: string[];
  /** View query (views only). */
  query?: string;
  notes: Note[];
}

/** How relation targets (PocketBase collection ids) resolve to the collections being imported. */
export interface TargetInfo {
  name: string;
  type: string;
  /** Why it is not carried, if it is not. */
  skipped?: string;
}

/** PocketBase 0.23+ system fields that are Cairn's system columns (not fields) in every auth collection. */
const AUTH_SYSTEM_FIELDS = new Set(['id', 'password', 'tokenKey', 'email', 'emailVisibility', 'verified']);

const nullIfEmpty = (v: unknown) => (v === '' || v === 0 ? null : v);

function list(v: unknown): string[] {
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string' && x !== '') : [];
}

function int(v: unknown): number | null {
  return typeof v === 'number' && Number.isInteger(v) ? v : null;
}

/** Whether a PocketBase list field (select, relation, file) holds several values. */
function multiple(field: PbField, generation: Generation): boolean {
  const max = field.options.maxSelect;
  // Before 0.23 a relation without maxSelect held any number; since, maxSelect <= 1 is single.
  if (field.type === 'relation' && generation === 'legacy' && (max === null || max === undefined)) return true;
  return typeof max === 'number' && max > 1;
}

interface Mapped {
  type: string;
  options: Record<string, unknown>;
  convert: Converter;
  file?: { multiple: boolean };
  notes: string[];
}

/** One PocketBase field as a Cairn field type, options and converter; a string says why it cannot be. */
function mapField(field: PbField, generation: Generation, targets: Map<string, TargetInfo>): Mapped | string {
  const o = field.options;
  const notes: string[] = [];
  switch (field.type) {
    case 'text': {
      if (typeof o.autogeneratePattern === 'string' && o.autogeneratePattern !== '') notes.push(`its autogenerate pattern ${JSON.stringify(o.autogeneratePattern)} is not carried (Cairn does not generate text values)`);
      return { type: 'text', options: { min: nullIfEmpty(int(o.min)), max: nullIfEmpty(int(o.max)), pattern: typeof o.pattern === 'string' ? o.pattern : '' }, convert: toText, notes };
    }
    case 'editor':
      if (typeof o.maxSize === 'number' && o.maxSize > 0) notes.push(`its maxSize ${o.maxSize} is not carried (Cairn's editor field has no size limit)`);
      return { type: 'editor', options: { convertUrls: o.convertUrls === true || o.convertURLs === true }, convert: toText, notes };
    case 'number':
      return {
        type: 'number',
        options: { min: typeof o.min === 'number' ? o.min : null, max: typeof o.max === 'number' ? o.max : null, noDecimal: o.noDecimal === true || o.onlyInt === true },
        convert: toNumber,
        notes,
      };
    case 'bool':
      return { type: 'bool', options: {}, convert: toBool, notes };
    case 'email':
    case 'url':
      return { type: field.type, options: { exceptDomains: list(o.exceptDomains), onlyDomains: list(o.onlyDomains) }, convert: toText, notes };
    case 'date':
      return { type: 'date', options: { min: typeof o.min === 'string' ? o.min : '', max: typeof o.max === 'string' ? o.max : '' }, convert: toDate, notes };
    case 'autodate':
      notes.push('carried as a date field: Cairn does not set it on create or update');
      return { type: 'date', options: {}, convert: toDate, notes };
    case 'geoPoint':
      notes.push('carried as a json field ({"lon", "lat"}): Cairn has no geoPoint type');
      return { type: 'json', options: {}, convert: toJson, notes };
    case 'json':
      return { type: 'json', options: typeof o.maxSize === 'number' && o.maxSize > 0 ? { maxSize: o.maxSize } : {}, convert: toJson, notes };
    case 'select': {
      const many = multiple(field, generation);
      return { type: 'select', options: { values: list(o.values), maxSelect: many ? o.maxSelect : 1 }, convert: many ? toList : toSingle, notes };
    }
    case 'file': {
      const many = multiple(field, generation);
      return {
        type: 'file',
        options: {
          maxSelect: many ? o.maxSelect : 1,
          ...(typeof o.maxSize === 'number' && o.maxSize > 0 ? { maxSize: o.maxSize } : {}),
          mimeTypes: list(o.mimeTypes),
          thumbs: list(o.thumbs),
          protected: o.protected === true,
        },
        convert: many ? toList : toSingle,
        file: { multiple: many },
        notes,
      };
    }
    case 'relation': {
      const target = typeof o.collectionId === 'string' ? targets.get(o.collectionId) : undefined;
      if (!target) return `its related collection ${JSON.stringify(o.collectionId)} is not in the file`;
      if (target.skipped) return `its related collection "${target.name}" is not carried`;
      if (target.type === 'view') return `it points at the view "${target.name}" (Cairn's relations point at tables only)`;
      const many = multiple(field, generation);
      return {
        type: 'relation',
        options: {
          toCollection: target.name,
          cascadeDelete: o.cascadeDelete === true,
          minSelect: int(o.minSelect) || null,
          maxSelect: many ? (int(o.maxSelect) ?? null) : 1,
          displayFields: list(o.displayFields),
        },
        convert: many ? toList : toSingle,
        notes,
      };
    }
    default:
      return `Cairn has no "${field.type}" field type`;
  }
}

/** PocketBase writes indexes with backquotes (SQLite's MySQL-style quoting); Cairn's SQL runs on
 * PostgreSQL too, so names are double-quoted. String literals are left as they are. */
export function standardQuotes(sql: string): string {
  return sql.replace(/'(?:[^']|'')*'|`([^`]*)`/g, (m, name: string | undefined) => (name === undefined ? m : `"${name.replace(/"/g, '""')}"`));
}

/** The columns an index covers, unquoted, when they are plain names. */
function indexColumns(sql: string): string[] | undefined {
  const m = /\(([^()]*)\)\s*(WHERE\b.*)?;?\s*$/is.exec(sql);
  if (!m) return undefined;
  const cols = m[1].split(',').map((c) => c.trim().replace(/^["`[]|["`\]]$/g, '').replace(/\s+(ASC|DESC)$/i, '').replace(/^["`[]|["`\]]$/g, ''));
  return cols.every((c) => /^[A-Za-z_][A-Za-z0-9_]*$/.test(c)) ? cols : undefined;
}

/**
 * Maps one PocketBase collection. `targets` resolves relation targets (PocketBase collection ids) to
 * what the import makes of them.
 */
export function draftCollection(pb: PbCollection, generation: Generation, targets: Map<string, TargetInfo>): CollectionDraft {
  const notes: Note[] = [];
  const type = pb.type === 'auth' || pb.type === 'view' ? pb.type : 'base';
  const draft: CollectionDraft = { pb, type, fields: [], system: new Map(), indexes: [], notes };
  const note = (what: string, why: string) => notes.push({ what: what ? `${pb.name}.${what}` : pb.name, why });

  if (type === 'view') {
    const query = generation === 'current' ? pb.options.viewQuery : pb.options.query;
    draft.query = typeof query === 'string' ? query : '';
    // A view's fields are what its query selects; Cairn infers them when it creates the view.
    return draft;
  }

  const names = new Set(pb.fields.map((f) => f.name.toLowerCase()));
  const missing: string[] = [];
  for (const column of ['created', 'updated']) {
    // Before 0.23 every table has both; since, they are ordinary autodate fields a collection may lack.
    const present = generation === 'legacy' || pb.fields.some((f) => f.name === column && f.type === 'autodate');
    if (present) draft.system.set(column, { source: column, convert: toDate });
    else missing.push(`"${column}"`);
  }
  if (missing.length > 0) note('', `it has no ${missing.join(' or ')} field: its records get the time of the import as ${missing.join(' and ')}`);
  if (type === 'auth') {
    draft.system.set('email', { source: 'email', convert: toText });
    draft.system.set('emailVisibility', { source: 'emailVisibility', convert: toBool });
    draft.system.set('verified', { source: 'verified', convert: toBool });
    draft.system.set('passwordHash', { source: generation === 'current' ? 'password' : 'passwordHash', convert: toText });
    draft.system.set('tokenKey', { source: 'tokenKey', convert: toText });
    if (generation === 'legacy') {
      draft.system.set('lastResetSentAt', { source: 'lastResetSentAt', convert: toDate });
      draft.system.set('lastVerificationSentAt', { source: 'lastVerificationSentAt', convert: toDate });
      // Every auth record had a unique username before 0.23; Cairn signs in by email, so it is a field.
      if (!names.has('username')) {
        draft.fields.push({ source: 'username', body: { name: 'username', type: 'text', unique: true, options: { max: 150 } }, convert: toText });
        note('username', 'carried as a unique text field: Cairn signs in with the email address only');
      }
    }
  }

  for (const field of pb.fields) {
    if (generation === 'current' && (field.name === 'created' || field.name === 'updated') && field.type === 'autodate') continue;
    if (generation === 'current' && type === 'auth' && AUTH_SYSTEM_FIELDS.has(field.name)) continue;
    if (generation === 'current' && field.name === 'id') continue;
    const mapped = mapField(field, generation, targets);
    if (typeof mapped === 'string') {
      note(field.name, `not carried: ${mapped}; its values stay behind`);
      continue;
    }
    let name = field.name;
    if (RESERVED_FIELD_NAMES.has(name.toLowerCase()) || !isValidName(name)) {
      // PocketBase lets a base collection have an `email` (or `verified`) field; Cairn keeps those names
      // for auth collections' own columns, so the field is carried under another name.
      const base = String(name).replace(/[^A-Za-z0-9_]/g, '_').replace(/^[^A-Za-z]+/, 'f_');
      let renamed = `${base}_field`;
      while (names.has(renamed.toLowerCase())) renamed += '_';
      note(field.name, `carried as "${renamed}": Cairn keeps the name "${field.name}" for itself; rules and indexes that use it are checked against the new name`);
      names.add(renamed.toLowerCase());
      name = renamed;
    }
    for (const why of mapped.notes) note(name, why);
    draft.fields.push({
      source: field.name,
      body: {
        id: field.id || undefined,
        name,
        type: mapped.type,
        required: field.required,
        unique: field.unique,
        hidden: field.hidden,
        presentable: field.presentable,
        options: mapped.options,
      },
      convert: mapped.convert,
      file: mapped.file,
    });
  }

  for (const sql of pb.indexes) {
    const columns = indexColumns(sql);
    // Since 0.23 an auth collection lists its own unique indexes on email and tokenKey; Cairn has its own.
    if (type === 'auth' && columns && columns.every((c) => c === 'email' || c === 'tokenKey')) continue;
    draft.indexes.push(standardQuotes(sql));
  }

  authNotes(pb, generation, note);
  return draft;
}

/** What an auth collection's PocketBase options set that Cairn does not enforce. */
function authNotes(pb: PbCollection, generation: Generation, note: (what: string, why: string) => void): void {
  if (pb.type !== 'auth') return;
  const o = pb.options;
  if (generation === 'legacy') {
    if (typeof o.manageRule === 'string') note('manageRule', `not carried (${JSON.stringify(o.manageRule)}): Cairn has no manage rule; only administrators manage others' accounts`);
    if (o.onlyVerified === true) note('onlyVerified', 'not carried: Cairn lets unverified accounts sign in; add `verified = true` to the rules that need it');
    if (list(o.onlyEmailDomains).length > 0 || list(o.exceptEmailDomains).length > 0) note('options', 'the email domain limits of sign-up are not carried');
    if (o.allowUsernameAuth === true) note('allowUsernameAuth', 'not carried: Cairn signs in with the email address only');
    return;
  }
  if (typeof o.authRule === 'string' && o.authRule !== '') note('authRule', `not carried (${JSON.stringify(o.authRule)}): Cairn has no auth rule; every account with a password may sign in`);
  if (typeof o.manageRule === 'string') note('manageRule', `not carried (${JSON.stringify(o.manageRule)}): Cairn has no manage rule; only administrators manage others' accounts`);
  const identity = (o.passwordAuth as { identityFields?: unknown } | undefined)?.identityFields;
  if (list(identity).some((f) => f !== 'email')) note('passwordAuth', `the identity fields ${JSON.stringify(identity)} are not carried: Cairn signs in with the email address only`);
  for (const key of ['otp', 'mfa'] as const) {
    if ((o[key] as { enabled?: unknown } | undefined)?.enabled === true) note(key, `${key === 'otp' ? 'one-time passwords' : 'multi-factor authentication'} settings are not carried; set them again in Cairn`);
  }
  const providers = (o.oauth2 as { providers?: unknown } | undefined)?.providers;
  if (Array.isArray(providers) && providers.length > 0) note('oauth2', "the OAuth2 providers' settings (client ids and secrets) are not carried; configure them in Cairn's oauth2 settings");
}
