import { relationTarget } from '../../collections/fields/relation.ts';
import { typeOf } from '../../collections/fields/registry.ts';
import type { Collection, FieldDef } from '../../collections/model.ts';
import type { Auth, RequestContext } from '../../context.ts';
import { type CollectionLookup, fieldValueType } from '../../records/resolver.ts';
import type { ValueType } from '../compile.ts';
import { type NameScope, relationStart, type RequestRef } from './request-ref.ts';
import { isPlainObject } from '../../lib/objects.ts';

/**
 * What a `@request.*` name stands for in one request. Its `shape` decides the SQL (a scalar, a set,
 * a relation path); its value is bound as a parameter, so requests of the same shape share one
 * compiled rule.
 */
export type RequestValue =
  | { kind: 'scalar'; value: unknown; valueType: ValueType }
  | { kind: 'set'; value: unknown[]; valueType: ValueType; each: boolean }
  | { kind: 'relation'; target: Collection; ids: string[]; multiple: boolean };

export function shapeOf(v: RequestValue): string {
  switch (v.kind) {
    case 'scalar':
      return `s${v.valueType}${v.value === null || v.value === '' ? 0 : 1}`;
    case 'set':
      return `a${v.valueType}${v.each ? 1 : 0}`;
    case 'relation':
      return `r${v.target.id}${v.multiple ? 1 : 0}`;
  }
}

/** The parameter value a RequestValue is bound as. */
export function bindValueOf(v: RequestValue): unknown {
  switch (v.kind) {
    case 'scalar':
      return v.value;
    case 'set':
      return v.value;
    case 'relation':
      return v.multiple ? v.ids : (v.ids[0] ?? null);
  }
}

const AUTH_KEY_TYPES = new Map<string, ValueType>([
  ['created', 'date'],
  ['updated', 'date'],
  ['verified', 'bool'],
  ['emailVisibility', 'bool'],
]);

/**
 * `@request.auth.<key>` as rules see it. `type` names the kind of caller: "authRecord" for a
 * signed-in record, "apikey" for an API key, "admin" for an administrator; guests have no auth at all
 * (every key is empty). `roles` is an API key's roles, and for a record its `roles` field or else its
 * `role` as a one-element list, so `@request.auth.roles ?= "editor"` works for both.
 */
export function authValue(auth: Auth, key: string): unknown {
  switch (auth.type) {
    case 'guest':
      return undefined;
    case 'admin':
      return key === 'id' ? auth.id : key === 'type' ? 'admin' : key === 'email' ? auth.email : key === 'roles' ? ['admin'] : undefined;
    case 'apikey':
      return key === 'id' ? auth.id : key === 'type' ? 'apikey' : key === 'roles' ? auth.roles : undefined;
    case 'record': {
      switch (key) {
        case 'id':
          return auth.id;
        case 'collectionId':
          return auth.collectionId;
        case 'collectionName':
          return auth.collectionName;
        case 'type':
          return 'authRecord';
      }
      const r = auth.record;
      if (key === 'roles' && !Array.isArray(own(r, 'roles'))) return typeof r.role === 'string' && r.role !== '' ? [r.role] : [];
      return own(r, key);
    }
  }
}

/** The parts of one request rules read, extracted only when asked for. */
export class RequestInputs {
  private authCollectionMemo?: { collection: Collection | undefined };
  private headersMemo?: Record<string, string>;

  constructor(
    private readonly ctx: RequestContext,
    private readonly lookup: CollectionLookup,
  ) {}

  get method(): string {
    return this.ctx.request.method.toUpperCase();
  }

  get context(): string {
    return this.ctx.request.context ?? 'default';
  }

  auth(key: string): unknown {
    return authValue(this.ctx.auth, key);
  }

  /** The caller's auth collection, for signed-in records. */
  get authCollection(): Collection | undefined {
    this.authCollectionMemo ??= { collection: this.ctx.auth.type === 'record' ? this.lookup(this.ctx.auth.collectionId) : undefined };
    return this.authCollectionMemo.collection;
  }

  get body(): Record<string, unknown> {
    const body = this.ctx.request.body;
    return isPlainObject(body) ? body : {};
  }

  get query(): Record<string, unknown> {
    return this.ctx.request.query ?? {};
  }

  /** Header names lower-cased with `-` as `_`, as PocketBase exposes them. */
  get headers(): Record<string, string> {
    if (!this.headersMemo) {
      const out: Record<string, string> = {};
      for (const [name, value] of Object.entries(this.ctx.request.headers)) {
        if (value === undefined) continue;
        out[name.toLowerCase().replace(/-/g, '_')] = Array.isArray(value) ? value.join(', ') : String(value);
      }
      this.headersMemo = out;
    }
    return this.headersMemo;
  }
}

function listOf(value: unknown): unknown[] {
  if (Array.isArray(value)) return [...new Set(value)];
  return value === undefined || value === null || value === '' ? [] : [value];
}

/** A value as a SQL parameter: objects as JSON text, nothing as NULL. */
function plain(value: unknown): unknown {
  if (value === undefined) return null;
  if (typeof value === 'object' && value !== null) return JSON.stringify(value);
  return value;
}

function jsTypeOf(value: unknown): ValueType {
  if (typeof value === 'number') return 'number';
  if (typeof value === 'boolean') return 'bool';
  return 'text';
}

function valueFor(ref: RequestRef, value: unknown, present: boolean, valueType: ValueType | undefined): RequestValue {
  switch (ref.modifier) {
    case 'isset':
      return { kind: 'scalar', value: present, valueType: 'bool' };
    case 'length':
      return { kind: 'scalar', value: listOf(value).length, valueType: 'number' };
    case 'each':
      return { kind: 'set', value: listOf(value).map(plain), valueType: valueType ?? 'text', each: true };
    case 'lower':
      return { kind: 'scalar', value: typeof value === 'string' ? value.toLowerCase() : plain(value), valueType: 'text' };
  }
  if (Array.isArray(value)) return { kind: 'set', value: value.map(plain), valueType: valueType ?? 'text', each: false };
  return { kind: 'scalar', value: plain(value), valueType: valueType ?? jsTypeOf(value) };
}

function relationValue(field: FieldDef, value: unknown, lookup: CollectionLookup): RequestValue {
  const target = lookup(relationTarget(field));
  if (!target) return { kind: 'scalar', value: null, valueType: 'text' };
  const ids = listOf(value).filter((v): v is string => typeof v === 'string');
  return { kind: 'relation', target, ids, multiple: typeOf(field).multiple(field) };
}

function jsonAt(value: unknown, path: string[]): unknown {
  let v = value;
  for (const key of path) {
    if (typeof v === 'string') {
      try {
        v = JSON.parse(v);
      } catch {
        return undefined;
      }
    }
    if (typeof v !== 'object' || v === null) return undefined;
    v = own(v as Record<string, unknown>, key);
  }
  return v;
}

/** Own properties only: request names never reach `constructor` or `__proto__` of a value. */
function has(obj: Record<string, unknown> | undefined, key: string): obj is Record<string, unknown> {
  return obj !== undefined && Object.prototype.hasOwnProperty.call(obj, key) && obj[key] !== undefined;
}

function own(obj: Record<string, unknown> | undefined, key: string): unknown {
  return has(obj, key) ? obj[key] : undefined;
}

/** What `ref` stands for in this request. Never throws: names were checked when the rule was saved. */
export function describe(ref: RequestRef, inputs: RequestInputs, collection: Collection, lookup: CollectionLookup): RequestValue {
  switch (ref.source) {
    case 'method':
      return valueFor(ref, inputs.method, true, 'text');
    case 'context':
      return valueFor(ref, inputs.context, true, 'text');
    case 'query': {
      const raw = has(inputs.query, ref.key) ? inputs.query[ref.key] : undefined;
      const value = Array.isArray(raw) ? raw[0] : raw;
      return valueFor(ref, value === undefined ? undefined : String(value), value !== undefined, 'text');
    }
    case 'headers': {
      const value = own(inputs.headers, ref.key.toLowerCase()) as string | undefined;
      return valueFor(ref, value, value !== undefined, 'text');
    }
    case 'body': {
      const body = inputs.body;
      const present = has(body, ref.key);
      const field = collection.fields.find((f) => f.name === ref.key);
      let value = present ? body[ref.key] : undefined;
      if (present && field) {
        // Compared as the field stores it: "3" as 3 for a number, "on" as true for a bool.
        const prepared = typeOf(field).prepare(value, field);
        if (prepared.ok) value = prepared.value;
      }
      if (ref.rest.length > 0) {
        if (field?.type === 'relation') return relationValue(field, value, lookup);
        return valueFor(ref, jsonAt(value, ref.rest), jsonAt(value, ref.rest) !== undefined, undefined);
      }
      return valueFor(ref, value, present, field ? fieldValueType(field) : undefined);
    }
    case 'auth': {
      const field = AUTH_KEY_TYPES.has(ref.key) || ref.key === 'type' || ref.key === 'roles' ? undefined : inputs.authCollection?.fields.find((f) => f.name === ref.key);
      const value = inputs.auth(ref.key);
      if (ref.rest.length > 0) {
        if (field?.type === 'relation') return relationValue(field, value, lookup);
        return { kind: 'scalar', value: null, valueType: 'text' };
      }
      return valueFor(ref, value, value !== undefined, field ? fieldValueType(field) : AUTH_KEY_TYPES.get(ref.key));
    }
  }
}

/** The value kind of `ref` without a request, from the collections alone: what saving a rule checks. */
export function describeStatically(ref: RequestRef, scope: NameScope): RequestValue {
  if (ref.rest.length > 0) {
    const start = relationStart(ref, scope);
    if (start) return { kind: 'relation', target: start.target, ids: [], multiple: typeOf(start.field).multiple(start.field) };
    return { kind: 'scalar', value: null, valueType: 'json' };
  }
  const field =
    ref.source === 'body'
      ? scope.collection.fields.find((f) => f.name === ref.key)
      : ref.source === 'auth'
        ? scope.authCollections.flatMap((c) => c.fields).find((f) => f.name === ref.key)
        : undefined;
  const multiple = (field !== undefined && typeOf(field).multiple(field)) || (ref.source === 'auth' && ref.key === 'roles');
  return valueFor(ref, multiple ? [] : undefined, false, field ? fieldValueType(field) : undefined);
}
