/**
 * PocketBase's `Record` model: a record's data, what changed since it was read (`__changes`, what a
 * save sends), its expand and what it shows a client (`hide`, `unhide`, `withCustomData`). Built per
 * runtime (`recordClass(rt)`) because reads wait for a deferred `e.next()` and some methods ask the host.
 */
import crypto from 'node:crypto';
import { Collection } from './collection.ts';
import { DateTime, GoTime } from './datetime.ts';
import { PbFile } from './file.ts';
import type { Realm } from './realm.ts';

const SYSTEM_KEYS = new Set(['collectionId', 'collectionName', 'expand']);

export function recordClass(rt: Realm) {
  class Record {
    _c: any;
    __d: any;
    __o: any;
    _dirty: Set<string>;
    __x: any;
    // Reads and writes of a record's data wait for a deferred e.next() first: it refreshes the record.
    get _d(): any {
      if (rt.deferredNext) rt.settle();
      return this.__d;
    }
    set _d(v: any) {
      this.__d = v;
    }
    get _o(): any {
      if (rt.deferredNext) rt.settle();
      return this.__o;
    }
    set _o(v: any) {
      this.__o = v;
    }
    get _expand(): any {
      if (rt.deferredNext) rt.settle();
      return this.__x;
    }
    set _expand(v: any) {
      this.__x = v;
    }
    _hidden?: Set<string>;
    _unhidden?: Set<string>;
    _custom?: boolean;
    constructor(collection?: any, data?: any) {
      this._c = collection ? { id: collection.id, name: collection.name, type: collection.type } : { id: '', name: '', type: 'base' };
      this._d = {};
      this._o = null;
      this._dirty = new Set();
      this._expand = {};
      if (data) this.load(data);
    }
    static __from(json: any, coll?: any): Record {
      const r = new Record(coll ?? { id: json.collectionId, name: json.collectionName });
      for (const [k, v] of Object.entries(json)) {
        if (k === 'expand') r._expand = v ?? {};
        else if (!SYSTEM_KEYS.has(k)) r._d[k] = v;
      }
      r._o = { ...r._d };
      return r;
    }
    __data() {
      return { ...this._d, collectionId: this._c.id, collectionName: this._c.name };
    }
    __changes() {
      const out: any = {};
      for (const k of this._dirty) out[k] = this._d[k];
      return out;
    }
    __refresh(json: any) {
      for (const [k, v] of Object.entries(json ?? {})) {
        if (k === 'expand') this._expand = v ?? {};
        else if (!SYSTEM_KEYS.has(k)) this._d[k] = v;
      }
      if (json?.collectionId) this._c.id = json.collectionId;
      this._o = { ...this._d };
      this._dirty.clear();
    }
    get id() {
      return this._d.id ?? '';
    }
    set id(v: string) {
      this.set('id', v);
    }
    get created() {
      return this._d.created;
    }
    get updated() {
      return this._d.updated;
    }
    getId() {
      return this.id;
    }
    setId(v: string) {
      this.set('id', v);
    }
    collection() {
      return new Collection(this._c);
    }
    get collectionName() {
      return this._c.name;
    }
    tableName() {
      return this._c.name;
    }
    isNew() {
      return !this._o || !this._o.id;
    }
    markAsNew() {
      this._o = null;
    }
    get(key: string) {
      const v = this._d[key];
      return v === undefined ? null : v;
    }
    set(key: string, value: any) {
      if (key.endsWith('+') || key.startsWith('+') || key.endsWith('-')) {
        const name = key.replace(/^\+|[+-]$/g, '');
        const cur = this._d[name];
        if (Array.isArray(cur)) {
          const add = Array.isArray(value) ? value : [value];
          this._d[name] = key.endsWith('-') ? cur.filter((x: any) => !add.includes(x)) : key.startsWith('+') ? [...add, ...cur] : [...cur, ...add];
        } else if ((cur === undefined || cur === null || cur === '') && (Array.isArray(value) || value instanceof PbFile || (typeof value === 'string' && isNaN(Number(value))))) {
          this._d[name] = key.endsWith('-') ? [] : Array.isArray(value) ? [...value] : [value];
        } else if (typeof cur === 'number' || cur === undefined || cur === null) {
          this._d[name] = (Number(cur) || 0) + (key.endsWith('-') ? -Number(value) : Number(value));
        } else this._d[name] = key.endsWith('-') ? cur : String(cur) + String(value);
        this._dirty.add(name);
        return;
      }
      // A time is stored as PocketBase stores a date field's value: `2006-01-02 15:04:05.000Z`.
      if (value instanceof GoTime || value instanceof DateTime) value = new DateTime(value).string();
      this._d[key] = value;
      this._dirty.add(key);
    }
    setIfFieldExists(key: string, value: any) {
      this.set(key, value);
    }
    load(data: any) {
      for (const [k, v] of Object.entries(data ?? {})) if (!SYSTEM_KEYS.has(k)) this.set(k, v);
    }
    getRaw(key: string) {
      return this.get(key);
    }
    getString(key: string) {
      const v = this._d[key];
      if (v === undefined || v === null) return '';
      return typeof v === 'object' ? JSON.stringify(v) : String(v);
    }
    getInt(key: string) {
      const n = Number(this._d[key]);
      return Number.isFinite(n) ? Math.trunc(n) : 0;
    }
    getFloat(key: string) {
      const n = Number(this._d[key]);
      return Number.isFinite(n) ? n : 0;
    }
    getBool(key: string) {
      const v = this._d[key];
      return v === true || v === 1 || v === 'true' || v === '1';
    }
    getStringSlice(key: string) {
      const v = this._d[key];
      if (v === undefined || v === null || v === '') return [];
      return Array.isArray(v) ? v.map(String) : [String(v)];
    }
    getDateTime(key: string) {
      return new DateTime(this._d[key] || '');
    }
    getGeoPoint(key: string) {
      return this._d[key] ?? { lon: 0, lat: 0 };
    }
    unmarshalJSONField(key: string, out: any) {
      const v = this._d[key];
      const parsed = typeof v === 'string' ? JSON.parse(v || 'null') : v;
      if (out && typeof out === 'object' && parsed && typeof parsed === 'object') Object.assign(out, parsed);
      return parsed;
    }
    email() {
      return this.getString('email');
    }
    setEmail(v: string) {
      this.set('email', v);
    }
    username() {
      return this.getString('username');
    }
    setUsername(v: string) {
      this.set('username', v);
    }
    verified() {
      return this.getBool('verified');
    }
    setVerified(v: boolean) {
      this.set('verified', !!v);
    }
    emailVisibility() {
      return this.getBool('emailVisibility');
    }
    setEmailVisibility(v: boolean) {
      this.set('emailVisibility', !!v);
    }
    /** Go's `SetPassword(string)`: goja hands it a number as its text (`setPassword(1234567890)`). */
    setPassword(v: unknown) {
      const text = v === null || v === undefined ? '' : String(v);
      this.set('password', text);
      this.set('passwordConfirm', text);
    }
    setRandomPassword() {
      const p = crypto.randomBytes(24).toString('base64url');
      this.setPassword(p);
      return p;
    }
    validatePassword(p: string) {
      return !!rt.call('validatePassword', this._c.name, this.id, p);
    }
    tokenKey() {
      return this.getString('tokenKey');
    }
    refreshTokenKey() {}
    isSuperuser() {
      return this._c.name === '_superusers';
    }
    original() {
      const r = new Record(this._c, null);
      r._d = { ...(this._o ?? {}) };
      r._o = { ...(this._o ?? {}) };
      return r;
    }
    originalCopy() {
      return this.original();
    }
    fresh() {
      return this.clone();
    }
    clone() {
      const r = new Record(this._c);
      r._d = { ...this._d };
      r._o = this._o ? { ...this._o } : null;
      r._expand = { ...this._expand };
      return r;
    }
    expandedOne(name: string) {
      const v = this._expand?.[name];
      if (!v) return null;
      const one = Array.isArray(v) ? v[0] : v;
      return one ? Record.__from(one) : null;
    }
    expandedAll(name: string) {
      const v = this._expand?.[name];
      if (!v) return [];
      return (Array.isArray(v) ? v : [v]).map((x: any) => Record.__from(x));
    }
    expand() {
      return this._expand;
    }
    setExpand(v: any) {
      this._expand = v ?? {};
    }
    mergeExpand(v: any) {
      Object.assign(this._expand, v ?? {});
    }
    publicExport() {
      const out: any = { collectionId: this._c.id, collectionName: this._c.name };
      const known = this._o;
      for (const [k, v] of Object.entries(this._d)) {
        if (this._hidden?.has(k)) continue;
        if (known && !(k in known) && !this._custom && !this._unhidden?.has(k)) continue;
        out[k] = v;
      }
      if (this._expand && Object.keys(this._expand).length) out.expand = this._expand;
      return out;
    }
    toJSON() {
      return this.publicExport();
    }
    /** Keys left out of what leaves for the client (PocketBase's `hide`). */
    hide(...names: any[]) {
      this._hidden ??= new Set();
      for (const n of names.flat()) {
        this._hidden.add(String(n));
        this._unhidden?.delete(String(n));
      }
      return this;
    }
    /** Hidden fields shown again: their values are read when the record does not hold them. */
    unhide(...names: any[]) {
      this._unhidden ??= new Set();
      const missing: string[] = [];
      for (const n of names.flat().map(String)) {
        this._unhidden.add(n);
        this._hidden?.delete(n);
        if (!(n in this._d)) missing.push(n);
      }
      if (missing.length && this.id && this._c.name) {
        const full = rt.call('findById', this._c.name, this.id) ?? {};
        for (const n of missing) if (n in full) this.set(n, full[n]);
      }
      return this;
    }
    /** Whether keys that are no field of the collection leave with the record. */
    withCustomData(on: any = true) {
      this._custom = !!on;
      return this;
    }
    __delta() {
      return { changes: this.__changes(), hidden: [...(this._hidden ?? [])], unhidden: [...(this._unhidden ?? [])], custom: !!this._custom };
    }
    ignoreEmailVisibility() {
      return this;
    }
    baseFilesPath() {
      return `${this._c.id}/${this.id}`;
    }
  }
  return Record;
}

export type RecordClass = ReturnType<typeof recordClass>;
export type PbRecord = InstanceType<RecordClass>;
