import { type Collection, isCairnUsers } from '../collections/model.ts';
import { type NormalizeContext, normalizeCollection } from '../collections/normalize.ts';
import { conflict, isApiError } from '../errors.ts';
import { isValidCollectionName } from '../lib/identifiers.ts';
import { randomId } from '../lib/ids.ts';
import { toDate } from './values.ts';
import { type CollectionDraft, draftCollection, type FieldDraft, type Note, type TargetInfo } from './schema.ts';
import type { Generation, PbCollection } from './source.ts';
import type { Converter } from './values.ts';

/**
 * The import decided before anything is written: which PocketBase collections become which Cairn
 * collections (validated as the collections API validates them), how every column is copied, and
 * whether the target database can take them (a name it already holds refuses the whole import).
 */

/**
 * PocketBase's own system collections (their names start with "_"), and what becomes of them. A
 * collection PocketBase flags `system` without being one of these (its test data's `nologin`) is an
 * ordinary collection of the application and is carried, flag included.
 */
const SYSTEM_COLLECTIONS: Record<string, string> = {
  _superusers: 'its records are carried as Cairn administrators',
  _externalAuths: 'its OAuth2 links are carried to the same collection in Cairn',
  _mfas: 'multi-factor sign-ins under way are not carried (they last minutes)',
  _otps: 'one-time passwords under way are not carried (they last minutes)',
  _authOrigins: 'the devices accounts signed in from are carried to the same collection in Cairn',
};

export interface ColumnCopy {
  column: string;
  source: string;
  convert: Converter;
}

export interface PlannedCollection {
  draft: CollectionDraft;
  /** The collection as it will be stored (views: fields filled in once the view exists). */
  collection: Collection;
  /** Cairn's default `users`, when PocketBase's `users` is merged into it. */
  replaces?: Collection;
  /** Column copies, in insert order (`id` first). */
  columns: ColumnCopy[];
  /** Positions in `columns` of file fields, with whether they hold several names. */
  files: Array<{ index: number; multiple: boolean }>;
}

export interface ImportPlan {
  generation: Generation;
  collections: PlannedCollection[];
  notes: Note[];
  /**
   * Cairn's default `users`, empty, when the application has no `users`: it gives way (soft-dropped,
   * its table stays) so the database holds the application's collections, as PocketBase did.
   */
  dropsUsers?: Collection;
}

export interface PlanTarget {
  /** The target database's collections (empty for a database the import will create). */
  collections: readonly Collection[];
  /** Whether a table or view of that name exists without being a collection (a soft-dropped one). */
  relationExists(name: string): Promise<boolean>;
  /** Records in the target's `users` (0 when it has none). */
  usersRecords: number;
  /** Checks a rule as the collections API does (rules domain). */
  checkRule(collection: Collection, rule: string, others: readonly Collection[]): string | undefined;
  /** Index names the target database already has (lower case). */
  indexNames(): Promise<string[]>;
  /** PocketBase's settings document, when readable. */
  settings?: Record<string, unknown>;
}

const RULES = ['listRule', 'viewRule', 'createRule', 'updateRule', 'deleteRule'] as const;

const lower = (s: string) => s.toLowerCase();

/** Every message of a validation error's data, flattened. */
function messages(data: unknown): string[] {
  if (typeof data !== 'object' || data === null) return [];
  const d = data as Record<string, unknown>;
  if (typeof d.message === 'string' && typeof d.code === 'string') return [d.message];
  return Object.values(d).flatMap(messages);
}

function errorText(err: unknown): string {
  if (isApiError(err)) {
    const found = messages(err.data);
    return found.length > 0 ? found.join(' ') : err.message;
  }
  return (err as Error).message;
}

/** Validates one field as part of the collection, dropping options Cairn refuses (then the field). */
function checkedField(name: string, type: 'base' | 'auth', field: FieldDraft, ctx: NormalizeContext, notes: Note[]): FieldDraft | undefined {
  const fieldName = String(field.body.name);
  let body = field.body;
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      normalizeCollection({ name, type, fields: [body] }, undefined, ctx);
      return body === field.body ? field : { ...field, body };
    } catch (err) {
      const problems = isApiError(err) ? ((err.data.fields as Record<string, Record<string, unknown>> | undefined)?.[0] ?? {}) : {};
      const optionProblems = problems.options as Record<string, unknown> | undefined;
      if (attempt === 0 && optionProblems && Object.keys(problems).length === 1) {
        const options = { ...(body.options as Record<string, unknown>) };
        for (const [key, problem] of Object.entries(optionProblems)) {
          delete options[key];
          notes.push({ what: `${name}.${fieldName}`, why: `its option ${key} is not carried: ${messages(problem).join(' ')}` });
        }
        body = { ...body, options };
        continue;
      }
      notes.push({ what: `${name}.${fieldName}`, why: `not carried: ${errorText(err)}; its values stay behind` });
      return undefined;
    }
  }
  return undefined;
}

/** Auth settings a validation problem is about (`otp.duration` → `otp`). */
function settingKey(path: string): string {
  return path.split('.')[0];
}

/**
 * Validates the collection as the collections API does, its options (auth settings, PocketBase's
 * system fields) and flag included. An auth setting Cairn refuses is left out (reported) rather than
 * failing the import; the defaults stand in for it.
 */
function normalizeWithOptions(name: string, d: CollectionDraft, fields: readonly FieldDraft[], ctx: NormalizeContext, notes: Note[]): Collection {
  let options = { ...d.options };
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      return normalizeCollection({ name, type: d.type, system: d.pb.system, fields: fields.map((f) => f.body), options, indexes: d.indexes }, undefined, ctx);
    } catch (err) {
      const data = isApiError(err) ? (err.data as Record<string, unknown>) : {};
      const keys = Object.keys(data).filter((k) => k !== 'fields' && k !== 'indexes');
      if (keys.length === 0 || keys.length !== Object.keys(data).length) {
        if (isApiError(err) && data.indexes && Object.keys(data).length === 1) {
          // Indexes are added one by one after the records (write.ts), which reports each that fails.
          return { ...normalizeCollection({ name, type: d.type, system: d.pb.system, fields: fields.map((f) => f.body), options }, undefined, ctx), indexes: d.indexes };
        }
        throw err;
      }
      options = { ...options };
      for (const key of keys) {
        delete options[settingKey(key)];
        notes.push({ what: `${name}.${settingKey(key)}`, why: `not carried: ${messages(data[key]).join(' ')}; Cairn's default stands in`, kind: 'not-carried' });
      }
    }
  }
  return normalizeCollection({ name, type: d.type, system: d.pb.system, fields: fields.map((f) => f.body) }, undefined, ctx);
}

function columnsOf(draft: CollectionDraft, fields: readonly FieldDraft[]): { columns: ColumnCopy[]; files: PlannedCollection['files'] } {
  const columns: ColumnCopy[] = [{ column: 'id', source: 'id', convert: (v) => v }];
  for (const column of ['created', 'updated']) {
    const system = draft.system.get(column);
    // A collection without the field: the time of the import (the source column reads as NULL).
    const now = new Date().toISOString();
    columns.push({ column, source: system?.source ?? column, convert: system ? (v) => toDate(v) || now : () => now });
  }
  for (const [column, system] of draft.system) if (column !== 'created' && column !== 'updated') columns.push({ column, source: system.source, convert: system.convert });
  const files: PlannedCollection['files'] = [];
  for (const field of fields) {
    if (field.file) files.push({ index: columns.length, multiple: field.file.multiple });
    columns.push({ column: String(field.body.name), source: field.source, convert: field.convert });
  }
  return { columns, files };
}

/**
 * Plans the import of PocketBase's collections into a database holding `target.collections`.
 * Refuses (409) when the database already holds a collection (or table) of an imported name, except
 * PocketBase's auth `users`, merged into Cairn's default `users` while that holds no records.
 */
export async function planImport(pbCollections: readonly PbCollection[], generation: Generation, target: PlanTarget): Promise<ImportPlan> {
  const notes: Note[] = [];
  const { targets, chosen } = chooseCollections(pbCollections, notes);
  const indexNames = new Set(await target.indexNames());
  const drafts = chosen.map((pb) => draftCollection(pb, { generation, targets, settings: target.settings, indexNames }));
  for (const d of drafts) notes.push(...d.notes);
  const merge = await usersToMerge(drafts, target);

  // Validation as the collections API does it; relation targets resolve among the imported collections.
  const stubs = new Map<string, Collection>();
  for (const d of drafts) stubs.set(lower(d.pb.name), { id: d.pb.id, name: d.pb.name, type: d.type } as Collection);
  const ctx: NormalizeContext = {
    find: (nameOrId) => stubs.get(lower(nameOrId)) ?? [...stubs.values()].find((c) => c.id === nameOrId),
    validateRule: () => undefined,
    validateOptions: [],
  };
  const takenIds = new Set(target.collections.filter((c) => c !== merge).map((c) => c.id));
  const planned = drafts.map((d) => planCollection(d, ctx, takenIds, merge, notes));

  // Rules, checked against every collection the database will hold (views' once their fields exist).
  const all = [...target.collections.filter((c) => c !== merge), ...planned.map((p) => p.collection)];
  for (const p of planned) if (p.collection.type !== 'view') checkRules(p, all, target, notes);
  // Tables first, then views (which read them).
  planned.sort((a, b) => Number(a.collection.type === 'view') - Number(b.collection.type === 'view'));
  let dropsUsers: Collection | undefined;
  const cairnUsers = target.collections.find((c) => isCairnUsers(c));
  if (cairnUsers && !merge && target.usersRecords === 0 && !pbCollections.some((pb) => lower(pb.name) === 'users')) {
    dropsUsers = cairnUsers;
    notes.push({ what: cairnUsers.name, why: 'Cairn\'s default "users" (empty) gives way: the application has no "users"; its table stays', kind: 'changed' });
  }
  return { generation, collections: planned, notes, dropsUsers };
}

/** The collections carried (PocketBase's own and names Cairn cannot take are not), and what every relation target becomes. */
function chooseCollections(pbCollections: readonly PbCollection[], notes: Note[]): { targets: Map<string, TargetInfo>; chosen: PbCollection[] } {
  const targets = new Map<string, TargetInfo>();
  const chosen: PbCollection[] = [];
  for (const pb of pbCollections) {
    let skipped: string | undefined;
    if (pb.name.startsWith('_') && (pb.system || SYSTEM_COLLECTIONS[pb.name])) skipped = SYSTEM_COLLECTIONS[pb.name] ?? 'it is one of PocketBase’s own system collections';
    else if (!isValidCollectionName(pb.name)) skipped = 'Cairn collection names hold only letters, digits and "_" (at most 63), and do not start with "_"';
    targets.set(pb.id, { name: pb.name, type: pb.type, skipped });
    if (skipped) {
      if (!SYSTEM_COLLECTIONS[pb.name]) notes.push({ what: pb.name, why: `not carried: ${skipped}`, kind: 'not-carried' });
      continue;
    }
    chosen.push(pb);
  }
  return { targets, chosen };
}

/**
 * Cairn's default `users`, when PocketBase's auth `users` is merged into it (it holds no records);
 * a 409 when the target already holds any other imported name (a collection or a table).
 */
async function usersToMerge(drafts: readonly CollectionDraft[], target: PlanTarget): Promise<Collection | undefined> {
  const existing = new Map(target.collections.map((c) => [lower(c.name), c]));
  const clashes: string[] = [];
  let merge: Collection | undefined;
  for (const d of drafts) {
    const held = existing.get(lower(d.pb.name));
    if (held && lower(d.pb.name) === 'users' && d.type === 'auth' && held.type === 'auth' && target.usersRecords === 0) {
      merge = held;
      continue;
    }
    if (held || (await target.relationExists(d.pb.name))) clashes.push(d.pb.name);
  }
  if (clashes.length === 0) return merge;
  const usersHeld = clashes.some((n) => lower(n) === 'users');
  throw conflict(
    `The target database already holds ${clashes.length === 1 ? 'a collection' : 'collections'} named ${clashes.map((n) => `"${n}"`).join(', ')}: nothing was imported.` +
      (usersHeld ? ' PocketBase\'s auth "users" is merged into Cairn\'s only while Cairn\'s holds no records (and a base "users" never is).' : '') +
      ' Import into another database (--db NAME) or remove them first.',
    { collections: { code: 'validation_collection_name_exists', message: clashes.join(', ') } },
  );
}

/** One collection as it will be made: its id (a taken one replaced), fields checked, PocketBase's rules and dates. */
function planCollection(d: CollectionDraft, ctx: NormalizeContext, takenIds: ReadonlySet<string>, merge: Collection | undefined, notes: Note[]): PlannedCollection {
  const name = d.pb.name;
  let id = d.pb.id;
  if (takenIds.has(id) || !/^[A-Za-z0-9_]{1,100}$/.test(id)) {
    id = randomId();
    notes.push({ what: name, why: `collection id ${JSON.stringify(d.pb.id)} renamed "${id}": the target database already has a collection with that id (PocketBase's tokens for its records stop working)`, kind: 'renamed' });
  }
  const created = toDate(d.pb.created) as string;
  const updated = toDate(d.pb.updated) as string;
  if (d.type === 'view') {
    const collection: Collection = {
      id, name, type: 'view', system: false, fields: [], options: { ...d.options, query: d.query ?? '' },
      listRule: d.pb.listRule, viewRule: d.pb.viewRule, createRule: null, updateRule: null, deleteRule: null,
      indexes: [], created: created || new Date().toISOString(), updated: updated || new Date().toISOString(),
    };
    return { draft: d, collection, columns: [], files: [] };
  }
  const fields = d.fields.map((f) => checkedField(name, d.type as 'base' | 'auth', f, ctx, notes)).filter((f): f is FieldDraft => f !== undefined);
  const normalized = normalizeWithOptions(name, d, fields, ctx, notes);
  const collection: Collection = {
    ...normalized,
    id,
    listRule: d.pb.listRule,
    viewRule: d.pb.viewRule,
    createRule: d.pb.createRule,
    updateRule: d.pb.updateRule,
    deleteRule: d.pb.deleteRule,
    created: created || normalized.created,
    updated: updated || normalized.updated,
  };
  const replaces = merge && lower(name) === 'users' ? merge : undefined;
  if (replaces) {
    // The application's users, as PocketBase had them: Cairn's empty default collection (and its
    // `name`, `avatar`, `role`, whose columns stay, empty) gives way, so the app's own `role` is
    // written as its rules allow and not as Cairn's administrators-only one.
    notes.push({
      what: name,
      why: `replaces Cairn's default "users" (it held no records): PocketBase's fields, rules, options and flags are the collection's; Cairn's ${replaces.fields.map((f) => `"${f.name}"`).join(', ')} are not added`,
      kind: 'changed',
    });
  }
  // Cairn's kept fields are not copied: their columns keep their defaults.
  const { columns, files } = columnsOf(d, fields);
  return { draft: d, collection, replaces, columns, files };
}

/** A rule Cairn cannot read is not carried as written: it becomes null (administrators only), never wider. */
export function checkRules(p: PlannedCollection, all: readonly Collection[], target: Pick<PlanTarget, 'checkRule'>, notes: Note[]): void {
  for (const rule of RULES) {
    const text = p.collection[rule];
    if (typeof text !== 'string' || text.trim() === '') continue;
    const problem = target.checkRule(p.collection, text, all);
    if (problem) {
      p.collection = { ...p.collection, [rule]: null };
      notes.push({ what: `${p.collection.name}.${rule}`, why: `${JSON.stringify(text)} is not carried (${problem}); it is null: administrators only`, kind: 'changed' });
    }
  }
  if (p.collection.type !== 'auth') return;
  // The auth rule and the manage rule narrow to null (nobody signs in; only administrators manage);
  // an MFA rule Cairn cannot read becomes "" (a second factor for everyone).
  const options = { ...p.collection.options };
  for (const [key, fallback] of [['authRule', null], ['manageRule', null]] as const) {
    const text = options[key];
    if (typeof text !== 'string' || text.trim() === '') continue;
    const problem = target.checkRule(p.collection, text, all);
    if (problem) {
      options[key] = fallback;
      notes.push({ what: `${p.collection.name}.${key}`, why: `${JSON.stringify(text)} is not carried (${problem}); it is null`, kind: 'changed' });
    }
  }
  const mfa = options.mfa as { rule?: unknown } | undefined;
  if (mfa && typeof mfa.rule === 'string' && mfa.rule.trim() !== '') {
    const problem = target.checkRule(p.collection, mfa.rule, all);
    if (problem) {
      options.mfa = { ...mfa, rule: '' };
      notes.push({ what: `${p.collection.name}.mfa.rule`, why: `${JSON.stringify(mfa.rule)} is not carried (${problem}); every account is asked for a second factor`, kind: 'changed' });
    }
  }
  p.collection = { ...p.collection, options };
}
