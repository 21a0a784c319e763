/**
 * PocketBase's schema API as migrations (and hooks) use it: the field constructors of ≥ 0.23
 * (`new TextField({...})`, `new Field({type: …})`), the fields list of a collection (`add`, `addAt`,
 * `getByName`, `removeById`, …) and v0.22's `schema` over the same list (`addField`, `removeField`,
 * `getFieldById`), `new SchemaField`, `unmarshal(data, target)`, v0.22's `Dao(db)` and `Admin`.
 * Pure data: saving is `$app`'s (app.ts).
 */
import type { Realm } from './realm.ts';

/** A field definition: its own keys as given (flat, ≥ 0.23, or with v0.22's `options`). */
export class Field {
  [key: string]: any;
  constructor(data: any = {}) {
    Object.assign(this, data ?? {});
  }
}

function typed(type: string, name: string) {
  return {
    [name]: class extends Field {
      constructor(data: any = {}) {
        super({ ...data, type });
      }
    },
  }[name];
}

/** ≥ 0.23's constructors, by global name. */
export const FIELD_CLASSES: Record<string, typeof Field> = {
  Field,
  TextField: typed('text', 'TextField'),
  NumberField: typed('number', 'NumberField'),
  BoolField: typed('bool', 'BoolField'),
  EmailField: typed('email', 'EmailField'),
  URLField: typed('url', 'URLField'),
  EditorField: typed('editor', 'EditorField'),
  DateField: typed('date', 'DateField'),
  AutodateField: typed('autodate', 'AutodateField'),
  SelectField: typed('select', 'SelectField'),
  FileField: typed('file', 'FileField'),
  RelationField: typed('relation', 'RelationField'),
  JSONField: typed('json', 'JSONField'),
  PasswordField: typed('password', 'PasswordField'),
  GeoPointField: typed('geoPoint', 'GeoPointField'),
  SchemaField: Field,
};

const asField = (f: any) => (f instanceof Field ? f : new Field(f));

/** A collection's fields (PocketBase's `FieldsList`): an array with PocketBase's methods. */
export class FieldsList extends Array<any> {
  static override get [Symbol.species]() {
    return Array;
  }
  static make(list: any): FieldsList {
    const out = new FieldsList();
    for (const f of Array.isArray(list) ? list : []) out.push(asField(f));
    return out;
  }
  private at_(f: any): number {
    const id = f?.id;
    if (typeof id === 'string' && id !== '') return this.findIndex((x) => sameId(x.id, id));
    return typeof f?.name === 'string' ? this.findIndex((x) => x.name === f.name && (x.id === undefined || x.id === '')) : -1;
  }
  /** Adds fields, each replacing the field of the same id (or, without one, of the same name). */
  add(...fields: any[]): void {
    for (const f of fields.flat()) {
      const i = this.at_(f);
      if (i >= 0) this[i] = replacing(this[i], f);
      else this.push(asField(f));
    }
  }
  /** As `add`, a new field going to `pos` (an existing one keeps its place). */
  addAt(pos: number, ...fields: any[]): void {
    let at = Math.max(0, Math.min(Number(pos) || 0, this.length));
    for (const f of fields.flat()) {
      const i = this.at_(f);
      if (i >= 0) this[i] = replacing(this[i], f);
      else this.splice(at++, 0, asField(f));
    }
  }
  addMarshaledJSON(json: any): void {
    const data = typeof json === 'string' ? JSON.parse(json) : json;
    this.add(...(Array.isArray(data) ? data : [data]));
  }
  getById(id: string): any {
    return this.find((f) => sameId(f.id, id));
  }
  getByName(name: string): any {
    return this.find((f) => f.name === name);
  }
  removeById(id: string): void {
    const i = this.findIndex((f) => sameId(f.id, id));
    if (i >= 0) this.splice(i, 1);
  }
  removeByName(name: string): void {
    const i = this.findIndex((f) => f.name === name);
    if (i >= 0) this.splice(i, 1);
  }
  fieldNames(): string[] {
    return this.map((f) => f.name);
  }
  asMap(): Record<string, any> {
    return Object.fromEntries(this.map((f) => [f.name, f]));
  }
  clone(): FieldsList {
    return FieldsList.make(JSON.parse(JSON.stringify([...this])));
  }
}

/**
 * The default `users` fields under both generations' ids: v0.22 named them `users_name` and
 * `users_avatar`, ≥ 0.23 (and Cairn's new databases) `text1579384326` and `file376926767`, so a v0.22
 * file changing `users_name` changes the field `name` there is.
 */
const ID_ALIASES: Record<string, string> = { users_name: 'text1579384326', text1579384326: 'users_name', users_avatar: 'file376926767', file376926767: 'users_avatar' };
const sameId = (a: unknown, b: string) => a === b || (typeof a === 'string' && ID_ALIASES[a] === b);

/** A field replaced by `f`: it keeps the id it has (the same field under the other generation's id). */
function replacing(old: any, f: any): any {
  const next = asField(f);
  if (old?.id && next.id !== old.id) next.id = old.id;
  return next;
}

/** v0.22's `collection.schema`, over the collection's fields. */
export function schemaOf(fields: () => FieldsList) {
  return {
    fields: () => [...fields()],
    addField: (f: any) => fields().add(f),
    removeField: (id: string) => fields().removeById(id),
    getFieldById: (id: string) => fields().getById(id) ?? null,
    getFieldByName: (name: string) => fields().getByName(name) ?? null,
    asMap: () => fields().asMap(),
    clone: () => schemaOf(() => fields().clone()),
    toJSON: () => [...fields()],
  };
}

/**
 * `unmarshal(data, target)`: the data's keys set on the target, as PocketBase decodes JSON into a
 * model (a collection's fields become its fields list).
 */
export function unmarshal(data: any, target: any): any {
  const values = typeof data === 'string' ? JSON.parse(data) : data;
  if (!target || typeof target !== 'object' || !values || typeof values !== 'object') return target;
  for (const [k, v] of Object.entries(values)) {
    // An object into an object is merged, as Go decodes JSON into a struct or map it has (a
    // migration's `unmarshal({verificationTemplate: {subject}}, collection)` keeps the body).
    if (typeof target.__load === 'function') target.__load({ [k]: k !== 'fields' && k !== 'schema' && isPlain(v) && isPlain(target[k]) ? merged(target[k], v) : v });
    else target[k] = v;
  }
  return target;
}

const isPlain = (v: unknown): v is Record<string, any> => typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof Field);

function merged(into: Record<string, any>, from: Record<string, any>): Record<string, any> {
  const out: Record<string, any> = { ...into };
  for (const [k, v] of Object.entries(from)) out[k] = isPlain(v) && isPlain(out[k]) ? merged(out[k], v) : v;
  return out;
}

/** v0.22's `Admin` model (`dao.saveAdmin(admin)`). */
export class Admin {
  id = '';
  email = '';
  avatar = 0;
  password?: string;
  constructor(data: any = {}) {
    Object.assign(this, data ?? {});
  }
  setPassword(password: string): void {
    this.password = String(password);
  }
  validatePassword(): boolean {
    return false;
  }
}

/**
 * v0.22's `Dao(db)` (and `new Dao(db)`): the app's dao, whatever handle it is given (a migration's
 * `db` is the file's transaction already), with the calls migrations make that hooks do not.
 */
export function daoApi(rt: Realm, dao: any, save: (m: any) => void, del: (m: any) => void) {
  const call = rt.call;
  const extra = {
    importCollections: (list: any[], deleteMissing = false) => {
      call('importCollections', (list ?? []).map((c: any) => (typeof c?.__body === 'function' ? c.__body() : c)), deleteMissing === true);
    },
    findSettings: () => rt.inner(call('settings')),
    // Unvalidated, as v0.22's dao writes them (`$app.save(settings)` of ≥ 0.23 validates).
    saveSettings: (settings: any) => void call('saveSettings', settings, false),
    saveAdmin: (admin: any) => {
      const saved = call('saveAdmin', { email: admin?.email, password: admin?.password });
      if (admin && typeof admin === 'object' && saved?.id) admin.id = saved.id;
    },
    findAdminByEmail: (email: string) => new Admin(call('findAdminByEmail', email)),
    deleteAdmin: (admin: any) => void call('deleteAdmin', admin?.email ?? admin),
    saveRecord: save,
    deleteRecord: del,
  };
  const full = Object.assign(Object.create(dao), extra);
  function Dao(this: any) {
    return full;
  }
  return { Dao, full };
}

/** The globals of this module: the field constructors, `unmarshal`, `Admin` and `Dao`. */
export function schemaGlobals(rt: Realm, app: { dao: any; save: (m: any) => void; del: (m: any) => void }): Record<string, unknown> {
  const { Dao } = daoApi(rt, app.dao, app.save, app.del);
  return { ...FIELD_CLASSES, unmarshal, Admin, Dao };
}
