import { type FieldError, validationFailed } from '../errors.ts';
import { randomId, uuid } from '../lib/ids.ts';
import { isValidCollectionName, isValidName } from '../lib/identifiers.ts';
import { nowIso } from '../lib/time.ts';
import { AUTH_SETTING_KEYS, authSettingsOf, DEFAULT_AUTH_SETTINGS, normalizeAuthSettings } from './auth-settings.ts';
import { fieldType, fieldTypeNames } from './fields/registry.ts';
import { relationField } from './fields/relation.ts';
import type { OptionProblems } from './fields/types.ts';
import { type Collection, type CollectionType, type FieldDef, isReservedFieldName, RULE_NAMES } from './model.ts';
import { collectionInput, isEchoedSystemField, systemFieldType } from './pocketbase-shapes.ts';
import { SUPERUSERS_ID } from './superusers.ts';
import { isCairnIndexName, parseIndex, withIndexTable } from './table-sync.ts';
import { viewQuery } from '../migrations/views.ts';
import { isPlainObject } from '../lib/objects.ts';

const COLLECTION_TYPES: readonly CollectionType[] = ['base', 'auth', 'view'];
const FIELD_ID = /^[A-Za-z0-9_-]{1,100}$/;
const MAX_FIELDS = 500;

/** Looks up collections of the same database by name or id while a save is validated. */
export type CollectionFinder = (nameOrId: string) => Collection | undefined;

/**
 * Checks a rule's text against the collection being saved and the other collections of its
 * database; returns a message for an invalid rule. Provided by the rules domain.
 * `pocketBase`: checked as PocketBase's save checks a rule (a pb_migrations file): `@request.auth.<field>`
 * may name a field no auth collection has yet (PocketBase reads it as NULL; a later file adds it).
 */
export type RuleValidator = (collection: Collection, rule: string, others: readonly Collection[], options?: { pocketBase?: boolean }) => string | undefined;

/** Checks collection options (webhook triggers, auth settings); returns errors by option name. */
export type OptionsValidator = (collection: Collection) => Record<string, FieldError> | undefined;

export interface NormalizeContext {
  find: CollectionFinder;
  /** The other collections of the database, for rules that reach them. */
  all?: readonly Collection[];
  validateRule: RuleValidator;
  validateOptions: readonly OptionsValidator[];
}

type Errors = Record<string, unknown>;

const err = (code: string, message: string): FieldError => ({ code, message });

/** PocketBase's collection ids: word characters, at most 100. */
const COLLECTION_ID = /^\w{1,100}$/;

/** `options` arrives as an object or, in the spec's form, as a JSON-encoded string. */
function parseOptions(raw: unknown, errors: Errors): Record<string, unknown> | undefined {
  if (raw === undefined) return undefined;
  if (raw === null || raw === '') return {};
  let value = raw;
  if (typeof raw === 'string') {
    try {
      value = JSON.parse(raw);
    } catch {
      errors.options = err('validation_invalid_json', 'Must be an object or a JSON-encoded object.');
      return undefined;
    }
  }
  if (!isPlainObject(value)) {
    errors.options = err('validation_invalid_options', 'Must be an object or a JSON-encoded object.');
    return undefined;
  }
  return value;
}

const RECORD_JSON_KEYS = new Set(['expand', 'collectionid', 'collectionname']);
/** Names an auth collection keeps for its forms and its own columns (PocketBase's `validation_reserved_field_name`). */
const AUTH_FORM_KEYS = new Set(['passwordconfirm', 'oldpassword', 'passwordhash', 'lastresetsentat', 'lastverificationsentat']);

function normalizeField(
  raw: unknown,
  previous: Map<string, FieldDef>,
  previousByName: Map<string, FieldDef>,
  collectionName: string,
  collectionType: CollectionType,
  ctx: NormalizeContext,
): { field?: FieldDef; errors?: Errors } {
  if (!isPlainObject(raw)) return { errors: { '': err('validation_invalid_field', 'Must be a field definition object.') } };
  const errors: Errors = {};

  const name = raw.name;
  if (name === undefined || name === null || name === '') {
    errors.name = err('validation_required', 'Cannot be blank.');
  } else if (!isValidName(name)) {
    errors.name = err('validation_invalid_name', 'Must contain only letters, digits and underscores (max 63), and not start with an underscore.');
  } else if (RECORD_JSON_KEYS.has(name.toLowerCase())) {
    // PocketBase's code for the keys every record's JSON has (they are no column).
    errors.name = err('validation_not_in_invalid', `"${name}" is a key of every record and cannot be a field name.`);
  } else if (collectionType === 'auth' && AUTH_FORM_KEYS.has(name.toLowerCase())) {
    // Keys of an auth record's create and update forms (and Cairn's own auth columns): PocketBase's code.
    errors.name = err('validation_reserved_field_name', `"${name}" is reserved by auth collections and cannot be a field name.`);
  } else if (isReservedFieldName(name, collectionType)) {
    errors.name = err('validation_reserved_name', `"${name}" is reserved for a system field.`);
  }

  const typeName = raw.type;
  const type = typeof typeName === 'string' ? fieldType(typeName) : undefined;
  if (!type) {
    errors.type = err('validation_invalid_type', `Unknown field type. Use one of: ${fieldTypeNames().join(', ')}.`);
  }

  for (const flag of ['required', 'unique', 'hidden', 'presentable', 'system'] as const) {
    if (raw[flag] !== undefined && raw[flag] !== null && typeof raw[flag] !== 'boolean') errors[flag] = err('validation_invalid_value', 'Must be a boolean.');
  }

  if (raw.help !== undefined && raw.help !== null && (typeof raw.help !== 'string' || raw.help.length > 1000)) errors.help = err('validation_invalid_value', 'Must be a text of at most 1000 characters.');

  // Identity: the id when it names an existing field, else the name.
  const givenId = typeof raw.id === 'string' && raw.id !== '' ? raw.id : undefined;
  if (givenId !== undefined && !FIELD_ID.test(givenId)) errors.id = err('validation_invalid_id', 'Must be 1-100 letters, digits, "_" or "-".');
  let old = givenId !== undefined ? previous.get(givenId) : undefined;
  if (!old && typeof name === 'string') old = previousByName.get(name.toLowerCase());
  if (old && typeof name === 'string' && old.name !== name) {
    errors.name = err(
      'validation_field_rename',
      `Renaming "${old.name}" to "${name}" is not supported: fields are append-only. Add a new field (the old column keeps its data), or rename the column manually.`,
    );
  }
  // url → file (one file) is the one change allowed, for a field that holds no values (checked by the
  // service against the table): how an existing Cairn `users` takes PocketBase's avatar field.
  const emptyUrlToFile = old?.type === 'url' && type?.name === 'file' && isPlainObject(raw.options) && (raw.options.maxSelect ?? 1) === 1;
  if (old && type && old.type !== type.name && !emptyUrlToFile) {
    errors.type = err('validation_field_type_change', `The type of "${old.name}" cannot change from ${old.type} to ${type.name}.`);
  }

  let options: Record<string, unknown> = {};
  const rawOptions = raw.options === undefined || raw.options === null ? {} : raw.options;
  if (!isPlainObject(rawOptions)) {
    errors.options = err('validation_invalid_options', 'Must be an object.');
  } else if (type) {
    const problems: OptionProblems = new Map();
    options = type.normalizeOptions(rawOptions, problems);
    if (type === relationField && problems.size === 0) resolveRelationTarget(options, collectionName, ctx, problems);
    if (problems.size > 0) {
      errors.options = Object.fromEntries([...problems].map(([k, msg]) => [k, err('validation_invalid_option', msg)]));
    }
    if (old && type.multiple(old) && !type.multiple({ ...old, options })) {
      errors.options = { maxSelect: err('validation_field_multiple_change', 'A multiple-value field cannot become single-value: values would be lost.') };
    }
  }

  if (Object.keys(errors).length > 0) return { errors };

  const field: FieldDef = {
    id: old?.id ?? givenId ?? uuid(),
    name: name as string,
    type: type!.name,
    required: raw.required === true,
    unique: raw.unique === true,
    hidden: raw.hidden === true,
    system: raw.system === true,
    presentable: raw.presentable === true,
    default: raw.default === undefined ? null : raw.default,
    options,
  };
  if (typeof raw.help === 'string' && raw.help !== '') field.help = raw.help;
  if (field.default !== null) {
    const prepared = type!.prepare(field.default, field);
    if (!prepared.ok) return { errors: { default: prepared.error } };
    field.default = prepared.value;
  }
  return { field };
}

function resolveRelationTarget(options: Record<string, unknown>, collectionName: string, ctx: NormalizeContext, problems: OptionProblems): void {
  const wanted = (options.toCollection as string) || (options.collectionId as string);
  if (wanted.toLowerCase() === collectionName.toLowerCase()) {
    options.toCollection = collectionName;
    return;
  }
  const target = ctx.find(wanted);
  if (!target) {
    problems.set('toCollection', `Collection "${wanted}" does not exist.`);
    return;
  }
  if (target.type === 'view') {
    problems.set('toCollection', 'A relation cannot point at a view.');
    return;
  }
  options.toCollection = target.name;
  options.collectionId = target.id;
}

/**
 * Validates a create (no `existing`) or update body, in either of PocketBase's shapes
 * (pocketbase-shapes.ts), and returns the collection to store. Throws a 400 with per-property errors,
 * fields nested by position as PocketBase reports them.
 */
export function normalizeCollection(input: unknown, existing: Collection | undefined, ctx: NormalizeContext): Collection {
  const body = collectionInput(input, existing);
  if (!isPlainObject(body)) throw validationFailed({}, 'The request body must be a JSON object.');
  const errors: Errors = {};
  const now = nowIso();
  const name = collectionName(body, existing, ctx, errors);
  if (!existing) checkGivenId(body, ctx, errors);
  const type = collectionType(body, existing, errors);
  const fields = collectionFields(body, existing, name, type, ctx, errors);
  const options = collectionOptions(body, existing, name, type, fields, errors);
  const collection: Collection = {
    id: existing?.id ?? (typeof body.id === 'string' && body.id !== '' ? body.id : randomId()),
    name,
    type,
    system: existing ? existing.system : body.system === true,
    fields,
    options,
    listRule: existing?.listRule ?? null,
    viewRule: existing?.viewRule ?? null,
    createRule: existing?.createRule ?? null,
    updateRule: existing?.updateRule ?? null,
    deleteRule: existing?.deleteRule ?? null,
    indexes: collectionIndexes(body, existing, name, type, errors),
    created: existing?.created ?? now,
    updated: now,
  };
  setRules(collection, body, errors);
  if (Object.keys(errors).length === 0 && type !== 'view') checkCollectionRules(collection, ctx, errors);
  if (Object.keys(errors).length > 0) {
    throw validationFailed(pocketBaseErrors(errors), existing ? 'Failed to update collection.' : 'Failed to create collection.');
  }
  return collection;
}

/** The name: a new collection's, checked; fixed after creation (the spec's append-only schema). */
function collectionName(body: Record<string, unknown>, existing: Collection | undefined, ctx: NormalizeContext, errors: Errors): string {
  if (existing && (body.name === undefined || body.name === existing.name)) return existing.name;
  const taken = typeof body.name === 'string' && body.name !== '' ? ctx.find(body.name) : undefined;
  if (existing && taken && taken.id !== existing.id && taken.name.toLowerCase() === String(body.name).toLowerCase()) {
    errors.name = err('validation_collection_name_exists', 'Collection name must be unique (case insensitive).');
  } else if (existing) {
    // The spec's append-only schema: a table is renamed by hand, never through the API.
    errors.name = err('validation_collection_rename', 'Renaming a collection is not supported: the name is fixed once created.');
  } else if (body.name === undefined || body.name === null || body.name === '') {
    errors.name = err('validation_required', 'Cannot be blank.');
  } else if (!isValidName(body.name)) {
    errors.name = err('validation_invalid_name', 'Must contain only letters, digits and underscores (max 63), and not start with an underscore.');
  } else if (!isValidCollectionName(body.name)) {
    // SQLite's and PostgreSQL's own table names.
    errors.name = err('validation_reserved_name', 'Names starting with "sqlite_" or "pg_" are reserved.');
  } else if (body.name === SUPERUSERS_ID) {
    // PocketBase's id of `_superusers`, which paths may use for it.
    errors.name = err('validation_reserved_name', `"${SUPERUSERS_ID}" is the id of _superusers.`);
  } else {
    return body.name;
  }
  return existing?.name ?? '';
}

/**
 * A new collection keeps the id its client gives (PocketBase's `pbc_…`, `_pb_users_auth_`), so that
 * relations naming it resolve; another collection's id or name is not one.
 */
function checkGivenId(body: Record<string, unknown>, ctx: NormalizeContext, errors: Errors): void {
  if (body.id === undefined || body.id === null || body.id === '') return;
  const found = typeof body.id === 'string' ? ctx.find(body.id) : undefined;
  // A migration's finder also knows the drafts it is building: the collection itself is not taken
  // (a duplicate name is the name check's business).
  const taken = found !== undefined && !(found.id === body.id && typeof body.name === 'string' && found.name.toLowerCase() === body.name.toLowerCase());
  if (typeof body.id !== 'string' || !COLLECTION_ID.test(body.id) || taken || body.id === SUPERUSERS_ID) {
    errors.id = err('validation_invalid_or_existing_id', 'The model id is invalid or already exists.');
  }
}

/** The type: `base` unless told; fixed after creation. */
function collectionType(body: Record<string, unknown>, existing: Collection | undefined, errors: Errors): CollectionType {
  const type: CollectionType = existing?.type ?? 'base';
  if (body.type === undefined || body.type === type) return type;
  if (existing) errors.type = err('validation_collection_type_change', 'The type of a collection cannot change.');
  else if (!COLLECTION_TYPES.includes(body.type as CollectionType)) errors.type = err('validation_in_invalid', 'Must be "base", "auth" or "view".');
  else return body.type as CollectionType;
  return type;
}

/**
 * The fields sent (`fields`, or v0.22's `schema`), each through `normalizeField`, errors by position;
 * PocketBase's system fields sent back as they are pass, a change to one is refused.
 */
function collectionFields(body: Record<string, unknown>, existing: Collection | undefined, name: string, type: CollectionType, ctx: NormalizeContext, errors: Errors): FieldDef[] {
  const fieldsKey = body.fields !== undefined ? 'fields' : 'schema';
  const rawFields = body.fields ?? body.schema;
  // A view's fields are its query's columns (PocketBase ignores the ones sent, too).
  if (rawFields === undefined || type === 'view') return existing?.fields ?? [];
  if (!Array.isArray(rawFields)) {
    errors[fieldsKey] = err('validation_invalid_fields', 'Must be a list of field definitions.');
    return existing?.fields ?? [];
  }
  if (rawFields.length > MAX_FIELDS) {
    errors[fieldsKey] = err('validation_too_many_fields', `At most ${MAX_FIELDS} fields.`);
    return existing?.fields ?? [];
  }
  const previous = new Map((existing?.fields ?? []).map((f) => [f.id, f]));
  const previousByName = new Map((existing?.fields ?? []).map((f) => [f.name.toLowerCase(), f]));
  const fieldErrors: Errors = {};
  const seen = new Set<string>();
  const next: FieldDef[] = [];
  let systemChange = false;
  // v0.23's list starts with the `id` field; PocketBase puts it first when it is not sent, and
  // counts positions in that list. v0.22's `schema` never had it.
  const isEcho = (raw: unknown) => isPlainObject(raw) && isEchoedSystemField(raw, type);
  const offset = fieldsKey === 'fields' && !rawFields.some((raw) => isEcho(raw) && (raw as { name: string }).name === 'id') ? 1 : 0;
  rawFields.forEach((raw, i) => {
    if (isEcho(raw)) return;
    if (isPlainObject(raw) && typeof raw.name === 'string' && systemFieldType(raw.name, type) !== undefined) {
      // Another type under a system field's name would replace the system column.
      systemChange = true;
      return;
    }
    const result = normalizeField(raw, previous, previousByName, name, type, ctx);
    if (result.errors) {
      fieldErrors[i + offset] = result.errors;
      return;
    }
    const key = result.field!.name.toLowerCase();
    if (seen.has(key)) {
      fieldErrors[i + offset] = { name: err('validation_duplicated_name', `Another field is already named "${result.field!.name}".`) };
      return;
    }
    seen.add(key);
    next.push(result.field!);
  });
  if (Object.keys(fieldErrors).length > 0) errors[fieldsKey] = fieldErrors;
  else if (systemChange) errors[fieldsKey] = err('validation_system_field_change', 'System fields (id, created, updated and the auth fields) cannot be removed, renamed or change type.');
  return next;
}

/** The options: an auth collection's settings checked against its fields, a view's query checked; other types carry no auth settings. */
function collectionOptions(body: Record<string, unknown>, existing: Collection | undefined, name: string, type: CollectionType, fields: FieldDef[], errors: Errors): Record<string, unknown> {
  let options = parseOptions(body.options, errors) ?? existing?.options ?? {};
  if (type === 'auth') {
    // Checked against the fields as they will be saved: unique text fields can be identities.
    const indexesSoFar = Array.isArray(body.indexes) ? (body.indexes as unknown[]).filter((i): i is string => typeof i === 'string') : (existing?.indexes ?? []);
    const settings = normalizeAuthSettings(options, existing?.type === 'auth' ? authSettingsOf(existing) : DEFAULT_AUTH_SETTINGS, { fields, indexes: indexesSoFar }, errors as Record<string, FieldError>);
    options = { ...options, ...settings };
  } else if (AUTH_SETTING_KEYS.some((k) => options[k] !== undefined)) {
    options = { ...options };
    for (const key of AUTH_SETTING_KEYS) delete options[key];
  }
  if (type !== 'view') return options;
  // The SQL is checked here as far as it can be without the database; creating the view checks the rest.
  const query = options.query;
  if (query === undefined || query === null || (typeof query === 'string' && query.trim() === '')) {
    errors.viewQuery = err('validation_required', 'Cannot be blank.');
  } else if (typeof query !== 'string') {
    errors.viewQuery = err('validation_invalid_view_query', 'Must be a SELECT statement.');
  } else if (query !== existing?.options.query) {
    // A stored query (one an import carried, say) is left as it is when other properties change.
    try {
      options = { ...options, query: viewQuery(name || 'view', query) };
    } catch (e) {
      errors.viewQuery = err('validation_invalid_view_query', `Invalid query - ${(e as Error).message}`);
    }
  }
  return options;
}

/** The index statements sent, each on the collection's own table; errors by position. */
function collectionIndexes(body: Record<string, unknown>, existing: Collection | undefined, name: string, type: CollectionType, errors: Errors): string[] {
  const kept = existing?.indexes ?? [];
  if (body.indexes === undefined) return kept;
  if (!Array.isArray(body.indexes) || body.indexes.some((i) => typeof i !== 'string')) {
    errors.indexes = err('validation_invalid_indexes', 'Must be a list of CREATE INDEX statements.');
    return kept;
  }
  if (type === 'view' && body.indexes.length > 0) {
    errors.indexes = err('validation_indexes_not_supported', "View collections don't support indexes.");
    return kept;
  }
  const indexErrors: Errors = {};
  const names = new Set<string>();
  const statements: string[] = [];
  (body.indexes as string[]).forEach((text, i) => {
    const parsed = parseIndex(text);
    if (!parsed) {
      indexErrors[i] = err('validation_invalid_index_expression', 'Must be a single CREATE [UNIQUE] INDEX name ON table (columns) statement.');
    } else if (isCairnIndexName(parsed.name, name) || /^sqlite_/i.test(parsed.name)) {
      // A user index under the name of one of Cairn's own (created, owners, unique fields) would
      // be taken for it, and dropping it would drop Cairn's. PocketBase's `_`-prefixed names are fine.
      indexErrors[i] = err('validation_invalid_index_expression', `"${parsed.name}" is the name of one of Cairn's own indexes; "sqlite_" names are reserved too.`);
    } else if (names.has(parsed.name.toLowerCase())) {
      indexErrors[i] = err('validation_duplicated_index_name', `Another index is already named "${parsed.name}".`);
    } else {
      names.add(parsed.name.toLowerCase());
      // Always on the collection's own table, whatever table the statement names (as PocketBase does).
      statements.push(withIndexTable(text, name));
    }
  });
  if (Object.keys(indexErrors).length > 0) {
    errors.indexes = indexErrors;
    return kept;
  }
  return statements;
}

/** The rules sent: null (superusers only), "" (everyone) or a filter; a view's writes stay null. */
function setRules(collection: Collection, body: Record<string, unknown>, errors: Errors): void {
  for (const rule of RULE_NAMES) {
    const value = body[rule];
    if (value === undefined) continue;
    if (value !== null && typeof value !== 'string') {
      errors[rule] = err('validation_invalid_rule', 'Must be null (administrators only), "" (everyone) or a filter expression.');
      continue;
    }
    if (collection.type === 'view' && value !== null && (rule === 'createRule' || rule === 'updateRule' || rule === 'deleteRule')) {
      errors[rule] = err('validation_nil', 'Must be null: the records of a view are read-only.');
      continue;
    }
    collection[rule] = value;
  }
}

/**
 * Errors as PocketBase answers them: keys in order (Go writes a map's keys sorted) and the auth
 * settings' paths nested (`{passwordAuth: {identityFields: {code, message}}}`).
 */
function pocketBaseErrors(errors: Errors): Record<string, FieldError> {
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(errors).sort()) {
    const path = key.split('.');
    let node = out;
    for (const part of path.slice(0, -1)) {
      if (!isPlainObject(node[part]) || 'code' in (node[part] as object)) node[part] = {};
      node = node[part] as Record<string, unknown>;
    }
    node[path.at(-1)!] = errors[key];
  }
  return out as Record<string, FieldError>;
}

/**
 * Checks the rules of a collection about to be saved (against its own fields, which a view has once
 * its query ran); throws the 400 of the collections API.
 */
export function checkViewCollectionRules(collection: Collection, ctx: NormalizeContext, updating: boolean): void {
  const errors: Errors = {};
  checkCollectionRules(collection, ctx, errors);
  if (Object.keys(errors).length > 0) throw validationFailed(pocketBaseErrors(errors), updating ? 'Failed to update collection.' : 'Failed to create collection.');
}

function checkCollectionRules(collection: Collection, ctx: NormalizeContext, errors: Errors): void {
  // Rules may refer to the collection's own (new) fields, so they are checked against the result.
  for (const rule of RULE_NAMES) {
    const text = collection[rule];
    if (typeof text !== 'string' || text.trim() === '') continue;
    const problem = ctx.validateRule(collection, text, ctx.all ?? []);
    if (problem) errors[rule] = err('validation_invalid_rule', problem);
  }
  if (collection.type === 'auth') {
    const settings = authSettingsOf(collection);
    for (const [key, text] of [['mfa.rule', settings.mfa.rule], ['authRule', settings.authRule], ['manageRule', settings.manageRule]] as const) {
      if (typeof text !== 'string' || text.trim() === '') continue;
      const problem = ctx.validateRule(collection, text, ctx.all ?? []);
      if (problem) errors[key] = err('validation_invalid_rule', problem);
    }
  }
  for (const validate of ctx.validateOptions) {
    const problems = validate(collection);
    if (problems && Object.keys(problems).length > 0) errors.options = { ...(errors.options as object), ...problems };
  }
}
