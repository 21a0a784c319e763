import { pbDate } from '../lib/time.ts';
import { sameJson } from '../lib/canonical-json.ts';
import { AUTH_SETTING_KEYS, authSettingsOf, publicAuthSettings } from './auth-settings.ts';
import { blankCollection, type Collection, type FieldDef } from './model.ts';
import { fieldJson022, fieldJson023, pocketBaseFields, PRIVATE_OPTION_KEYS } from './pocketbase-fields.ts';
import { isPlainObject } from '../lib/objects.ts';

/**
 * The one place where PocketBase's two collection shapes meet (API contract §4 and §17):
 *
 * - v0.22 (SDK 0.21): field options nested in `options`, the fields also as `schema`.
 * - v0.23 and later (SDK 0.23+): field options as keys of the field itself; auth settings
 *   (`passwordAuth`, `oauth2`, `otp`, `mfa`, `authToken`) at the top of the collection; a view's
 *   SQL as `viewQuery`; the system fields (`id`, `created`, `email`, …) listed among `fields`.
 *
 * Answers carry both (the same values in both places); requests may use either. Cairn keeps the
 * v0.22 form (`FieldDef.options`, auth settings inside `Collection.options`): `collectionInput`
 * turns a request body into it before validation, `collectionJson` renders a collection in both.
 */

/** Keys a v0.23 field carries itself that v0.22 nests in `options` (every field type's options). */
export const FIELD_OPTION_KEYS = [
  'min',
  'max',
  'pattern',
  'values',
  'maxSelect',
  'minSelect',
  'collectionId',
  'toCollection',
  'cascadeDelete',
  'maxSize',
  'mimeTypes',
  'protected',
  'onlyDomains',
  'exceptDomains',
  'noDecimal',
  'thumbs',
  'displayFields',
  'convertUrls',
  'autogeneratePattern',
  'onCreate',
  'onUpdate',
] as const;

/** Keys of a field definition besides its options. */
const FIELD_KEYS = ['id', 'name', 'type', 'required', 'unique', 'hidden', 'system', 'presentable', 'default', 'help'] as const;

/**
 * The system fields PocketBase ≥ 0.23 lists among a collection's `fields`, by name, with the type each
 * has there: Cairn keeps them as system columns of every record table (auth ones of auth tables).
 */
const BASE_SYSTEM_FIELD_TYPES: Readonly<Record<string, string>> = { id: 'text', created: 'autodate', updated: 'autodate' };
const AUTH_SYSTEM_FIELD_TYPES: Readonly<Record<string, string>> = {
  ...BASE_SYSTEM_FIELD_TYPES,
  password: 'password',
  tokenKey: 'text',
  email: 'email',
  emailVisibility: 'bool',
  verified: 'bool',
};

/** The type PocketBase gives the system field `name` of a collection of `type`, if it is one. */
export function systemFieldType(name: string, type: string): string | undefined {
  const table = type === 'auth' ? AUTH_SYSTEM_FIELD_TYPES : type === 'base' ? BASE_SYSTEM_FIELD_TYPES : undefined;
  return table !== undefined && Object.hasOwn(table, name) ? table[name] : undefined;
}

/**
 * One value sent in both shapes. When they differ, the one that changed from the stored value wins: a
 * client that knows one shape echoes the other back unchanged from what it read.
 */
function pick(flat: unknown, nested: unknown, stored: unknown): unknown {
  if (flat === undefined) return nested;
  if (nested === undefined || sameJson(flat, nested)) return flat;
  return stored !== undefined && sameJson(flat, stored) ? nested : flat;
}

/**
 * Whether a field of a request is one of v0.23's system fields of a collection of `type`, which its
 * clients send with the collection (`{name: "id", type: "text"}`, `{name: "created", type:
 * "autodate"}`, an auth collection's `email`, `password`, …): Cairn's system columns, not fields of
 * the collection, so they are passed over. A field of such a name and another type would replace a
 * system column (`validation_system_field_change`).
 */
export function isEchoedSystemField(raw: Record<string, unknown>, type: string): boolean {
  return typeof raw.name === 'string' && raw.type === systemFieldType(raw.name, type) && raw.type !== undefined;
}

/**
 * The system fields PocketBase ≥ 0.23 starts a new collection of `type` with (its scaffolds), as it
 * defines them: `id`, and for auth collections `password`, `tokenKey`, `email`, `emailVisibility`,
 * `verified` (ids are the field type and the CRC-32 of the name, as PocketBase makes them). A client
 * that sends them back with a new collection describes Cairn's system columns.
 */
export function pocketBaseSystemFields(type: string): Array<Record<string, unknown>> {
  if (type !== 'base' && type !== 'auth') return [];
  const common = { help: '', hidden: false, presentable: false, system: true };
  const id = { ...common, autogeneratePattern: '[a-z0-9]{15}', id: 'text3208210256', max: 15, min: 15, name: 'id', pattern: '^[a-z0-9]+$', primaryKey: true, required: true, type: 'text' };
  if (type === 'base') return [id];
  return [
    id,
    { ...common, cost: 0, hidden: true, id: 'password901924565', max: 0, min: 8, name: 'password', pattern: '', required: true, type: 'password' },
    { ...common, autogeneratePattern: '[a-zA-Z0-9]{50}', hidden: true, id: 'text2504183744', max: 60, min: 30, name: 'tokenKey', pattern: '', primaryKey: false, required: true, type: 'text' },
    { ...common, exceptDomains: null, id: 'email3885137012', name: 'email', onlyDomains: null, required: true, type: 'email' },
    { ...common, id: 'bool1547992806', name: 'emailVisibility', required: false, type: 'bool' },
    { ...common, id: 'bool256245529', name: 'verified', required: false, type: 'bool' },
  ];
}

/**
 * A new collection's body as PocketBase ≥ 0.23 reads it (`core.NewCollection`): a `fields` list is the
 * whole list, its system fields completed: `id` put first and an auth collection's `password`,
 * `tokenKey`, `email`, `emailVisibility`, `verified` appended, each unless sent. `created` and
 * `updated` are ordinary `autodate` fields there, had only when listed. The completed list is a
 * full one, so the collection keeps this description (`keepPocketBaseView`) and answers as
 * PocketBase would, its records included. A v0.22 `schema` body, or one without a list, is left as
 * it is: such collections have both dates, as every v0.22 collection (and the specification's) had.
 */
export function asPocketBaseCreate(body: unknown): unknown {
  if (!isPlainObject(body) || !Array.isArray(body.fields) || body.schema !== undefined) return body;
  const type = body.type === undefined ? 'base' : body.type;
  if (type !== 'base' && type !== 'auth') return body;
  const defaults = pocketBaseSystemFields(type);
  // A system field sent keeps what it sets, under PocketBase's id for it and the flags it enforces.
  const sent = body.fields.map((f) => {
    const own = isPlainObject(f) ? defaults.find((d) => d.name === f.name && d.type === f.type) : undefined;
    if (!own || !isPlainObject(f)) return f;
    const out: Record<string, unknown> = { ...f, id: typeof f.id === 'string' && f.id !== '' ? f.id : own.id, ...ENFORCED_SYSTEM_FLAGS[f.name as string] };
    if (f.name === 'id' && !out.pattern) out.pattern = own.pattern;
    return out;
  });
  const has = (name: unknown) => sent.some((f) => isPlainObject(f) && f.name === name);
  const [id, ...auth] = defaults;
  return { ...body, fields: [...(has('id') ? [] : [id]), ...sent, ...auth.filter((f) => !has(f.name))] };
}

/** What PocketBase sets on a system field a new collection is sent with (`Collection.init…Field`). */
const ENFORCED_SYSTEM_FLAGS: Readonly<Record<string, Record<string, boolean>>> = {
  id: { system: true, required: true, primaryKey: true, hidden: false },
  password: { system: true, hidden: true, required: true },
  tokenKey: { system: true, hidden: true, required: true },
  email: { system: true, hidden: false },
  emailVisibility: { system: true },
  verified: { system: true },
};

/** A field definition of either shape in v0.22's: flat option keys moved into `options`. */
export function fieldInput(raw: Record<string, unknown>, stored?: FieldDef): Record<string, unknown> {
  const nested = raw.options;
  // A malformed `options` is left for validation to report.
  if (nested !== undefined && nested !== null && !isPlainObject(nested)) return raw;
  const options: Record<string, unknown> = { ...nested };
  for (const key of FIELD_OPTION_KEYS) {
    const value = pick(raw[key], nested?.[key], stored?.options[key]);
    if (value !== undefined) options[key] = value;
  }
  // ≥ 0.23's names of two options v0.22 (and Cairn) name otherwise.
  for (const [flat, kept] of [['onlyInt', 'noDecimal'], ['convertURLs', 'convertUrls']] as const) {
    const value = pick(raw[flat], nested?.[kept] ?? raw[kept], stored?.options[kept]);
    if (value !== undefined) options[kept] = value;
    delete options[flat];
  }
  const out: Record<string, unknown> = { options };
  for (const key of FIELD_KEYS) if (raw[key] !== undefined) out[key] = raw[key];
  // What one shape does not carry (≥ 0.23: `unique`, `default`; v0.22: `hidden`, `help`) is kept.
  if (stored) for (const key of ['unique', 'default', 'hidden', 'help'] as const) if (out[key] === undefined && stored[key] !== undefined) out[key] = stored[key];
  return out;
}

/** `options` as sent: an object, a JSON-encoded object (the spec's form), or absent. */
function sentOptions(raw: unknown): Record<string, unknown> | undefined {
  if (isPlainObject(raw)) return raw;
  if (typeof raw === 'string' && raw !== '') {
    try {
      const parsed: unknown = JSON.parse(raw);
      return isPlainObject(parsed) ? parsed : undefined;
    } catch {
      return undefined;
    }
  }
  return undefined;
}

/**
 * A collection body of either shape in v0.22's, for `normalizeCollection`: fields as above (v0.23's
 * system fields kept in place, for `normalizeCollection` to pass over, so that errors keep the
 * positions of the list as sent), top-level auth settings and `viewQuery` moved into `options`. Auth
 * settings absent from a sent `options` keep their stored values: a client that replaces `options`
 * to set webhook triggers does not reset how its users sign in.
 */
export function collectionInput(body: unknown, existing?: Collection): unknown {
  if (!isPlainObject(body)) return body;
  const out: Record<string, unknown> = { ...body };
  const fieldsKey = body.fields !== undefined ? 'fields' : 'schema';
  const rawFields = body[fieldsKey];
  if (Array.isArray(rawFields)) {
    const byId = new Map((existing?.fields ?? []).map((f) => [f.id, f]));
    const byName = new Map((existing?.fields ?? []).map((f) => [f.name.toLowerCase(), f]));
    const sentDefaults = sentOptions(body.options)?.fieldDefaults;
    out[fieldsKey] = rawFields.map((f) => {
      if (!isPlainObject(f)) return f;
      const stored = (typeof f.id === 'string' ? byId.get(f.id) : undefined) ?? (typeof f.name === 'string' ? byName.get(f.name.toLowerCase()) : undefined);
      const field = fieldInput(f, stored);
      // The specification's default, answered in v0.22's `options.fieldDefaults`, may come back there.
      if (f.default === undefined && isPlainObject(sentDefaults) && typeof f.name === 'string' && Object.hasOwn(sentDefaults, f.name)) field.default = sentDefaults[f.name];
      return field;
    });
    if (fieldsKey === 'fields') delete out.schema;
  }
  keepPocketBaseView(out, body, existing);

  const nested = sentOptions(body.options);
  if (body.options !== undefined && body.options !== null && body.options !== '' && nested === undefined) return out;
  const topLevel = [...AUTH_SETTING_KEYS, 'viewQuery'].filter((k) => body[k] !== undefined);
  if (topLevel.length === 0 && nested === undefined) return out;
  const options: Record<string, unknown> = { ...(nested ?? existing?.options ?? {}) };
  for (const key of AUTH_SETTING_KEYS) {
    const value = pick(body[key], nested?.[key], existing?.options[key]);
    if (value !== undefined) options[key] = value;
    else if (existing?.options[key] !== undefined) options[key] = existing.options[key];
  }
  // A view's SQL: v0.23's `viewQuery`, v0.22's `options.query`.
  const query = pick(body.viewQuery, nested?.query, existing?.options.query);
  if (query !== undefined) options.query = query;
  else if (existing?.options.query !== undefined) options.query = existing.options.query;
  out.options = options;
  for (const key of AUTH_SETTING_KEYS) delete out[key];
  delete out.viewQuery;
  keepPocketBaseView(out, body, existing);
  return out;
}

/**
 * Keeps, in `options`, how PocketBase ≥ 0.23 describes the collection's system fields: as a client
 * sent them with a full `fields` list (one that has the `id` field, as PocketBase's clients send it
 * back), else as stored. A sent `options` never drops them, and `fieldDefaults` (an answer's echo of
 * the fields' defaults) is not stored.
 */
function keepPocketBaseView(out: Record<string, unknown>, body: Record<string, unknown>, existing: Collection | undefined): void {
  const type = typeof body.type === 'string' ? body.type : (existing?.type ?? 'base');
  const sent = Array.isArray(body.fields) ? body.fields.filter(isPlainObject) : undefined;
  const full = sent !== undefined && sent.some((f) => f.name === 'id' && (f.type === 'text' || type === 'view'));
  const view: Record<string, unknown> = {};
  if (full) {
    view.systemFields = sent.filter((f) => isEchoedSystemField(f, type) || (type === 'view' && f.name === 'id')).map((f) => ({ ...f }));
    view.fieldOrder = sent.map((f) => f.name).filter((n) => typeof n === 'string');
  }
  const options = out.options === undefined || out.options === null || out.options === '' ? undefined : sentOptions(out.options);
  if (out.options !== undefined && out.options !== null && out.options !== '' && options === undefined) return;
  // Else the ones given in `options` (an import gives them there), else the stored ones.
  if (!full) for (const key of PRIVATE_OPTION_KEYS) if ((options?.[key] ?? existing?.options[key]) !== undefined) view[key] = options?.[key] ?? existing?.options[key];
  if (options === undefined && Object.keys(view).length === 0) return;
  const next: Record<string, unknown> = { ...(options ?? existing?.options ?? {}) };
  for (const key of PRIVATE_OPTION_KEYS) delete next[key];
  delete next.fieldDefaults;
  out.options = { ...next, ...view };
}

/** A field in v0.22's shape (kept for callers that describe one field, such as a view's dry run). */
export function fieldJson(f: FieldDef): Record<string, unknown> {
  return fieldJson023(f);
}

export interface CollectionJsonDefaults {
  /** CAIRN_TOKEN_TTL: what `authToken.duration` 0 stands for. */
  tokenTtl: number;
}

/** The auth settings of ≥ 0.23 in the order PocketBase writes them. */
const AUTH_KEY_ORDER = [
  'authRule', 'manageRule', 'authAlert', 'oauth2', 'passwordAuth', 'mfa', 'otp', 'authToken', 'passwordResetToken',
  'emailChangeToken', 'verificationToken', 'fileToken', 'verificationTemplate', 'resetPasswordTemplate', 'confirmEmailChangeTemplate',
] as const;

/**
 * A collection's v0.22 `options`: what Cairn keeps there (webhook triggers, the spec's field
 * defaults under `fieldDefaults`, an auth collection's settings, a view's `query`), without the
 * bookkeeping of PocketBase's ≥ 0.23 view of its system fields.
 */
function legacyOptions(c: Collection, authSettings: Record<string, unknown> | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = { ...c.options, ...authSettings };
  for (const key of PRIVATE_OPTION_KEYS) delete out[key];
  const defaults = c.fields.filter((f) => f.default !== null && f.default !== undefined);
  if (defaults.length > 0) out.fieldDefaults = Object.fromEntries(defaults.map((f) => [f.name, f.default]));
  else delete out.fieldDefaults;
  return out;
}

/**
 * A collection as the API returns it (API contract §4, §17, §23): PocketBase ≥ 0.23's object with
 * its keys in its order (`fields` listing the system fields, an auth collection's settings, a view's
 * `viewQuery`), then v0.22's `schema` (the collection's own fields) and `options`.
 */
export function collectionJson(c: Collection, defaults: CollectionJsonDefaults): Record<string, unknown> {
  const settings = c.type === 'auth' ? publicAuthSettings(authSettingsOf(c), defaults.tokenTtl) : undefined;
  const json: Record<string, unknown> = {
    id: c.id,
    listRule: c.listRule,
    viewRule: c.viewRule,
    createRule: c.createRule,
    updateRule: c.updateRule,
    deleteRule: c.deleteRule,
    name: c.name,
    type: c.type,
    fields: pocketBaseFields(c),
    indexes: c.indexes,
    // Stored ISO 8601; answered as PocketBase writes dates (API contract §23).
    created: pbDate(c.created),
    updated: pbDate(c.updated),
    system: c.system,
  };
  if (settings) for (const key of AUTH_KEY_ORDER) if (settings[key] !== undefined) json[key] = settings[key];
  if (c.type === 'view') json.viewQuery = typeof c.options.query === 'string' ? c.options.query : '';
  json.schema = c.fields.map(fieldJson022);
  json.options = legacyOptions(c, settings);
  return json;
}

const COLLECTION_TYPES = new Set(['base', 'auth', 'view']);

/**
 * The collections a PocketBase export describes (the dashboard's "Export collections" JSON, or a
 * `GET /api/collections` answer), of either shape, as Cairn keeps them: for `cairn typegen --from`,
 * which types an application's collections before they exist anywhere. Only the shape is read, not
 * validated: v0.23's field types Cairn does not have (`autodate`, `geoPoint`, …) come out as they are.
 */
export function collectionsFromExport(data: unknown): Collection[] {
  const list = Array.isArray(data) ? data : isPlainObject(data) ? (data.collections ?? data.items) : undefined;
  if (!Array.isArray(list)) throw new Error('expected a JSON array of collections (or {"collections": [...]} or {"items": [...]})');
  return list.map((raw, i) => {
    if (!isPlainObject(raw) || typeof raw.name !== 'string' || raw.name === '') throw new Error(`collection ${i}: expected an object with a name`);
    const type = COLLECTION_TYPES.has(String(raw.type)) ? (raw.type as Collection['type']) : 'base';
    const input = collectionInput(raw) as Record<string, unknown>;
    const rawFields = (input.fields ?? input.schema ?? []) as unknown[];
    if (!Array.isArray(rawFields)) throw new Error(`collection "${raw.name}": fields must be a list`);
    const own = rawFields.filter(isPlainObject).filter((f) => !isEchoedSystemField(f, type));
    const fields: FieldDef[] = own.map((f, j) => {
      if (typeof f.name !== 'string' || typeof f.type !== 'string') throw new Error(`collection "${raw.name}", field ${j}: expected a name and a type`);
      const flag = (k: string) => f[k] === true;
      return { id: typeof f.id === 'string' ? f.id : `${raw.name}_${f.name}`, name: f.name, type: f.type, required: flag('required'), unique: flag('unique'), hidden: flag('hidden'), system: flag('system'), presentable: flag('presentable'), default: null, options: isPlainObject(f.options) ? f.options : {} };
    });
    return blankCollection(type, { id: typeof raw.id === 'string' ? raw.id : raw.name, name: raw.name, system: raw.system === true, fields });
  });
}
