import { isReservedFieldName } from '../collections/model.ts';
import { isValidName } from '../lib/identifiers.ts';
import type { Generation, PbCollection, PbField } from './source.ts';
import { type Converter, toBool, toDate, toGeoPoint, toJson, toList, toNumber, toSingle, toText } from './values.ts';
import { isPlainObject } from '../lib/objects.ts';

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
  /** `renamed`: carried under another name; `changed`: carried, with a difference said in `why`;
   * `not-carried`: left behind. Absent: information. */
  kind?: 'renamed' | 'changed' | 'not-carried';
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
  /** Collection options to store: auth settings, PocketBase's definitions of the system fields. */
  options: Record<string, unknown>;
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
      const options: Record<string, unknown> = { min: nullIfEmpty(int(o.min)), max: nullIfEmpty(int(o.max)), pattern: typeof o.pattern === 'string' ? o.pattern : '' };
      if (typeof o.autogeneratePattern === 'string' && o.autogeneratePattern !== '') options.autogeneratePattern = o.autogeneratePattern;
      return { type: 'text', options, convert: toText, notes };
    }
    case 'editor':
      return { type: 'editor', options: { convertUrls: o.convertUrls === true || o.convertURLs === true, ...(typeof o.maxSize === 'number' && o.maxSize > 0 ? { maxSize: o.maxSize } : {}) }, convert: toText, notes };
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
      return { type: 'autodate', options: { onCreate: o.onCreate === true, onUpdate: o.onUpdate === true }, convert: toDate, notes };
    case 'geoPoint':
      return { type: 'geoPoint', options: {}, convert: toGeoPoint, notes };
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

/** What one import knows besides the collection: the generation, relation targets, PocketBase's settings. */
export interface DraftContext {
  generation: Generation;
  targets: Map<string, TargetInfo>;
  /** PocketBase's settings document when it could be read (before 0.23 the token secrets and mail templates are there). */
  settings?: Record<string, unknown>;
  /** Index names already given in the target database (index names are per database). */
  indexNames: Set<string>;
}

/** PocketBase ≥ 0.23 lists these among `fields`; they are Cairn's system columns. */
const SYSTEM_FIELD_NAMES = new Set(['id', 'password', 'tokenKey', 'email', 'emailVisibility', 'verified', 'created', 'updated']);

/** The name an index of PocketBase gets in Cairn: `_`-prefixed names are Cairn's own, so `_x` becomes `pb_x`. */
function indexName(name: string, taken: Set<string>): string {
  if (!name.startsWith('_') && !/^sqlite_/i.test(name) && !taken.has(name.toLowerCase())) return name;
  const base = name.startsWith('_') ? `pb${name}` : `pb_${name}`;
  let renamed = base.slice(0, 63);
  for (let i = 2; taken.has(renamed.toLowerCase()); i++) renamed = `${base.slice(0, 58)}_${i}`;
  return renamed;
}

/** Renames the index of a `CREATE INDEX` statement (PocketBase's quoting already made standard). */
function withIndexName(sql: string, name: string): string {
  return sql.replace(/^(\s*CREATE\s+(?:UNIQUE\s+)?INDEX\s+(?:IF\s+NOT\s+EXISTS\s+)?)("(?:[^"]|"")*"|\[[^\]]*\]|[A-Za-z_][A-Za-z0-9_]*)/i, (_m, head: string) => `${head}"${name}"`);
}

function indexNameOf(sql: string): string | undefined {
  const m = /^\s*CREATE\s+(?:UNIQUE\s+)?INDEX\s+(?:IF\s+NOT\s+EXISTS\s+)?("((?:[^"]|"")*)"|\[([^\]]*)\]|([A-Za-z_][A-Za-z0-9_]*))/i.exec(sql);
  return m ? (m[2]?.replace(/""/g, '"') ?? m[3] ?? m[4]) : undefined;
}

/**
 * Maps one PocketBase collection. `ctx.targets` resolves relation targets (PocketBase collection
 * ids) to what the import makes of them.
 */
export function draftCollection(pb: PbCollection, ctx: DraftContext): CollectionDraft {
  const notes: Note[] = [];
  const type = pb.type === 'auth' || pb.type === 'view' ? pb.type : 'base';
  const draft: CollectionDraft = { pb, type, fields: [], system: new Map(), indexes: [], options: {}, notes };
  const note: NoteOf = (what, why, kind) => notes.push({ what: what ? `${pb.name}.${what}` : pb.name, why, kind });
  if (type === 'view') {
    draftView(draft, ctx);
    return draft;
  }
  const names = new Set(pb.fields.map((f) => f.name.toLowerCase()));
  draftSystemColumns(draft, ctx, names, note);
  draftFields(draft, ctx, names, note);
  draftIndexes(draft, ctx, note);
  if (type === 'auth') Object.assign(draft.options, authOptions(pb, ctx, note));
  return draft;
}

type NoteOf = (what: string, why: string, kind?: Note['kind']) => void;

/** A view: its query, and PocketBase's definitions of the fields it selects. */
function draftView(draft: CollectionDraft, { generation, targets }: DraftContext): void {
  const pb = draft.pb;
  const query = generation === 'current' ? pb.options.viewQuery : pb.options.query;
  draft.query = typeof query === 'string' ? query : '';
  if (generation === 'current') {
    // Its `id` and the dates it selects are system columns of Cairn's view: kept as PocketBase listed them.
    draft.options.systemFields = pb.fields.filter((f) => f.name === 'id' || ((f.name === 'created' || f.name === 'updated') && f.type === 'autodate')).map((f) => f.raw);
    draft.options.fieldOrder = pb.fields.map((f) => f.name);
  }
  // A view's fields are what its query selects; Cairn infers them when it creates the view, and
  // PocketBase's own definitions (types, options) are laid over them where the names match.
  for (const field of pb.fields) {
    if (field.name === 'id') continue;
    const mapped = mapField(field, generation, targets);
    if (typeof mapped === 'string') continue;
    draft.fields.push({
      source: field.name,
      body: { id: field.id || undefined, name: field.name, type: mapped.type, required: field.required, hidden: field.hidden, presentable: field.presentable, options: mapped.options },
      convert: mapped.convert,
    });
  }
}

/** The columns Cairn keeps as system columns (dates; an auth collection's email, password, flags), and what PocketBase listed of them. */
function draftSystemColumns(draft: CollectionDraft, { generation }: DraftContext, names: Set<string>, note: NoteOf): void {
  const { pb, type } = draft;
  const missing: string[] = [];
  for (const column of ['created', 'updated']) {
    // Before 0.23 every table has both; since, they are ordinary autodate fields a collection may lack.
    const present = generation === 'legacy' || pb.fields.some((f) => f.name === column && f.type === 'autodate');
    if (present) draft.system.set(column, { source: column, convert: toDate });
    else missing.push(`"${column}"`);
  }
  if (missing.length > 0) note('', `it has no ${missing.join(' or ')} field: Cairn's tables always have both, so its records get the time of the import there (answered without it, as PocketBase's)`, 'changed');
  if (generation === 'current') {
    // How PocketBase described the fields Cairn keeps as system columns (ids, flags, autodate and
    // email options), so the collection answers as it did there.
    const system = pb.fields.filter((f) => SYSTEM_FIELD_NAMES.has(f.name) && (type === 'auth' || f.name === 'id' || f.type === 'autodate'));
    if (system.length > 0) draft.options.systemFields = system.map((f) => f.raw);
    draft.options.fieldOrder = pb.fields.map((f) => f.name);
  }
  if (type === 'auth') {
    draft.system.set('email', { source: 'email', convert: toText });
    draft.system.set('emailVisibility', { source: 'emailVisibility', convert: toBool });
    draft.system.set('verified', { source: 'verified', convert: toBool });
    draft.system.set('passwordHash', { source: generation === 'current' ? 'password' : 'passwordHash', convert: toText });
    draft.system.set('tokenKey', { source: 'tokenKey', convert: toText });
    if (generation === 'legacy') {
      draft.system.set('lastResetSentAt', { source: 'lastResetSentAt', convert: toDate });
      draft.system.set('lastVerificationSentAt', { source: 'lastVerificationSentAt', convert: toDate });
      // Every auth record had a unique username before 0.23 (a system column then, a field since).
      if (!names.has('username')) {
        draft.fields.push({ source: 'username', body: { name: 'username', type: 'text', unique: true, required: true, options: { min: 3, max: 150, pattern: '^[\\w][\\w\\.\\-]*$', autogeneratePattern: 'users[0-9]{6}' } }, convert: toText });
      }
    }
  }
}

/** The fields, each mapped to Cairn's type (or left behind, with a note), a name Cairn keeps for itself renamed. */
function draftFields(draft: CollectionDraft, { generation, targets }: DraftContext, names: Set<string>, note: NoteOf): void {
  const { pb, type } = draft;
  for (const field of pb.fields) {
    if (generation === 'current' && (field.name === 'created' || field.name === 'updated') && field.type === 'autodate') continue;
    if (generation === 'current' && type === 'auth' && AUTH_SYSTEM_FIELDS.has(field.name)) continue;
    if (generation === 'current' && field.name === 'id') continue;
    const mapped = mapField(field, generation, targets);
    if (typeof mapped === 'string') {
      note(field.name, `not carried: ${mapped}; its values stay behind`, 'not-carried');
      continue;
    }
    let name = field.name;
    if (isReservedFieldName(name, type) || !isValidName(name)) {
      // A name Cairn keeps for itself in every collection (`expand`, `collectionName`, …): carried
      // under another name, since a record could not answer both.
      const base = String(name).replace(/[^A-Za-z0-9_]/g, '_').replace(/^[^A-Za-z]+/, 'f_');
      let renamed = `${base}_field`;
      while (names.has(renamed.toLowerCase())) renamed += '_';
      note(field.name, `renamed "${renamed}": Cairn keeps the name "${field.name}" for itself in every record; rules and indexes that use it are checked against the new name`, 'renamed');
      names.add(renamed.toLowerCase());
      name = renamed;
    }
    for (const why of mapped.notes) note(name, why, 'changed');
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
        system: field.system,
        ...(typeof field.options.help === 'string' && field.options.help !== '' ? { help: field.options.help } : {}),
        options: mapped.options,
      },
      convert: mapped.convert,
      file: mapped.file,
    });
  }
}

/** The index statements, in standard quotes, a name Cairn keeps for its own indexes renamed. */
function draftIndexes(draft: CollectionDraft, ctx: DraftContext, note: NoteOf): void {
  for (const original of draft.pb.indexes) {
    let sql = standardQuotes(original);
    const name = indexNameOf(sql);
    if (name !== undefined) {
      const given = indexName(name, ctx.indexNames);
      if (given !== name) {
        sql = withIndexName(sql, given);
        note('', `index "${name}" renamed "${given}": Cairn keeps index names starting with "_" for its own indexes`, 'renamed');
      }
      ctx.indexNames.add(given.toLowerCase());
    }
    draft.indexes.push(sql);
  }
}

/** PocketBase's email templates before 0.23 (`meta.verificationTemplate`, …) as ≥ 0.23's `{subject, body}`. */
function legacyTemplate(raw: unknown): { subject: string; body: string } | undefined {
  if (!isPlainObject(raw) || typeof raw.subject !== 'string' || typeof raw.body !== 'string' || raw.subject === '' || raw.body === '') return undefined;
  // Before 0.23 the link was `{ACTION_URL}`, made from the template's `actionUrl` with `{TOKEN}` in it.
  const action = typeof raw.actionUrl === 'string' ? raw.actionUrl : '';
  return { subject: raw.subject, body: action ? raw.body.replaceAll('{ACTION_URL}', action) : raw.body };
}

/**
 * An auth collection's PocketBase options as Cairn's auth settings (src/collections/auth-settings.ts):
 * ≥ 0.23's as they are; before 0.23's translated the way PocketBase's own upgrade translates them
 * (`allowUsernameAuth` → `username` as an identity field, `onlyVerified` → the auth rule
 * `verified = true`), with the token secrets and templates of the instance's settings.
 */
function authOptions(pb: PbCollection, ctx: DraftContext, note: NoteOf): Record<string, unknown> {
  const o = pb.options;
  if (ctx.generation === 'current') {
    const out: Record<string, unknown> = {};
    for (const key of ['authRule', 'manageRule', 'passwordAuth', 'oauth2', 'otp', 'mfa', 'authAlert', 'authToken', 'passwordResetToken', 'emailChangeToken', 'verificationToken', 'fileToken', 'verificationTemplate', 'resetPasswordTemplate', 'confirmEmailChangeTemplate']) {
      if (o[key] !== undefined) out[key] = o[key];
    }
    if (isPlainObject(out.oauth2) && !Array.isArray(out.oauth2.providers)) out.oauth2 = { ...out.oauth2, providers: [] };
    return out;
  }
  const settings = ctx.settings ?? {};
  const email = o.allowEmailAuth !== false;
  const username = o.allowUsernameAuth === true;
  const out: Record<string, unknown> = {
    authRule: o.onlyVerified === true ? 'verified = true' : '',
    manageRule: typeof o.manageRule === 'string' && o.manageRule !== '' ? o.manageRule : null,
    passwordAuth: { enabled: email || username, identityFields: [...(email ? ['email'] : []), ...(username ? ['username'] : [])].length > 0 ? [...(email ? ['email'] : []), ...(username ? ['username'] : [])] : ['email'] },
    // PocketBase 0.23's upgrade maps the provider's username to the `username` every auth collection
    // had before (and nothing else: name and avatar were the client's `createData`).
    oauth2: { enabled: o.allowOAuth2Auth !== false, mappedFields: { id: '', name: '', username: 'username', avatarURL: '' } },
  };
  if (o.onlyVerified === true) note('onlyVerified', 'carried as the auth rule "verified = true", as PocketBase 0.23 carries it', 'changed');
  const tokens: Array<[string, string]> = [
    ['authToken', 'recordAuthToken'],
    ['passwordResetToken', 'recordPasswordResetToken'],
    ['emailChangeToken', 'recordEmailChangeToken'],
    ['verificationToken', 'recordVerificationToken'],
    ['fileToken', 'recordFileToken'],
  ];
  for (const [kind, legacy] of tokens) {
    const t = settings[legacy];
    if (isPlainObject(t)) out[kind] = { ...(typeof t.duration === 'number' && t.duration >= 10 ? { duration: t.duration } : {}), ...(typeof t.secret === 'string' && t.secret.length >= 30 ? { secret: t.secret } : {}) };
  }
  const meta = isPlainObject(settings.meta) ? settings.meta : {};
  for (const [key, legacy] of [['verificationTemplate', 'verificationTemplate'], ['resetPasswordTemplate', 'resetPasswordTemplate'], ['confirmEmailChangeTemplate', 'confirmEmailChangeTemplate']]) {
    const template = legacyTemplate(meta[legacy]);
    if (template) out[key] = template;
  }
  if (list(o.onlyEmailDomains).length > 0 || list(o.exceptEmailDomains).length > 0 || o.requireEmail === true || (typeof o.minPasswordLength === 'number' && o.minPasswordLength !== 8)) {
    // PocketBase 0.23 moved these onto the email and password fields.
    out.systemFields = [
      { id: 'email', name: 'email', type: 'email', system: true, required: o.requireEmail === true, onlyDomains: list(o.onlyEmailDomains), exceptDomains: list(o.exceptEmailDomains) },
      { id: 'password', name: 'password', type: 'password', system: true, required: true, hidden: true, min: typeof o.minPasswordLength === 'number' ? o.minPasswordLength : 8 },
    ];
  }
  return out;
}
