import { sameJson } from '../lib/canonical-json.ts';
import { AUTH_SETTING_KEYS, authSettingsOf, publicAuthSettings } from './auth-settings.ts';
import { blankCollection, type Collection, type FieldDef } from './model.ts';

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

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
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
  const out: Record<string, unknown> = { options };
  for (const key of FIELD_KEYS) if (raw[key] !== undefined) out[key] = raw[key];
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
    out[fieldsKey] = rawFields.map((f) => {
      if (!isPlainObject(f)) return f;
      const stored = (typeof f.id === 'string' ? byId.get(f.id) : undefined) ?? (typeof f.name === 'string' ? byName.get(f.name.toLowerCase()) : undefined);
      return fieldInput(f, stored);
    });
    if (fieldsKey === 'fields') delete out.schema;
  }

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
  return out;
}

/** A field in both shapes: v0.22's definition with `options`, and each option as a key of its own. */
export function fieldJson(f: FieldDef): Record<string, unknown> {
  return { ...f.options, id: f.id, name: f.name, type: f.type, required: f.required, unique: f.unique, hidden: f.hidden, system: f.system, presentable: f.presentable, default: f.default, help: f.help ?? '', options: f.options };
}

export interface CollectionJsonDefaults {
  /** CAIRN_TOKEN_TTL: what `authToken.duration` 0 stands for. */
  tokenTtl: number;
}


/**
 * A collection as the API returns it, in both shapes (API contract §4, §17): `fields` and `schema`
 * are the same array; an auth collection's settings are in `options` and at the top level.
 */
export function collectionJson(c: Collection, defaults: CollectionJsonDefaults): Record<string, unknown> {
  const fields = c.fields.map(fieldJson);
  const json: Record<string, unknown> = {
    id: c.id,
    name: c.name,
    type: c.type,
    system: c.system,
    fields,
    schema: fields,
    options: c.options,
    listRule: c.listRule,
    viewRule: c.viewRule,
    createRule: c.createRule,
    updateRule: c.updateRule,
    deleteRule: c.deleteRule,
    indexes: c.indexes,
    created: c.created,
    updated: c.updated,
  };
  if (c.type === 'auth') {
    const settings = publicAuthSettings(authSettingsOf(c), defaults.tokenTtl);
    json.options = { ...c.options, ...settings };
    Object.assign(json, settings);
  }
  if (c.type === 'view') json.viewQuery = typeof c.options.query === 'string' ? c.options.query : '';
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
