import { relationTarget } from '../../collections/fields/relation.ts';
import { typeOf } from '../../collections/fields/registry.ts';
import type { Collection, FieldDef } from '../../collections/model.ts';
import type { CollectionLookup } from '../../records/resolver.ts';
import { FilterError } from '../errors.ts';

export type RequestSource = 'method' | 'context' | 'auth' | 'body' | 'query' | 'headers';
export type RequestModifier = 'isset' | 'length' | 'each' | 'lower';

/** A `@request.*` name, parsed and checked against the collections once per rule. */
export interface RequestRef {
  name: string;
  source: RequestSource;
  /** The first segment after the source (`role` in `@request.auth.role`); empty for the method. */
  key: string;
  /** Further segments: a relation path (`@request.body.post.author`) or a JSON path. */
  rest: string[];
  modifier?: RequestModifier;
}

/** What names are checked against. */
export interface NameScope {
  collection: Collection;
  /** Every auth collection of the database: `@request.auth.<field>` may name a field of any of them. */
  authCollections: readonly Collection[];
  lookup: CollectionLookup;
  /** `@request.auth.<field>` of no auth collection is accepted (NULL), as PocketBase's save accepts it. */
  anyAuthField?: boolean;
}

/** `@request.auth.*` keys of every caller kind, besides the fields of the auth collections. */
export const AUTH_KEYS = new Set(['id', 'collectionId', 'collectionName', 'type', 'roles', 'created', 'updated', 'email', 'emailVisibility', 'verified']);

/** Body keys of auth collections besides their fields. */
const AUTH_BODY_KEYS = new Set(['email', 'emailVisibility', 'verified', 'password', 'passwordConfirm', 'oldPassword']);

const MODIFIERS = new Set<string>(['isset', 'length', 'each', 'lower']);
const KEY = /^[A-Za-z0-9_]+$/;
const PATH_KEY = /^[A-Za-z0-9_-]+$/;

function isMultiple(field: FieldDef | undefined): boolean {
  return field !== undefined && typeOf(field).multiple(field);
}

/** Parses and checks a `@request.*` name; throws FilterError naming the problem. */
export function parseRequestRef(name: string, position: number, scope: NameScope): RequestRef {
  const fail = (message: string): never => {
    throw new FilterError(message, position);
  };
  const [path, modifierText, ...extra] = name.split(':');
  if (extra.length > 0 || (modifierText !== undefined && !MODIFIERS.has(modifierText))) fail(`unknown modifier in ${JSON.stringify(name)}`);
  const modifier = modifierText as RequestModifier | undefined;
  const segments = path.split('.');
  if (segments.some((s) => s === '')) fail(`invalid name ${JSON.stringify(name)}`);
  const source = segments[1] === 'data' ? 'body' : segments[1];

  if (source === 'method' || source === 'context') {
    if (segments.length !== 2) fail(`${JSON.stringify(name)}: the ${source} has no sub-fields`);
    if (modifier !== undefined && modifier !== 'lower') fail(`":${modifier}" does not apply to @request.${source}`);
    return { name, source, key: '', rest: [], modifier };
  }
  if ((source !== 'auth' && source !== 'body' && source !== 'query' && source !== 'headers') || segments.length < 3) {
    fail(`unknown identifier ${JSON.stringify(name)}; use @request.auth.*, @request.body.*, @request.query.*, @request.headers.*, @request.method or @request.context`);
  }
  const key = segments[2];
  const rest = segments.slice(3);
  if (!KEY.test(key) || rest.some((k) => !PATH_KEY.test(k))) fail(`invalid name ${JSON.stringify(name)}`);
  const ref: RequestRef = { name, source: source as RequestSource, key, rest, modifier };

  if (source === 'query' || source === 'headers') {
    if (rest.length > 0) fail(`${JSON.stringify(name)}: request ${source === 'query' ? 'query parameters' : 'headers'} have no sub-fields`);
    if (modifier === 'length' || modifier === 'each') fail(`":${modifier}" does not apply to ${JSON.stringify(name)}`);
    return ref;
  }

  // Body and auth keys name fields; a multiple or relation field decides which modifiers apply.
  let field: FieldDef | undefined;
  let systemKey = false;
  if (source === 'body') {
    field = scope.collection.fields.find((f) => f.name === key);
    systemKey = key === 'id' || (scope.collection.type === 'auth' && AUTH_BODY_KEYS.has(key));
    // A key that names no field is the body's value as sent, a JSON path below it included (as
    // PocketBase reads `@request.body.*`: a rule may check what a hook or the client sends beside the fields).
  } else {
    systemKey = AUTH_KEYS.has(key);
    const candidates = scope.authCollections.flatMap((c) => c.fields.filter((f) => f.name === key));
    field = candidates.find((f) => (rest.length > 0 ? f.type === 'relation' : true));
    if (!systemKey && candidates.length === 0 && !scope.anyAuthField) fail(`unknown field ${JSON.stringify(key)} in ${JSON.stringify(name)}: no auth collection has such a field`);
    if (systemKey) field = undefined;
  }

  if (rest.length > 0) {
    if (field?.type === 'relation') {
      if (modifier === 'isset') fail(`":isset" does not apply to the relation path ${JSON.stringify(name)}`);
      return ref;
    }
    if (source === 'body' && (field?.type === 'json' || (!field && !systemKey))) {
      if (modifier === 'length' || modifier === 'each') fail(`":${modifier}" cannot follow a JSON path in ${JSON.stringify(name)}`);
      return ref;
    }
    fail(`${JSON.stringify(key)} is not a relation field, so ${JSON.stringify(name)} cannot be followed`);
  }
  const multiple = isMultiple(field) || (source === 'auth' && key === 'roles');
  if ((modifier === 'length' || modifier === 'each') && !multiple) fail(`":${modifier}" needs a multiple-value field, ${JSON.stringify(key)} is not`);
  return ref;
}

/** The collection a relation path of a request name leads to, for checking names (any auth collection). */
export function relationStart(ref: RequestRef, scope: NameScope): { target: Collection; field: FieldDef } | undefined {
  const fields = ref.source === 'body' ? scope.collection.fields : scope.authCollections.flatMap((c) => c.fields);
  for (const field of fields) {
    if (field.name !== ref.key || field.type !== 'relation') continue;
    const target = scope.lookup(relationTarget(field));
    if (target) return { target, field };
  }
  return undefined;
}
