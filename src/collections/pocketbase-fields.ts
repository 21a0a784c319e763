import type { Collection, FieldDef } from './model.ts';

/**
 * A collection's fields exactly as each PocketBase generation writes them (API contract §23):
 *
 * - ≥ 0.23 `fields`: every field PocketBase lists, its system fields included (`id`; an auth
 *   collection's `password`, `tokenKey`, `email`, `emailVisibility`, `verified`; `created` and
 *   `updated` as `autodate`), each with the keys PocketBase's Go struct of that type has, in the
 *   order its encoder writes them (a map's: sorted). Nothing of Cairn's own (`default`, `unique`,
 *   nested `options`) is inside.
 * - v0.22 `schema`: the collection's own fields as `{system, id, name, type, required, presentable,
 *   unique, options}` with v0.22's options of the type.
 *
 * Cairn keeps its system columns outside `Collection.fields`. How PocketBase described them for one
 * collection (an import, or a client that sent them) is kept in `options.systemFields` with the
 * order of the whole list in `options.fieldOrder`; neither is answered inside `options`.
 */

/** Options keys that are Cairn's bookkeeping of PocketBase's view, never answered in `options`. */
export const PRIVATE_OPTION_KEYS = ['systemFields', 'fieldOrder'] as const;

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => typeof v === 'object' && v !== null && !Array.isArray(v);
const nullableList = (v: unknown): string[] | null => (Array.isArray(v) && v.length > 0 ? (v as string[]) : null);
const int = (v: unknown, fallback = 0): number => (typeof v === 'number' && Number.isFinite(v) ? v : fallback);
const text = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Each type's own keys in ≥ 0.23, from a Cairn field's options. */
const TYPE_KEYS: Record<string, (o: Json) => Json> = {
  text: (o) => ({ autogeneratePattern: text(o.autogeneratePattern), max: int(o.max), min: int(o.min), pattern: text(o.pattern), primaryKey: o.primaryKey === true }),
  editor: (o) => ({ convertURLs: o.convertUrls === true || o.convertURLs === true, maxSize: int(o.maxSize) }),
  number: (o) => ({ max: typeof o.max === 'number' ? o.max : null, min: typeof o.min === 'number' ? o.min : null, onlyInt: o.noDecimal === true || o.onlyInt === true }),
  bool: () => ({}),
  email: (o) => ({ exceptDomains: nullableList(o.exceptDomains), onlyDomains: nullableList(o.onlyDomains) }),
  url: (o) => ({ exceptDomains: nullableList(o.exceptDomains), onlyDomains: nullableList(o.onlyDomains) }),
  date: (o) => ({ max: text(o.max), min: text(o.min) }),
  select: (o) => ({ maxSelect: int(o.maxSelect, 1), values: Array.isArray(o.values) ? o.values : [] }),
  json: (o) => ({ maxSize: int(o.maxSize) }),
  // A relation without a limit (v0.22's null) is many, as PocketBase's upgrade made it.
  relation: (o) => ({ cascadeDelete: o.cascadeDelete === true, collectionId: text(o.collectionId), maxSelect: o.maxSelect === null ? 999 : int(o.maxSelect, 1), minSelect: int(o.minSelect) }),
  file: (o) => ({ maxSelect: int(o.maxSelect, 1), maxSize: int(o.maxSize), mimeTypes: nullableList(o.mimeTypes), protected: o.protected === true, thumbs: nullableList(o.thumbs) }),
  autodate: (o) => ({ onCreate: o.onCreate === true, onUpdate: o.onUpdate === true }),
  geoPoint: () => ({}),
  password: (o) => ({ cost: int(o.cost), max: int(o.max), min: int(o.min), pattern: text(o.pattern) }),
};

function sortedKeys(o: Json): Json {
  const out: Json = {};
  for (const key of Object.keys(o).sort()) out[key] = o[key];
  return out;
}

/** One field in ≥ 0.23's shape from its parts (the flags and the type's options). */
function pbField(parts: { id: string; name: string; type: string; system: boolean; hidden: boolean; presentable: boolean; required: boolean; help: string }, options: Json): Json {
  const own = (TYPE_KEYS[parts.type] ?? (() => ({ ...options })))(options);
  const common: Json = { hidden: parts.hidden, id: parts.id, name: parts.name, presentable: parts.presentable, system: parts.system, type: parts.type };
  // An autodate field has neither `help` nor `required` in PocketBase.
  if (parts.type !== 'autodate') Object.assign(common, { help: parts.help, required: parts.required });
  return sortedKeys({ ...own, ...common });
}

/** A field of the collection in ≥ 0.23's shape. */
export function fieldJson023(f: FieldDef): Json {
  return pbField({ id: f.id, name: f.name, type: f.type, system: f.system, hidden: f.hidden, presentable: f.presentable, required: f.required, help: f.help ?? '' }, f.options);
}

/** v0.22's options of each type, from a Cairn field's options; Cairn's own keys of a type follow. */
const LEGACY_OPTIONS: Record<string, (o: Json) => Json> = {
  text: (o) => ({ min: o.min ?? null, max: o.max ?? null, pattern: text(o.pattern) }),
  editor: (o) => ({ convertUrls: o.convertUrls === true }),
  number: (o) => ({ min: o.min ?? null, max: o.max ?? null, noDecimal: o.noDecimal === true }),
  bool: () => ({}),
  email: (o) => ({ exceptDomains: nullableList(o.exceptDomains), onlyDomains: nullableList(o.onlyDomains) }),
  url: (o) => ({ exceptDomains: nullableList(o.exceptDomains), onlyDomains: nullableList(o.onlyDomains) }),
  date: (o) => ({ min: text(o.min), max: text(o.max) }),
  select: (o) => ({ maxSelect: o.maxSelect ?? 1, values: Array.isArray(o.values) ? o.values : [] }),
  json: (o) => ({ maxSize: o.maxSize ?? 0 }),
  // `toCollection` is the specification's name of the target; v0.22's is `collectionId`.
  relation: (o) => ({ collectionId: text(o.collectionId), cascadeDelete: o.cascadeDelete === true, minSelect: o.minSelect ?? null, maxSelect: o.maxSelect ?? null, displayFields: Array.isArray(o.displayFields) && o.displayFields.length > 0 ? o.displayFields : null, toCollection: text(o.toCollection) }),
  file: (o) => ({ mimeTypes: Array.isArray(o.mimeTypes) ? o.mimeTypes : [], thumbs: Array.isArray(o.thumbs) ? o.thumbs : [], maxSelect: o.maxSelect ?? 1, maxSize: o.maxSize ?? 0, protected: o.protected === true }),
};

/** A field of the collection in v0.22's shape. */
export function fieldJson022(f: FieldDef): Json {
  const options = (LEGACY_OPTIONS[f.type] ?? ((o: Json) => ({ ...o })))(f.options);
  return { system: f.system, id: f.id, name: f.name, type: f.type, required: f.required, presentable: f.presentable, unique: f.unique, options };
}

/** The system fields PocketBase starts a collection of `type` with, before its own fields. */
export function defaultLeadingSystemFields(type: string): Json[] {
  if (type !== 'base' && type !== 'auth') return [];
  const f = (parts: Partial<Parameters<typeof pbField>[0]> & { id: string; name: string; type: string }, options: Json) =>
    pbField({ system: true, hidden: false, presentable: false, required: false, help: '', ...parts }, options);
  const id = f({ id: 'text3208210256', name: 'id', type: 'text', required: true }, { autogeneratePattern: '[a-z0-9]{15}', max: 15, min: 15, pattern: '^[a-z0-9]+$', primaryKey: true });
  if (type === 'base') return [id];
  return [
    id,
    f({ id: 'password901924565', name: 'password', type: 'password', hidden: true, required: true }, { cost: 0, max: 0, min: 8, pattern: '' }),
    f({ id: 'text2504183744', name: 'tokenKey', type: 'text', hidden: true, required: true }, { autogeneratePattern: '[a-zA-Z0-9]{50}', max: 60, min: 30, pattern: '' }),
    f({ id: 'email3885137012', name: 'email', type: 'email', required: true }, {}),
    f({ id: 'bool1547992806', name: 'emailVisibility', type: 'bool' }, {}),
    f({ id: 'bool256245529', name: 'verified', type: 'bool' }, {}),
  ];
}

/** `created` and `updated` as PocketBase ≥ 0.23 gives a collection that had them (every v0.22 one). */
export function defaultAutodateFields(): Json[] {
  const f = (id: string, name: string, onUpdate: boolean) => pbField({ id, name, type: 'autodate', system: false, hidden: false, presentable: false, required: false, help: '' }, { onCreate: true, onUpdate });
  return [f('autodate2990389176', 'created', false), f('autodate3332085495', 'updated', true)];
}

/** A system field as sent or imported, in ≥ 0.23's shape (only the keys its type has). */
export function systemFieldJson(raw: Json): Json {
  const type = text(raw.type);
  return pbField(
    { id: text(raw.id), name: text(raw.name), type, system: raw.system === true, hidden: raw.hidden === true, presentable: raw.presentable === true, required: raw.required === true, help: text(raw.help) },
    isObject(raw.options) ? { ...raw.options, ...raw } : raw,
  );
}

/**
 * A collection's ≥ 0.23 `fields`: its system fields as PocketBase described them (or as PocketBase
 * makes them), its own fields, in PocketBase's order.
 */
export function pocketBaseFields(c: Collection): Json[] {
  const own = c.fields.map(fieldJson023);
  const stored = Array.isArray(c.options.systemFields) ? c.options.systemFields.filter(isObject).map(systemFieldJson) : undefined;
  const order = Array.isArray(c.options.fieldOrder) ? (c.options.fieldOrder as unknown[]).filter((n): n is string => typeof n === 'string') : undefined;
  if (c.type === 'view' && (stored === undefined || order === undefined)) return viewFields(c);
  if (stored === undefined || order === undefined) {
    // PocketBase's own layout: its system fields first, the collection's fields, then the dates.
    const leading = defaultLeadingSystemFields(c.type).map((d) => stored?.find((s) => s.name === d.name) ?? d);
    const dates = defaultAutodateFields().map((d) => stored?.find((s) => s.name === d.name) ?? d);
    return [...leading, ...own, ...dates];
  }
  // The order PocketBase had; a field added since goes after the one before it in Cairn's list.
  const rank = new Map(order.map((name, i) => [name, i]));
  const ranked: Array<{ field: Json; at: number }> = [];
  let last = -1;
  // A view's column that PocketBase described as a system field (its `created`) is listed once, as described.
  const described = new Set(stored.map((f) => f.name));
  for (const field of own.filter((f) => !described.has(f.name))) {
    const at = rank.get(field.name as string);
    last = at ?? last + 0.001;
    ranked.push({ field, at: last });
  }
  for (const field of stored) ranked.push({ field, at: rank.get(field.name as string) ?? -1 });
  return ranked.sort((a, b) => a.at - b.at).map((r) => r.field);
}

/**
 * Whether records of a base or auth collection answer `created` (or `updated`): always, unless the
 * collection keeps PocketBase ≥ 0.23's description of its fields (an import, a client's full list)
 * and that has no `autodate` field of the name, as PocketBase's records then have no such key. The
 * column stays (Cairn's system column): filters and sorts on it keep working.
 */
export function answersDate(c: Collection, name: 'created' | 'updated'): boolean {
  const stored = c.options.systemFields;
  if (c.type === 'view' || !Array.isArray(stored) || !Array.isArray(c.options.fieldOrder)) return true;
  return stored.some((f) => isObject(f) && f.name === name && f.type === 'autodate');
}

/** A view lists `id` first (PocketBase's view id field: no length limits), then the columns of its query. */
function viewFields(c: Collection): Json[] {
  const stored = Array.isArray(c.options.systemFields) ? c.options.systemFields.filter(isObject).map(systemFieldJson) : [];
  const id = stored.find((s) => s.name === 'id') ?? pbField({ id: 'text3208210256', name: 'id', type: 'text', system: true, hidden: false, presentable: false, required: true, help: '' }, { max: 0, min: 0, pattern: '^[a-z0-9]+$', primaryKey: true, autogeneratePattern: '' });
  return [id, ...stored.filter((s) => s.name !== 'id'), ...c.fields.map(fieldJson023)];
}

/** `created` and `updated` of PocketBase's own system collections, system fields there. */
export function systemCollectionDates(): Json[] {
  return defaultAutodateFields().map((f) => ({ ...f, system: true }));
}
