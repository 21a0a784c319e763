/**
 * The code of a pb_hooks worker thread (API contract §22). It is started as `eval` source
 * (`(${workerMain})()`), so it must be self-contained: no imports, only `require` of Node built-ins.
 *
 * The worker evaluates every `*.pb.js` file in one `node:vm` context holding PocketBase's globals,
 * collecting what they register. The main thread then runs a handler by its index; what the handler
 * asks of `$app` (reads, writes, `e.next()`, `$http.send`) is posted to the main thread, and the
 * worker waits on a shared integer (`Atomics.wait`) until the answer is on its port: the handler's
 * calls are synchronous, as in PocketBase's goja, and only this thread blocks.
 */
/* eslint-disable */
/** gotemplate.ts's `goTemplate`, put beside this function in the worker's source. */
declare const __goTemplate: () => any;

export function workerMain(): void {
  const { parentPort, workerData, receiveMessageOnPort } = require('node:worker_threads');
  const vm = require('node:vm');
  const fs = require('node:fs');
  const nodePath = require('node:path');
  const crypto = require('node:crypto');
  const { files, hooksDir, shared, port, sources } = workerData as { files: string[]; hooksDir: string; shared: SharedArrayBuffer; port: any; sources?: boolean };
  /** [0]: 1 once the main thread's answer is ready, [1]: its length after these 8 bytes, or -1 when it is on the port. */
  const flag = new Int32Array(shared, 0, 2);
  const sleeper = new Int32Array(new SharedArrayBuffer(4));

  // ---- the channel to the main thread ----
  /**
   * An `e.next()` not done yet. A handler that does nothing after `e.next()` but return needs no
   * answer from it, so the write is left to the main thread once the handler has ended: one thread
   * crossing instead of three (docs/performance.md). Whatever needs the write's outcome first (an
   * `$app` call, a record read, a file written) does it then, synchronously, as `e.next()` would have.
   */
  let deferredNext: null | (() => void) = null;
  function settle(): void {
    const run = deferredNext;
    if (!run) return;
    deferredNext = null;
    run();
  }
  function call(op: string, ...args: any[]): any {
    settle();
    Atomics.store(flag, 0, 0);
    parentPort.postMessage({ type: 'call', op, args: plain(args) });
    Atomics.wait(flag, 0, 0);
    const length = Atomics.load(flag, 1);
    let text: string;
    if (length >= 0) text = Buffer.from(shared, 8, length).toString('utf8');
    else {
      let msg = receiveMessageOnPort(port);
      // Now and then (2 in 300,000 calls measured on Node 20) the wake-up comes before the answer is
      // on the port: wait for it a little rather than fail the handler.
      for (let i = 0; !msg && i < 5000; i++) {
        Atomics.wait(sleeper, 0, 0, i < 100 ? 0.05 : 1);
        msg = receiveMessageOnPort(port);
      }
      if (!msg) throw new Error(`pb_hooks: no answer to ${op}`);
      text = msg.message;
    }
    const res = ctxJSON.parse(text);
    if (res.error) throw revive(res.error);
    return res.value;
  }
  /** Values to post: Records as their data, the rest through JSON (drops functions). */
  function plain(v: any): any {
    return v === undefined ? undefined : JSON.parse(JSON.stringify(v, (_k, x) => (x instanceof Record ? x.__data() : x)) ?? 'null');
  }

  const context: any = vm.createContext({});
  const ctxJSON = vm.runInContext('JSON', context);
  /** A value from the main thread as an object of the hooks' realm (so `instanceof Array` holds). */
  function inner(v: any): any {
    return v === undefined ? undefined : ctxJSON.parse(JSON.stringify(v));
  }

  // ---- errors ----
  class ApiError extends Error {
    status: number;
    data: any;
    constructor(status = 400, message = 'Something went wrong while processing your request.', data: any = {}) {
      super(typeof message === 'string' ? message : String(message));
      this.status = status;
      this.data = data ?? {};
    }
  }
  const errorClass = (name: string, status: number, fallback: string) =>
    ({
      [name]: class extends ApiError {
        constructor(message?: string, data?: any) {
          super(status, message || fallback, data);
          this.name = name;
        }
      },
    })[name];
  const BadRequestError = errorClass('BadRequestError', 400, 'Something went wrong while processing your request.');
  const UnauthorizedError = errorClass('UnauthorizedError', 401, 'The request requires valid authorization token.');
  const ForbiddenError = errorClass('ForbiddenError', 403, 'You are not allowed to perform this request.');
  const NotFoundError = errorClass('NotFoundError', 404, "The requested resource wasn't found.");
  const TooManyRequestsError = errorClass('TooManyRequestsError', 429, 'Too Many Requests.');
  const InternalServerError = errorClass('InternalServerError', 500, 'Something went wrong while processing your request.');
  function revive(e: any): Error {
    if (e.status) return new ApiError(e.status, e.message, e.data);
    const err = new Error(e.message);
    return err;
  }
  function serialize(err: any): any {
    if (err && typeof err === 'object' && typeof err.status === 'number' && err.status >= 400) return { status: err.status, message: String(err.message ?? ''), data: err.data ?? {} };
    if (err && typeof err === 'object' && typeof err.code === 'number' && err.code >= 400 && err.code < 600) return { status: err.code, message: String(err.message ?? ''), data: err.data ?? {} };
    return { message: err instanceof Error || (err && err.message) ? String(err.message) : String(err), stack: err && err.stack ? String(err.stack) : undefined };
  }

  // ---- models ----
  class Collection {
    id: string;
    name: string;
    type: string;
    fields: any[];
    /** Read from the database (found by the app), so `$app.save` changes it rather than creating one. */
    __stored = false;
    constructor(c: any = {}) {
      this.__load(c);
      this.id = c.id ?? '';
      this.name = c.name ?? '';
      this.type = c.type ?? 'base';
      this.fields = c.fields ?? (Array.isArray(c.schema) ? c.schema : []);
    }
    static __found(c: any): Collection {
      const found = new Collection(c);
      found.__stored = true;
      return found;
    }
    /** Rules, indexes, auth options… as given: `$app.save(collection)` sends them all. v0.22 named the fields `schema` (a getter here). */
    __load(c: any) {
      for (const [k, v] of Object.entries(c ?? {})) if (k !== 'schema') (this as any)[k] = v;
    }
    /** The collection as the collections API takes it. */
    __body() {
      const { __stored, ...body } = this as any;
      return plain(body);
    }
    isAuth() {
      return this.type === 'auth';
    }
    isBase() {
      return this.type === 'base';
    }
    isView() {
      return this.type === 'view';
    }
    get schema() {
      return { fields: () => this.fields, getFieldByName: (n: string) => this.fields.find((f) => f.name === n) };
    }
  }
  const SYSTEM_KEYS = new Set(['collectionId', 'collectionName', 'expand']);
  class Record {
    _c: any;
    __d: any;
    __o: any;
    _dirty: Set<string>;
    __x: any;
    // Reads and writes of a record's data wait for a deferred e.next() first: it refreshes the record.
    get _d(): any {
      if (deferredNext) settle();
      return this.__d;
    }
    set _d(v: any) {
      this.__d = v;
    }
    get _o(): any {
      if (deferredNext) settle();
      return this.__o;
    }
    set _o(v: any) {
      this.__o = v;
    }
    get _expand(): any {
      if (deferredNext) settle();
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
    setPassword(v: string) {
      this.set('password', v);
      this.set('passwordConfirm', v);
    }
    setRandomPassword() {
      const p = crypto.randomBytes(24).toString('base64url');
      this.setPassword(p);
      return p;
    }
    validatePassword(p: string) {
      return !!call('validatePassword', this._c.name, this.id, p);
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
        const full = call('findById', this._c.name, this.id) ?? {};
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
  // ---- times: PocketBase's types.DateTime and the Go time.Time its time() gives ----
  /** Go's zero time (0001-01-01 00:00:00 UTC) in milliseconds since the epoch. */
  const ZERO_MS = -62135596800000;
  const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
  const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
  const pad = (n: number, w = 2) => String(Math.abs(n)).padStart(w, '0');
  /** A time given to DateTime as milliseconds (ZERO_MS when zero or not a time), as PocketBase's ParseDateTime. */
  function msOf(v: any): number {
    if (v === undefined || v === null || v === '') return ZERO_MS;
    if (v instanceof GoTime) return v._ms;
    if (v instanceof DateTime) return v._ms;
    // A JS Date (of the hooks' realm too, so no instanceof).
    if (Object.prototype.toString.call(v) === '[object Date]') return Number.isNaN(v.getTime()) ? ZERO_MS : v.getTime();
    // Go's cast.ToTime of an integer: seconds since the epoch.
    if (typeof v === 'number') return Number.isFinite(v) ? Math.trunc(v) * 1000 : ZERO_MS;
    let s = String(v).trim();
    // PocketBase's layout (`2006-01-02 15:04:05.000Z`) and zone-less times are UTC.
    if (/^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d+)?)?$/.test(s)) s += 'Z';
    const ms = Date.parse(s.replace(/^(\d{4}-\d{2}-\d{2}) /, '$1T'));
    return Number.isNaN(ms) ? ZERO_MS : ms;
  }
  /** PocketBase's DefaultDateLayout: `2006-01-02 15:04:05.000Z`, in UTC. */
  const pbLayout = (ms: number) => new Date(ms).toISOString().replace('T', ' ');
  /** Go's time.Format for the layout elements apps use, in UTC. */
  function goFormat(ms: number, layout: string): string {
    const d = new Date(ms);
    const Y = d.getUTCFullYear(), M = d.getUTCMonth(), D = d.getUTCDate(), h = d.getUTCHours(), m = d.getUTCMinutes(), s = d.getUTCSeconds(), f = d.getUTCMilliseconds();
    const frac = (digits: number, trim: boolean) => {
      let x = (String(f).padStart(3, '0') + '000000').slice(0, digits);
      if (trim) x = x.replace(/0+$/, '');
      return x ? `.${x}` : '';
    };
    const tokens: [RegExp, () => string][] = [
      [/^January/, () => MONTHS[M]],
      [/^Jan/, () => MONTHS[M].slice(0, 3)],
      [/^Monday/, () => DAYS[d.getUTCDay()]],
      [/^Mon/, () => DAYS[d.getUTCDay()].slice(0, 3)],
      [/^MST/, () => 'UTC'],
      [/^2006/, () => pad(Y, 4)],
      [/^Z07:00/, () => 'Z'],
      [/^Z0700/, () => 'Z'],
      [/^Z07/, () => 'Z'],
      [/^-07:00/, () => '+00:00'],
      [/^-0700/, () => '+0000'],
      [/^-07/, () => '+00'],
      [/^15/, () => pad(h)],
      [/^01/, () => pad(M + 1)],
      [/^02/, () => pad(D)],
      [/^_2/, () => String(D).padStart(2, ' ')],
      [/^03/, () => pad(h % 12 || 12)],
      [/^04/, () => pad(m)],
      [/^05/, () => pad(s)],
      [/^06/, () => pad(Y % 100)],
      [/^002/, () => pad(Math.floor((Date.UTC(Y, M, D) - Date.UTC(Y, 0, 1)) / 864e5) + 1, 3)],
      [/^PM/, () => (h >= 12 ? 'PM' : 'AM')],
      [/^pm/, () => (h >= 12 ? 'pm' : 'am')],
      [/^1/, () => String(M + 1)],
      [/^2/, () => String(D)],
      [/^3/, () => String(h % 12 || 12)],
      [/^4/, () => String(m)],
      [/^5/, () => String(s)],
    ];
    let out = '';
    let rest = String(layout);
    outer: while (rest) {
      // Fractional seconds: `.000` (fixed digits) or `.999` (trailing zeros dropped).
      const fm = /^[.,](0+|9+)(?!\d)/.exec(rest);
      if (fm) {
        out += frac(fm[1].length, fm[1][0] === '9').replace('.', rest[0]);
        rest = rest.slice(fm[0].length);
        continue;
      }
      for (const [re, fn] of tokens) {
        const t = re.exec(rest);
        if (t) {
          out += fn();
          rest = rest.slice(t[0].length);
          continue outer;
        }
      }
      out += rest[0];
      rest = rest.slice(1);
    }
    return out;
  }
  /** Go's time.Time (what `DateTime.time()` gives), always in UTC; durations are nanoseconds, as Go's. */
  class GoTime {
    _ms: number;
    constructor(ms: number) {
      this._ms = ms;
    }
    addDate(years = 0, months = 0, days = 0) {
      // Date.UTC normalizes overflow (Jan 31 + 1 month = Mar 2 or 3) as Go's AddDate does.
      const d = new Date(this._ms);
      d.setUTCFullYear(d.getUTCFullYear() + Number(years), d.getUTCMonth() + Number(months), d.getUTCDate() + Number(days));
      return new GoTime(d.getTime());
    }
    add(ns: any) {
      return new GoTime(this._ms + Math.round(Number(ns) / 1e6));
    }
    sub(t: any) {
      return (this._ms - msOf(t)) * 1e6;
    }
    truncate(ns: any) {
      const step = Number(ns) / 1e6;
      return step > 0 ? new GoTime(this._ms - (((this._ms - ZERO_MS) % step) + step) % step) : this;
    }
    unix() {
      return Math.floor(this._ms / 1000);
    }
    unixMilli() {
      return this._ms;
    }
    unixMicro() {
      return this._ms * 1000;
    }
    unixNano() {
      return this._ms * 1e6;
    }
    isZero() {
      return this._ms === ZERO_MS;
    }
    before(t: any) {
      return this._ms < msOf(t);
    }
    after(t: any) {
      return this._ms > msOf(t);
    }
    equal(t: any) {
      return this._ms === msOf(t);
    }
    compare(t: any) {
      return Math.sign(this._ms - msOf(t));
    }
    utc() {
      return this;
    }
    local() {
      return this;
    }
    year() {
      return new Date(this._ms).getUTCFullYear();
    }
    month() {
      return new Date(this._ms).getUTCMonth() + 1;
    }
    day() {
      return new Date(this._ms).getUTCDate();
    }
    hour() {
      return new Date(this._ms).getUTCHours();
    }
    minute() {
      return new Date(this._ms).getUTCMinutes();
    }
    second() {
      return new Date(this._ms).getUTCSeconds();
    }
    nanosecond() {
      return new Date(this._ms).getUTCMilliseconds() * 1e6;
    }
    weekday() {
      return new Date(this._ms).getUTCDay();
    }
    yearDay() {
      const d = new Date(this._ms);
      return Math.floor((Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()) - Date.UTC(d.getUTCFullYear(), 0, 1)) / 864e5) + 1;
    }
    format(layout?: string) {
      // Go requires a layout; without one, RFC 3339 rather than the word "undefined".
      return goFormat(this._ms, layout === undefined || layout === null ? '2006-01-02T15:04:05Z07:00' : String(layout));
    }
    /** Go's String(): `2006-01-02 15:04:05.999999999 -0700 MST`. */
    string() {
      return goFormat(this._ms, '2006-01-02 15:04:05.999999999 -0700 MST');
    }
    toString() {
      return this.string();
    }
    /** Go's MarshalJSON (RFC 3339): what a record field set to it, or an answer holding it, receives. */
    toJSON() {
      return goFormat(this._ms, '2006-01-02T15:04:05.999999999Z07:00');
    }
  }
  /** PocketBase's types.DateTime: a UTC time, zero when empty; its string is `2006-01-02 15:04:05.000Z`. */
  class DateTime {
    _ms: number;
    constructor(v?: any) {
      this._ms = v === undefined ? Date.now() : msOf(v);
    }
    string() {
      return this.isZero() ? '' : pbLayout(this._ms);
    }
    toString() {
      return this.string();
    }
    toJSON() {
      return this.string();
    }
    isZero() {
      return this._ms === ZERO_MS;
    }
    time() {
      return new GoTime(this._ms);
    }
    unix() {
      return Math.floor(this._ms / 1000);
    }
    add(ns: any) {
      return new DateTime(this.time().add(ns));
    }
    addDate(years = 0, months = 0, days = 0) {
      return new DateTime(this.time().addDate(years, months, days));
    }
    sub(t: any) {
      return this.time().sub(t);
    }
    before(t: any) {
      return this.time().before(t);
    }
    after(t: any) {
      return this.time().after(t);
    }
    equal(t: any) {
      return this.time().equal(t);
    }
    compare(t: any) {
      return this.time().compare(t);
    }
  }
  class DynamicModel {
    constructor(shape: any = {}) {
      Object.assign(this, shape);
    }
  }
  function arrayOf(model: any) {
    const arr: any = [];
    Object.defineProperty(arr, '__model', { value: model, enumerable: false });
    return arr;
  }
  /** A row into a model's shape: the model's values say the types (0 → number, false → boolean). */
  function fill(model: any, row: any) {
    const out: any = model instanceof DynamicModel ? new DynamicModel({}) : {};
    const shape = model ?? {};
    const keys = Object.keys(shape).length ? Object.keys(shape) : Object.keys(row);
    for (const k of keys) {
      let v = row[k];
      const z = shape[k];
      if (typeof z === 'number') v = v === null || v === undefined ? 0 : Number(v);
      else if (typeof z === 'boolean') v = v === true || v === 1 || v === '1' || v === 'true' || v === 't';
      else if (typeof z === 'string') v = v === null || v === undefined ? '' : typeof v === 'object' ? JSON.stringify(v) : String(v);
      else if (z && typeof z === 'object' && typeof v === 'string') {
        try {
          v = JSON.parse(v);
        } catch {}
      }
      out[k] = v;
    }
    return out;
  }

  // ---- $app ----
  const collectionCache = new Map<string, any>();
  /** The API generation of the file whose handler runs now. */
  let runningGen = 23;
  function collectionOf(nameOrId: any): any {
    if (nameOrId && typeof nameOrId === 'object') return { id: nameOrId.id, name: nameOrId.name, type: nameOrId.type };
    return { id: '', name: String(nameOrId), type: 'base' };
  }
  const asRecord = (json: any) => (json ? Record.__from(json) : json);
  /** dbx binds a Go nil, which an undefined value of a JS object is: NULL, not a missing parameter. */
  function bindInto(target: any, params: any): void {
    for (const [k, v] of Object.entries(params ?? {})) target[k] = v === undefined ? null : v;
  }
  class Query {
    _sql: string;
    _params: any = {};
    constructor(sql: string) {
      this._sql = sql;
    }
    bind(params: any) {
      bindInto(this._params, params);
      return this;
    }
    execute() {
      return call('sql', this._sql, this._params, 'execute');
    }
    all(out: any) {
      const rows = call('sql', this._sql, this._params, 'all') as any[];
      const model = out?.__model;
      if (Array.isArray(out)) {
        out.length = 0;
        for (const row of rows) out.push(model ? fill(model, row) : row);
        return out;
      }
      return rows;
    }
    one(out: any) {
      const rows = call('sql', this._sql, this._params, 'one') as any[];
      if (rows.length === 0) throw new Error('sql: no rows in result set');
      if (out && typeof out === 'object') Object.assign(out, fill(out, rows[0]));
      return out;
    }
    column(out?: any) {
      const rows = call('sql', this._sql, this._params, 'all') as any[];
      const vals = rows.map((r) => Object.values(r)[0]);
      if (Array.isArray(out)) {
        out.length = 0;
        out.push(...vals);
        return out;
      }
      return vals;
    }
    row(...outs: any[]) {
      const rows = call('sql', this._sql, this._params, 'one') as any[];
      return rows[0] ? Object.values(rows[0]) : outs;
    }
  }
  // ---- dbx: PocketBase's query builder, as SQL text with {:name} placeholders run through `sql` ----
  /** An expression: `build` writes its SQL and puts its values in `params`. */
  class DbxExp {
    constructor(readonly build: (params: any) => string) {}
  }
  let dbxCounter = 0;
  /** A value as a fresh placeholder. */
  const ph = (params: any, v: any) => {
    const name = `dbx_p${dbxCounter++}`;
    params[name] = v;
    return `{:${name}}`;
  };
  /** `title`, `p.title`, `p.title AS t` quoted as identifiers; anything else (functions, `*`) as written. */
  function quoteName(name: any): string {
    const s = String(name).trim();
    const part = (x: string) => (x === '*' ? x : `"${x.replace(/"/g, '""')}"`);
    const ident = /^[A-Za-z_][\w]*(\.([A-Za-z_][\w]*|\*))*$/;
    if (ident.test(s)) return s.split('.').map(part).join('.');
    const m = /^(.+?)\s+(?:as\s+)?([A-Za-z_]\w*)$/i.exec(s);
    if (m && ident.test(m[1])) return `${quoteName(m[1])} AS ${part(m[2])}`;
    return s;
  }
  const built = (e: any, params: any): string => {
    if (e === null || e === undefined || e === '') return '';
    if (e instanceof DbxExp) return e.build(params);
    if (typeof e === 'string') return e;
    if (typeof e === 'object') return hashBuild(e, params);
    throw new TypeError('$dbx: not an expression');
  };
  function hashBuild(o: any, params: any): string {
    return Object.keys(o)
      .sort()
      .map((k) => {
        const v = o[k];
        if (v === null || v === undefined) return `${quoteName(k)} IS NULL`;
        if (Array.isArray(v)) return inBuild(k, v, params, false);
        if (v instanceof DbxExp) return `${quoteName(k)}=${v.build(params)}`;
        return `${quoteName(k)}=${ph(params, v)}`;
      })
      .join(' AND ');
  }
  function inBuild(col: string, values: any[], params: any, not: boolean): string {
    const vs = values.flat();
    if (vs.length === 0) return not ? '' : '0=1';
    if (vs.length === 1 && (vs[0] === null || vs[0] === undefined)) return `${quoteName(col)} IS ${not ? 'NOT ' : ''}NULL`;
    return `${quoteName(col)} ${not ? 'NOT IN' : 'IN'} (${vs.map((v) => ph(params, v)).join(', ')})`;
  }
  const joined = (op: string, list: any[]) =>
    new DbxExp((params) => {
      const parts = list.flat().map((e) => built(e, params)).filter((x) => x !== '');
      return parts.length === 1 ? parts[0] : parts.map((x) => `(${x})`).join(` ${op} `);
    });
  const likeEsc = (v: any) => String(v).replace(/\\/g, '\\\\').replace(/%/g, '\\%').replace(/_/g, '\\_');
  const like = (not: boolean, or: boolean) => (col: string, ...values: any[]) => {
    const exp: any = new DbxExp((params) =>
      values
        .flat()
        .map((v) => `${quoteName(col)} ${not ? 'NOT LIKE' : 'LIKE'} ${ph(params, exp._l + likeEsc(v) + exp._r)} ESCAPE '\\'`)
        .join(or ? ' OR ' : ' AND '),
    );
    exp._l = '%';
    exp._r = '%';
    // dbx's Match(left, right): whether the value is wrapped in % on each side.
    exp.match = (l: boolean, r: boolean) => {
      exp._l = l ? '%' : '';
      exp._r = r ? '%' : '';
      return exp;
    };
    return exp;
  };
  const $dbx = {
    exp: (e: string, params?: any) =>
      new DbxExp((out) => {
        Object.assign(out, params ?? {});
        return String(e);
      }),
    hashExp: (o: any) => new DbxExp((params) => hashBuild(o ?? {}, params)),
    not: (e: any) => new DbxExp((params) => {
      const x = built(e, params);
      return x === '' ? '' : `NOT (${x})`;
    }),
    and: (...a: any[]) => joined('AND', a),
    or: (...a: any[]) => joined('OR', a),
    in: (col: string, ...values: any[]) => new DbxExp((params) => inBuild(col, values, params, false)),
    notIn: (col: string, ...values: any[]) => new DbxExp((params) => inBuild(col, values, params, true)),
    like: like(false, false),
    notLike: like(true, false),
    orLike: like(false, true),
    orNotLike: like(true, true),
    exists: (e: any) => new DbxExp((params) => `EXISTS (${built(e, params)})`),
    notExists: (e: any) => new DbxExp((params) => `NOT EXISTS (${built(e, params)})`),
    between: (col: string, from: any, to: any) => new DbxExp((params) => `${quoteName(col)} BETWEEN ${ph(params, from)} AND ${ph(params, to)}`),
    notBetween: (col: string, from: any, to: any) => new DbxExp((params) => `${quoteName(col)} NOT BETWEEN ${ph(params, from)} AND ${ph(params, to)}`),
  };
  /** `$app.db().select(…)`: dbx's SelectQuery. */
  class SelectQuery {
    _cols: string[] = [];
    _distinct = false;
    _from: string[] = [];
    _joins: { kind: string; table: string; on: any }[] = [];
    _where: any = null;
    _group: string[] = [];
    _having: any = null;
    _order: string[] = [];
    _limit = -1;
    _offset = -1;
    _params: any = {};
    constructor(cols: any[]) {
      this._cols = cols.flat().map(String);
    }
    select(...cols: any[]) {
      this._cols = cols.flat().map(String);
      return this;
    }
    andSelect(...cols: any[]) {
      this._cols.push(...cols.flat().map(String));
      return this;
    }
    distinct(on = true) {
      this._distinct = !!on;
      return this;
    }
    from(...tables: any[]) {
      this._from = tables.flat().map(String);
      return this;
    }
    where(e: any) {
      this._where = e;
      return this;
    }
    andWhere(e: any) {
      this._where = this._where ? $dbx.and(this._where, e) : e;
      return this;
    }
    orWhere(e: any) {
      this._where = this._where ? $dbx.or(this._where, e) : e;
      return this;
    }
    join(kind: string, table: string, on: any) {
      this._joins.push({ kind: String(kind), table: String(table), on });
      return this;
    }
    innerJoin(table: string, on: any) {
      return this.join('INNER JOIN', table, on);
    }
    leftJoin(table: string, on: any) {
      return this.join('LEFT JOIN', table, on);
    }
    rightJoin(table: string, on: any) {
      return this.join('RIGHT JOIN', table, on);
    }
    groupBy(...cols: any[]) {
      this._group = cols.flat().map(String);
      return this;
    }
    andGroupBy(...cols: any[]) {
      this._group.push(...cols.flat().map(String));
      return this;
    }
    having(e: any) {
      this._having = e;
      return this;
    }
    andHaving(e: any) {
      this._having = this._having ? $dbx.and(this._having, e) : e;
      return this;
    }
    orHaving(e: any) {
      this._having = this._having ? $dbx.or(this._having, e) : e;
      return this;
    }
    orderBy(...cols: any[]) {
      this._order = cols.flat().map(String);
      return this;
    }
    andOrderBy(...cols: any[]) {
      this._order.push(...cols.flat().map(String));
      return this;
    }
    limit(n: number) {
      this._limit = Number(n);
      return this;
    }
    offset(n: number) {
      this._offset = Number(n);
      return this;
    }
    bind(params: any) {
      bindInto(this._params, params);
      return this;
    }
    andBind(params: any) {
      return this.bind(params);
    }
    /** The SQL and its values (dbx's Build()), as a Query. */
    build() {
      const params: any = {};
      const cols = this._cols.length ? this._cols.map(quoteName).join(', ') : '*';
      let text = `SELECT ${this._distinct ? 'DISTINCT ' : ''}${cols}`;
      if (this._from.length) text += ` FROM ${this._from.map(quoteName).join(', ')}`;
      for (const j of this._joins) {
        const on = built(j.on, params);
        text += ` ${j.kind} ${quoteName(j.table)}${on ? ` ON ${on}` : ''}`;
      }
      const where = built(this._where, params);
      if (where) text += ` WHERE ${where}`;
      if (this._group.length) text += ` GROUP BY ${this._group.map(quoteName).join(', ')}`;
      const having = built(this._having, params);
      if (having) text += ` HAVING ${having}`;
      if (this._order.length)
        text += ` ORDER BY ${this._order
          .map((o) => {
            const m = /^(.*?)\s+(asc|desc)$/i.exec(o.trim());
            return m ? `${quoteName(m[1])} ${m[2].toUpperCase()}` : quoteName(o);
          })
          .join(', ')}`;
      if (this._limit >= 0) text += ` LIMIT ${Math.trunc(this._limit)}`;
      if (this._offset > 0) text += `${this._limit >= 0 ? '' : ' LIMIT 9223372036854775807'} OFFSET ${Math.trunc(this._offset)}`;
      return new Query(text).bind({ ...params, ...this._params });
    }
    all(out?: any) {
      return this.build().all(out);
    }
    one(out?: any) {
      return this.build().one(out);
    }
    column(out?: any) {
      return this.build().column(out);
    }
    row(...outs: any[]) {
      return this.build().row(...outs);
    }
  }
  /**
   * `$app.recordQuery(collection)`: dbx's SelectQuery over the collection's table (`SELECT t.* FROM t`)
   * whose `all`/`one` into Records give records as `findRecordsByFilter` does: the query selects the
   * matching ids and the main thread reads those records (one crossing), in the query's order.
   */
  class RecordQuery extends SelectQuery {
    _coll: any;
    constructor(coll: any) {
      const c = collectionOf(coll);
      super([`${c.name}.*`]);
      this._coll = c;
      this._from = [c.name];
    }
    /** The records the query matches, in its order. */
    __records(limit?: number): any[] {
      const cols = this._cols;
      const lim = this._limit;
      this._cols = [`${this._coll.name}.id`];
      if (limit !== undefined && (lim < 0 || lim > limit)) this._limit = limit;
      let q: any;
      try {
        q = this.build();
      } finally {
        this._cols = cols;
        this._limit = lim;
      }
      return (call('recordsBySql', this._coll.name, q._sql, q._params) as any[]).map((json) => Record.__from(json));
    }
    override all(out?: any) {
      // Into anything else than Records (arrayOf(new DynamicModel(…))), rows as the builder gives them.
      const model = Array.isArray(out) ? (out as any).__model : undefined;
      if (model !== undefined && !(model instanceof Record)) return super.all(out);
      const records = this.__records();
      if (!Array.isArray(out)) return records;
      out.length = 0;
      out.push(...records);
      return out;
    }
    override one(out?: any) {
      if (out !== undefined && out !== null && !(out instanceof Record)) return super.one(out);
      const [found] = this.__records(1);
      if (!found) throw new Error('sql: no rows in result set');
      if (!out) return found;
      out._c = found._c;
      out._d = {};
      out.__refresh({ ...found._d, expand: found._expand });
      return out;
    }
  }
  const db: any = {
    newQuery: (sql: string) => new Query(sql),
    select: (...cols: any[]) => new SelectQuery(cols),
    insert: (table: string, cols: any) => {
      const params: any = {};
      const keys = Object.keys(cols ?? {});
      return new Query(`INSERT INTO ${quoteName(table)} (${keys.map(quoteName).join(', ')}) VALUES (${keys.map((k) => (cols[k] instanceof DbxExp ? cols[k].build(params) : ph(params, cols[k]))).join(', ')})`).bind(params);
    },
    update: (table: string, cols: any, where?: any) => {
      const params: any = {};
      const sets = Object.keys(cols ?? {}).map((k) => `${quoteName(k)}=${cols[k] instanceof DbxExp ? cols[k].build(params) : ph(params, cols[k])}`);
      const w = built(where, params);
      return new Query(`UPDATE ${quoteName(table)} SET ${sets.join(', ')}${w ? ` WHERE ${w}` : ''}`).bind(params);
    },
    delete: (table: string, where?: any) => {
      const params: any = {};
      const w = built(where, params);
      return new Query(`DELETE FROM ${quoteName(table)}${w ? ` WHERE ${w}` : ''}`).bind(params);
    },
    // dbx's TruncateTable, as it builds it for SQLite: every row deleted (inside the transaction, on both engines).
    truncateTable: (table: string) => new Query(`DELETE FROM ${quoteName(table)}`),
  };
  function findRecordsByFilter(coll: any, filter = '', sort = '', limit = 0, offset = 0, params?: any) {
    const rows = call('find', collectionOf(coll).name, { filter, sort, limit: limit > 0 ? limit : undefined, offset: offset > 0 ? offset : undefined, params: params ?? undefined });
    return rows.map(asRecord);
  }
  const reads: any = {
    findRecordById: (coll: any, id: string) => asRecord(call('findById', collectionOf(coll).name, id)),
    findFirstRecordByFilter: (coll: any, filter: string, params?: any) => asRecord(call('findFirst', collectionOf(coll).name, filter, params ?? undefined)),
    findRecordsByFilter,
    findFirstRecordByData: (coll: any, key: string, value: any) => asRecord(call('findFirst', collectionOf(coll).name, `${key} = {:value}`, { value })),
    findRecordsByIds: (coll: any, ids: string[]) => (ids.length ? findRecordsByFilter(coll, ids.map((_: any, i: number) => `id = {:id${i}}`).join(' || '), '', 0, 0, Object.fromEntries(ids.map((id: string, i: number) => [`id${i}`, id]))) : []),
    findAllRecords: (coll: any) => findRecordsByFilter(coll),
    /** Records matching dbx expressions (`$dbx.hashExp`…), in insertion order. */
    findRecordsByExpr: (coll: any, ...exprs: any[]) => {
      const list = exprs.flat().filter((x) => x !== null && x !== undefined);
      if (list.length === 0) return findRecordsByFilter(coll);
      const ids = db.select('id').from(collectionOf(coll).name).where($dbx.and(...list)).column() as any[];
      const found = reads.findRecordsByIds(coll, ids.map(String));
      const at = new Map(ids.map((id: any, i: number) => [String(id), i]));
      return found.sort((a: any, b: any) => (at.get(a.id) ?? 0) - (at.get(b.id) ?? 0));
    },
    findAuthRecordByEmail: (coll: any, email: string) => asRecord(call('findFirst', collectionOf(coll).name, 'email = {:email}', { email })),
    findAuthRecordByUsername: (coll: any, username: string) => asRecord(call('findFirst', collectionOf(coll).name, 'username = {:username}', { username })),
    countRecords: (coll: any, ...exprs: any[]) => {
      const list = exprs.flat().filter((x) => x !== null && x !== undefined);
      if (list.length === 0) return call('count', collectionOf(coll).name);
      const row = new DynamicModel({ n: 0 });
      db.select('COUNT(*) AS n').from(collectionOf(coll).name).where($dbx.and(...list)).one(row);
      return (row as any).n;
    },
    findCollectionByNameOrId: (name: string) => {
      let c = collectionCache.get(name);
      if (!c) collectionCache.set(name, (c = call('collection', name)));
      return Collection.__found(c);
    },
    /** The collections of a type (`auth`, `base`, `view`), as Collection objects (v0.22 had no `_` system ones). */
    findCollectionsByType: (type: string) =>
      (call('collectionsByType', String(type)) as any[]).filter((c) => runningGen !== 22 || !String(c.name).startsWith('_')).map((c) => Collection.__found(c)),
    recordQuery: (coll: any) => new RecordQuery(coll),
    expandRecord: (record: any, expands: string[]) => {
      const got = call('expand', record._c.name, record.id, (expands ?? []).join(','));
      record.setExpand(got?.expand ?? {});
      return {};
    },
    expandRecords: (records: any[], expands: string[]) => {
      for (const r of records) reads.expandRecord(r, expands);
      return {};
    },
  };
  function save(model: any) {
    if (model instanceof Collection) {
      // A new one is created (its name taken is an error, as in PocketBase); one the app found is changed.
      const saved = inner(call('saveCollection', model.__body(), model.__stored));
      collectionCache.clear();
      model.__load(saved);
      model.__stored = true;
      return;
    }
    if (!(model instanceof Record)) throw new Error('$app.save: only records and collections can be saved from pb_hooks in Cairn');
    const json = model.isNew() ? call('create', model._c.name, model.__changes()) : call('update', model._c.name, model.id || model._o?.id, model.__changes());
    model.__refresh(json);
  }
  /**
   * v0.22's `forms.RecordUpsert` (and ≥ 0.23's `RecordUpsertForm`): data loaded onto the record, then
   * saved as `$app.save` saves it (validation and record hooks run). `submit`'s interceptors wrap
   * the save (`(next) => (record) => next(record)`), as PocketBase's.
   */
  class RecordUpsertForm {
    _record: any;
    constructor(_app: any, record: any) {
      if (!(record instanceof Record)) throw new TypeError('RecordUpsertForm: a record is required');
      this._record = record;
    }
    loadData(data: any) {
      this._record.load(data ?? {});
    }
    load(data: any) {
      this.loadData(data);
    }
    // The dao, context and access levels are the handler's anyway: a save from pb_hooks is a system write.
    setDao() {}
    setContext() {}
    setFullManageAccess() {}
    grantManagerAccess() {}
    grantSuperuserAccess() {}
    addFiles(key: string, ...files: any[]) {
      this._record.set(`${key}+`, files.flat());
    }
    removeFiles(key: string, ...names: any[]) {
      this._record.set(`${key}-`, names.flat().map((n: any) => (n instanceof PbFile ? n.name : String(n))));
    }
    submit(...interceptors: any[]) {
      const chain = interceptors.flat().filter((f) => typeof f === 'function').reduceRight((next: any, wrap: any) => wrap(next), (r: any) => save(r));
      const err = chain(this._record);
      // An interceptor may return its error rather than throw it (Go's `return err`).
      if (err !== undefined && err !== null) throw err;
    }
  }
  function del(model: any) {
    if (model instanceof Collection) {
      call('deleteCollection', model.id || model.name);
      collectionCache.clear();
      return;
    }
    if (!(model instanceof Record)) throw new Error('$app.delete: only records and collections can be deleted from pb_hooks in Cairn');
    call('delete', model._c.name, model.id);
  }
  const logArgs = (msg: any, args: any[]) => {
    const data: any = {};
    // An error (of any realm) as its message: as JSON it is `{}`.
    const value = (v: any) => (v && typeof v === 'object' && typeof v.message === 'string' && 'stack' in v ? String(v) : v);
    for (let i = 0; i + 1 < args.length; i += 2) data[String(args[i])] = value(args[i + 1]);
    return [String(msg), data];
  };
  const logger = {
    debug: (m: any, ...a: any[]) => parentPort.postMessage({ type: 'log', level: 'debug', args: plain(logArgs(m, a)) }),
    info: (m: any, ...a: any[]) => parentPort.postMessage({ type: 'log', level: 'info', args: plain(logArgs(m, a)) }),
    warn: (m: any, ...a: any[]) => parentPort.postMessage({ type: 'log', level: 'warn', args: plain(logArgs(m, a)) }),
    error: (m: any, ...a: any[]) => parentPort.postMessage({ type: 'log', level: 'error', args: plain(logArgs(m, a)) }),
    with: () => logger,
    withGroup: () => logger,
  };
  /** console.log(a, b, …): every argument on one line, as goja's console prints them. */
  const consoleLine =
    (level: 'debug' | 'info' | 'warn' | 'error') =>
    (...args: any[]) =>
      logger[level](args.map((v) => (typeof v === 'string' ? v : v instanceof Error ? String(v) : (JSON.stringify(v) ?? String(v)))).join(' '));
  const mailClient = { send: (m: any) => call('mail', m) };
  const dao: any = {
    ...reads,
    db: () => db,
    // v0.22's dao.saveRecord did not validate; Cairn's save validates (docs/hooks.md, Differences).
    saveRecord: save,
    deleteRecord: del,
    saveCollection: save,
    deleteCollection: del,
    save,
    saveNoValidate: save,
    delete: del,
    runInTransaction: (fn: any) => fn(dao),
    findAdminByEmail: (email: string) => asRecord(call('findFirst', '_superusers', 'email = {:email}', { email })),
  };
  const $app: any = {
    ...reads,
    db: () => db,
    dao: () => dao,
    save,
    // Cairn's writes always validate (docs/hooks.md, Differences): these are `save`.
    saveNoValidate: save,
    saveWithContext: save,
    saveNoValidateWithContext: save,
    delete: del,
    deleteWithContext: del,
    runInTransaction: (fn: any) => fn($app),
    logger: () => logger,
    settings: () => inner(call('settings')),
    newMailClient: () => mailClient,
    isDev: () => false,
    dataDir: () => call('dataDir'),
    isBootstrapped: () => true,
    // The CLI of a PocketBase binary: commands a file adds are accepted and never run.
    rootCmd: { addCommand: () => undefined },
  };

  // ---- helpers PocketBase exposes ----
  const $security = {
    randomString: (n: number) => randomWith(n, 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'),
    randomStringWithAlphabet: (n: number, alphabet: string) => randomWith(n, alphabet),
    pseudorandomString: (n: number) => randomWith(n, 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'),
    pseudorandomStringWithAlphabet: (n: number, alphabet: string) => randomWith(n, alphabet),
    md5: (s: string) => crypto.createHash('md5').update(String(s)).digest('hex'),
    sha256: (s: string) => crypto.createHash('sha256').update(String(s)).digest('hex'),
    sha512: (s: string) => crypto.createHash('sha512').update(String(s)).digest('hex'),
    hs256: (s: string, secret: string) => crypto.createHmac('sha256', String(secret)).update(String(s)).digest('hex'),
    hs512: (s: string, secret: string) => crypto.createHmac('sha512', String(secret)).update(String(s)).digest('hex'),
    equal: (a: string, b: string) => {
      const x = Buffer.from(String(a));
      const y = Buffer.from(String(b));
      return x.length === y.length && crypto.timingSafeEqual(x, y);
    },
    createJWT: (payload: any, secret: string, seconds: number) => {
      const enc = (o: any) => Buffer.from(JSON.stringify(o)).toString('base64url');
      const body = { ...payload, exp: Math.floor(Date.now() / 1000) + Number(seconds || 0) };
      const head = enc({ alg: 'HS256', typ: 'JWT' }) + '.' + enc(body);
      return head + '.' + crypto.createHmac('sha256', String(secret)).update(head).digest('base64url');
    },
    parseUnverifiedJWT: (token: string) => JSON.parse(Buffer.from(String(token).split('.')[1] ?? '', 'base64url').toString() || '{}'),
    parseJWT: (token: string, secret: string) => {
      const [h, p, s] = String(token).split('.');
      if (crypto.createHmac('sha256', String(secret)).update(`${h}.${p}`).digest('base64url') !== s) throw new Error('invalid JWT signature');
      const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
      if (claims.exp && claims.exp < Date.now() / 1000) throw new Error('token is expired');
      return claims;
    },
  };
  function randomWith(n: number, alphabet: string) {
    let out = '';
    for (let i = 0; i < n; i++) out += alphabet[crypto.randomInt(alphabet.length)];
    return out;
  }
  const $http = {
    send: (config: any) => {
      const res = call('http', { url: config.url, method: config.method ?? 'GET', body: config.body ?? '', headers: config.headers ?? {}, timeout: config.timeout ?? 120 });
      return res;
    },
  };
  const $os = {
    getenv: (name: string) => process.env[name] ?? '',
    readFile: (p: string) => fs.readFileSync(p),
    // Files written after a deferred e.next() are written once it has succeeded, as in PocketBase.
    writeFile: (p: string, data: any, perm?: number) => {
      settle();
      fs.writeFileSync(String(p), typeof data === 'string' ? data : Buffer.from(data ?? []), perm ? { mode: perm } : undefined);
    },
    mkdirAll: (p: string, perm?: number) => {
      settle();
      fs.mkdirSync(String(p), { recursive: true, mode: perm });
    },
    remove: (p: string) => {
      settle();
      fs.rmSync(String(p), { force: true });
    },
    removeAll: (p: string) => {
      settle();
      fs.rmSync(String(p), { recursive: true, force: true });
    },
    stat: (p: string) => { const st = fs.statSync(String(p)); return { name: () => nodePath.basename(String(p)), size: () => st.size, isDir: () => st.isDirectory(), modTime: () => st.mtime.toISOString() }; },
    readDir: (p: string) => fs.readdirSync(p),
    dirFS: (p: string) => ({ __dir: nodePath.resolve(String(p)) }),
    exit: () => {
      throw new Error('$os.exit is not available in Cairn');
    },
    args: () => [],
    /** A command run when asked (`output()`, `combinedOutput()`, `run()`); blocks this worker only. */
    cmd: (name: string, ...args: string[]) => {
      const { spawnSync } = require('node:child_process');
      const exec = () => spawnSync(String(name), args.map(String), { encoding: 'buffer', timeout: 60000 });
      const check = (r: any) => {
        if (r.error) throw r.error;
        if (r.status !== 0) throw new Error(`exit status ${r.status}`);
        return r;
      };
      return { output: () => check(exec()).stdout, combinedOutput: () => { const r = check(exec()); return Buffer.concat([r.stdout, r.stderr]); }, run: () => void check(exec()) };
    },
    hostname: () => require('node:os').hostname(),
  };
  /** Go's html/template (gotemplate.ts): `loadFiles` runs the first file, the others bring their {{define}}s. */
  const goTpl = __goTemplate();
  function renderer(load: () => { name: string; text: string }[]) {
    let parsed: any;
    let failed: unknown;
    try {
      parsed = goTpl.parse(load());
    } catch (err) {
      failed = err;
    }
    // As PocketBase's: a file that does not parse fails the render, not the load.
    return {
      render: (data: any) => {
        if (failed) throw failed;
        return goTpl.render(parsed, data);
      },
    };
  }
  const $template = {
    loadFiles: (...paths: string[]) => renderer(() => paths.flat().map((p) => ({ name: nodePath.basename(String(p)), text: fs.readFileSync(String(p), 'utf8') }))),
    loadString: (...texts: string[]) => renderer(() => texts.flat().map((text, i) => ({ name: i === 0 ? 'string' : `string${i}`, text: String(text) }))),
    loadFS: () => {
      throw new Error('$template.loadFS is not available in Cairn: use $template.loadFiles with paths');
    },
  };
  /** PocketBase's filesystem.File: bytes with a name, to set on a record's file field (sent with the save). */
  class PbFile {
    name: string;
    originalName: string;
    size: number;
    _b64: string;
    constructor(name: string, b64: string, size: number) {
      this.originalName = String(name || 'file');
      this.name = this.originalName;
      this._b64 = b64;
      this.size = size;
    }
    static of(bytes: any, name: string) {
      const buf = typeof bytes === 'string' ? Buffer.from(bytes) : Buffer.from(bytes ?? []);
      return new PbFile(name, buf.toString('base64'), buf.length);
    }
    toJSON() {
      return { __file: 'bytes', name: this.originalName, bytes: this._b64, size: this.size };
    }
  }
  const fileOfMarker = (m: any) => new PbFile(m.name, m.bytes, m.size ?? 0);
  const $filesystem = {
    fileFromPath: (p: string) => PbFile.of(fs.readFileSync(String(p)), nodePath.basename(String(p))),
    fileFromBytes: (b: any, name: string) => PbFile.of(b, String(name)),
    fileFromURL: (url: string) => fileOfMarker(call('fileFromURL', String(url))),
    fileFromMultipart: (f: any) => {
      if (f instanceof PbFile) return f;
      throw new Error('$filesystem.fileFromMultipart: use e.findUploadedFiles(key) in Cairn');
    },
  };
  class MailerMessage {
    constructor(m: any = {}) {
      Object.assign(this, m);
    }
  }
  /** PocketBase's `mails` package: the auth flows' mails to a record, now (`app` is the first argument, as in PocketBase). */
  const recordOf = (args: any[]): any => {
    const r = args.find((a) => a instanceof Record);
    if (!r) throw new Error('$mails: a record is required');
    return r;
  };
  const $mails = {
    sendRecordPasswordReset: (...args: any[]) => void call('mails', 'password-reset', recordOf(args)._c.name, recordOf(args).id),
    sendRecordVerification: (...args: any[]) => void call('mails', 'verification', recordOf(args)._c.name, recordOf(args).id),
    sendRecordChangeEmail: (...args: any[]) => {
      const r = recordOf(args);
      void call('mails', 'email-change', r._c.name, r.id, String(args[args.indexOf(r) + 1] ?? ''));
    },
  };


  // ---- $apis: route middlewares and helpers ----
  const $apis = {
    requireAuth: (...collections: string[]) => ({ __apis: 'auth', collections }),
    requireRecordAuth: (...collections: string[]) => ({ __apis: 'record', collections }),
    requireSuperuserAuth: () => ({ __apis: 'superuser' }),
    requireAdminAuth: () => ({ __apis: 'superuser' }),
    requireAdminOrRecordAuth: (...collections: string[]) => ({ __apis: 'auth', collections }),
    requireSuperuserOrOwnerAuth: (param = 'id') => ({ __apis: 'owner', param }),
    requireAdminOrOwnerAuth: (param = 'id') => ({ __apis: 'owner', param }),
    requireGuestOnly: () => ({ __apis: 'guest' }),
    activityLogger: () => ({ __apis: 'none' }),
    skipSuccessActivityLog: () => ({ __apis: 'none' }),
    bodyLimit: () => ({ __apis: 'none' }),
    gzip: () => ({ __apis: 'none' }),
    requestInfo: (c: any) => c.requestInfo(),
    recordAuthResponse: (...args: any[]) => {
      const [, , record] = args.length >= 4 ? args : [null, ...args];
      const c = args.length >= 4 ? args[1] : args[0];
      const token = call('authToken', record._c.name, record.id);
      return c.json(200, { token, record: record.publicExport() });
    },
    enrichRecord: () => undefined,
    enrichRecords: () => undefined,
    // Files are served by the main thread: the handler only names the folder (no bytes cross here).
    static: (dir: any, indexFallback?: any) => staticHandler(dir, indexFallback),
    staticDirectoryHandler: (dir: any, indexFallback?: any) => staticHandler(dir, indexFallback),
  };
  /** `$apis.static($os.dirFS(dir) or dir, indexFallback)`: answers "serve `path` from dir". */
  function staticHandler(dir: any, indexFallback: any) {
    const root = nodePath.resolve(typeof dir === 'string' ? dir : String(dir?.__dir ?? ''));
    return (c: any) => c.__static(root, !!indexFallback);
  }
  function checkApis(mw: any, ev: any) {
    const auth = ev.auth;
    const isSuper = !!auth && auth.collectionName === '_superusers';
    switch (mw.__apis) {
      case 'auth':
      case 'record':
        if (!auth || auth.collectionName === '_api_keys') throw new UnauthorizedError('The request requires valid record authorization token.');
        if (mw.__apis === 'record' && isSuper) throw new UnauthorizedError('The request requires valid record authorization token.');
        if (mw.collections?.length && !mw.collections.includes(auth.collectionName) && !(mw.__apis === 'auth' && isSuper && mw.collections.includes('_superusers'))) throw new ForbiddenError('The authorized record is not allowed to perform this action.');
        return;
      case 'superuser':
        if (!isSuper) throw new UnauthorizedError('The request requires valid superuser authorization token.');
        return;
      case 'owner':
        if (isSuper) return;
        if (!auth || auth.id !== ev.request.pathValue(mw.param)) throw new ForbiddenError('You are not allowed to perform this request.');
        return;
      case 'guest':
        if (auth) throw new BadRequestError('The request can be accessed only by guests.');
        return;
    }
  }

  // ---- registration ----
  interface Reg {
    kind: string;
    event?: string;
    collections?: string[];
    method?: string;
    path?: string;
    name?: string;
    schedule?: string;
    file: string;
    gen: number;
    source?: string;
  }
  const regs: Reg[] = [];
  const fns: any[] = [];
  /**
   * Whether a handler's `e.next()` may be deferred: not when its source has a `try`, which could
   * catch what `e.next()` throws (a deferred one throws after the handler has ended).
   */
  const deferrable: boolean[] = [];
  const routeMw: any[][] = [];
  const globalMw: any[] = [];
  let currentFile = '';
  let currentGen = 23;
  const register = (reg: Omit<Reg, 'file' | 'gen'>, fn: any, mws: any[] = []) => {
    if (typeof fn !== 'function') throw new TypeError(`${reg.event ?? reg.kind}: the handler must be a function`);
    // The handlers' sources, for the copy of these files on the main thread (main-runtime.ts).
    regs.push({ ...reg, file: currentFile, gen: currentGen, ...(sources ? { source: Function.prototype.toString.call(fn) } : {}) });
    fns.push(fn);
    deferrable.push(!/\btry\b/.test(Function.prototype.toString.call(fn)));
    routeMw.push(mws);
  };
  const hook =
    (event: string) =>
    (fn: any, ...collections: any[]) => {
      // Also (collection, handler), which some apps write.
      if (typeof fn === 'string' && typeof collections[collections.length - 1] === 'function') {
        const handler = collections.pop();
        collections.unshift(fn);
        fn = handler;
      }
      register({ kind: 'event', event, collections: collections.flat().map(String) }, fn);
    };

  /** PocketBase's `toString`: bytes or arrays of bytes as text, anything else as JSON. */
  function toStringOf(v: any): string {
    return typeof v === 'string' ? v : v instanceof Uint8Array || Array.isArray(v) ? Buffer.from(v as any).toString() : v === undefined || v === null ? '' : JSON.stringify(v);
  }
  const globals: any = {
    $app,
    $apis,
    $security,
    $http,
    $os,
    $template,
    $filesystem,
    $mails,
    $dbx,
    Record,
    Collection,
    DynamicModel,
    DateTime,
    MailerMessage,
    RecordUpsertForm,
    Command: class {
      constructor(o: any = {}) {
        Object.assign(this, o);
      }
    },
    ApiError,
    BadRequestError,
    NotFoundError,
    ForbiddenError,
    UnauthorizedError,
    TooManyRequestsError,
    InternalServerError,
    arrayOf,
    __hooks: hooksDir,
    console: { log: consoleLine('info'), info: consoleLine('info'), warn: consoleLine('warn'), error: consoleLine('error'), debug: consoleLine('debug') },
    sleep: (ms: number) => Atomics.wait(sleeper, 0, 0, Number(ms) || 0),
    toString: toStringOf,
    readerToString: (v: any) => String(v ?? ''),
    routerAdd: (method: string, path: string, fn: any, ...mws: any[]) => register({ kind: 'route', method: String(method).toUpperCase(), path: String(path) }, fn, mws.flat()),
    routerUse: (...mws: any[]) => globalMw.push(...mws.flat()),
    routerPre: (...mws: any[]) => globalMw.push(...mws.flat()),
    cronAdd: (name: string, schedule: string, fn: any) => register({ kind: 'cron', name: String(name), schedule: String(schedule) }, fn),
    cronRemove: (name: string) => register({ kind: 'cronRemove', name: String(name) }, () => undefined),
    migrate: () => undefined,
    setTimeout,
    clearTimeout,
    // goja_nodejs' `process`, which PocketBase enables: the environment.
    process: { env: { ...process.env }, argv: [], platform: process.platform },
  };
  // goja lets Go constructors be called without `new` (`throw ForbiddenError()`): so may these.
  const callable = (C: any) => new Proxy(C, { apply: (target, _self, args) => new target(...args) });
  for (const name of ['Record', 'Collection', 'DynamicModel', 'DateTime', 'MailerMessage', 'RecordUpsertForm', 'ApiError', 'BadRequestError', 'NotFoundError', 'ForbiddenError', 'UnauthorizedError', 'TooManyRequestsError', 'InternalServerError']) globals[name] = callable(globals[name]);
  for (const [k, v] of Object.entries(globals)) context[k] = v;

  // ---- CommonJS require() of the app's modules ----
  const modules = new Map<string, any>();
  function makeRequire(fromDir: string) {
    return (name: string) => {
      const p = String(name);
      if (!p.startsWith('.') && !nodePath.isAbsolute(p)) throw new Error(`require("${p}"): only local modules (in pb_hooks) load in Cairn's pb_hooks`);
      let file = nodePath.resolve(fromDir, p);
      if (!fs.existsSync(file) && fs.existsSync(file + '.js')) file += '.js';
      const cached = modules.get(file);
      if (cached) return cached.exports;
      const module: any = { exports: {} };
      modules.set(file, module);
      const src = fs.readFileSync(file, 'utf8');
      const fn = vm.runInContext(`(function (module, exports, require, __filename, __dirname) {${src}\n})`, context, { filename: file });
      fn(module, module.exports, makeRequire(nodePath.dirname(file)), file, nodePath.dirname(file));
      return module.exports;
    };
  }

  function generation(src: string): number {
    if (/\.dao\(\)|onRecordBefore\w*Request|onRecordAfter\w*Request|onAfterBootstrap|onModelBefore|onModelAfter\w*\(|\$apis\.requestInfo|\.pathParam\(|\.queryParam\(|c\.get\(\s*["']authRecord/.test(src) && !/\be\.next\(\)/.test(src)) return 22;
    return 23;
  }
  const KNOWN = new Set(Object.keys(globals));
  for (const file of files) {
    const src = fs.readFileSync(file, 'utf8');
    currentFile = file;
    currentGen = generation(src);
    // Every `onX(` registration the file uses exists (the ones Cairn does not fire register and are listed).
    for (const m of src.matchAll(/\b(on[A-Z][A-Za-z0-9]*)\s*\(/g)) if (!KNOWN.has(m[1])) context[m[1]] = hook(m[1]);
    context.require = makeRequire(hooksDir);
    // A file that assigns `module.exports` at its top level (goja_nodejs gives every script one).
    context.module = { exports: {} };
    context.exports = context.module.exports;
    new vm.Script(src, { filename: file }).runInContext(context);
  }

  // ---- running handlers ----
  function headerGetter(h: any) {
    return { get: (k: string) => { const v = h[String(k).toLowerCase()]; return Array.isArray(v) ? v[0] : (v ?? ''); }, values: (k: string) => [].concat(h[String(k).toLowerCase()] ?? []), has: (k: string) => h[String(k).toLowerCase()] !== undefined };
  }
  function infoHeaders(h: any) {
    const out: any = {};
    for (const [k, v] of Object.entries(h ?? {})) out[k.toLowerCase().replace(/-/g, '_')] = Array.isArray(v) ? v.join(',') : v;
    return out;
  }
  function authRecord(auth: any) {
    if (!auth) return null;
    return Record.__from(auth, { id: auth.collectionId ?? auth.collectionName, name: auth.collectionName, type: 'auth' });
  }
  function requestOf(req: any) {
    const q = new URLSearchParams(req.query ?? '');
    const query: any = {};
    for (const [k, v] of q) query[k] = v;
    const info = () => {
      const auth = authRecord(req.auth);
      const o = inner({ body: req.body ?? {}, data: req.body ?? {}, query, headers: infoHeaders(req.headers), method: req.method, context: 'default' });
      o.auth = auth;
      o.authRecord = auth && !auth.isSuperuser() ? auth : null;
      o.admin = auth && auth.isSuperuser() ? auth : null;
      o.hasSuperuserAuth = () => !!auth?.isSuperuser();
      return o;
    };
    const request = {
      method: req.method,
      header: headerGetter(req.headers ?? {}),
      url: { path: req.path, rawQuery: req.query ?? '', query: () => ({ get: (k: string) => q.get(k) ?? '', has: (k: string) => q.has(k) }), string: () => req.path + (req.query ? `?${req.query}` : '') },
      pathValue: (k: string) => req.params?.[k] ?? '',
      remoteAddr: req.ip ?? '',
      host: (req.headers ?? {}).host ?? '',
      // Go's Request.Cookie (throws when there is none, as goja turns Go's error into one) and Cookies.
      cookie: (name: string) => {
        const found = cookiesOf(req.headers).find((c) => c.name === String(name));
        if (!found) throw new Error('http: named cookie not present');
        return inner(found);
      },
      cookies: () => inner(cookiesOf(req.headers)),
      // Go's Request.FormFile: [the file to read(buf) from, its header], which $filesystem.fileFromMultipart takes.
      formFile: (key: string) => {
        const f = req.files?.[String(key)]?.[0];
        if (!f) throw new Error('http: no such file');
        const bytes = Buffer.from(f.bytes, 'base64');
        let at = 0;
        const reader = {
          read: (buf: Uint8Array) => {
            const n = Math.min(buf.length, bytes.length - at);
            buf.set(bytes.subarray(at, at + n));
            at += n;
            return n;
          },
          close: () => undefined,
        };
        return [reader, Object.assign(fileOfMarker(f), { filename: f.name })];
      },
    };
    return { info, request, query: q, query_: query };
  }

  /** The request's cookies, as Go's http.Cookie values (`name`, `value`). */
  function cookiesOf(headers: any): { name: string; value: string }[] {
    const raw = headers?.cookie;
    const text = Array.isArray(raw) ? raw.join('; ') : String(raw ?? '');
    const out: { name: string; value: string }[] = [];
    for (const part of text.split(';')) {
      const i = part.indexOf('=');
      if (i <= 0) continue;
      const value = part.slice(i + 1).trim();
      out.push({ name: part.slice(0, i).trim(), value: value.startsWith('"') && value.endsWith('"') && value.length > 1 ? value.slice(1, -1) : value });
    }
    return out;
  }

  function runEvent(reg: Reg, fn: any, payload: any) {
    const collection = new Collection(payload.collection);
    const record = payload.record ? Record.__from(payload.record, collection) : null;
    if (record && payload.original) record._o = { ...payload.original };
    if (record && payload.isNew) record._o = null;
    const req = payload.request ? requestOf(payload.request) : null;
    let nextCalled = false;
    /** The changes an `e.next()` left for the main thread to write (deferredNext). */
    let deferred: { [key: string]: unknown } | null = null;
    const auth = payload.auth ? authRecord(payload.auth) : null;
    const e: any = {
      app: $app,
      dao: () => dao,
      collection,
      record,
      auth,
      httpContext: req ? routeContext(payload.request, { answer: null, headers: {} }) : undefined,
      requestInfo: req ? req.info : () => inner({ body: {}, query: {}, headers: {}, method: '' }),
      request: req ? Object.assign(() => req.request, req.request) : undefined,
      uploadedFiles: {},
      files: {},
      next: () => {
        if (nextCalled) throw new Error('e.next() was already called');
        nextCalled = true;
        const changes = record ? record.__changes() : {};
        const now = () => {
          const stored = call('next', changes);
          if (record && stored) record.__refresh(stored);
        };
        if (!deferrable[regs.indexOf(reg)]) return now();
        deferred = changes;
        deferredNext = () => {
          deferred = null;
          now();
        };
      },
      hasSuperuserAuth: () => !!auth?.isSuperuser(),
      isSuperuser: () => !!auth?.isSuperuser(),
      realIP: () => payload.request?.ip ?? '',
      remoteIP: () => payload.request?.ip ?? '',
      // onTerminate's.
      isRestart: payload.isRestart === true,
    };
    if (payload.original) e.original = Record.__from(payload.original, collection);
    // v0.22's onModel* events name the record `e.model`.
    e.model = record;
    fn(e);
    if (deferred) {
      deferredNext = null;
      return { nextCalled, changes: deferred, deferredNext: true };
    }
    return { nextCalled, changes: record ? record.__changes() : {} };
  }

  /** The parts of an event about a request (`e.request`, `e.requestInfo()`, `e.auth`, …). */
  function requestParts(payload: any) {
    const req = payload.request ? requestOf(payload.request) : null;
    const auth = payload.auth ? authRecord(payload.auth) : null;
    return {
      app: $app,
      dao: () => dao,
      auth,
      httpContext: req ? routeContext(payload.request, { answer: null, headers: {} }) : undefined,
      requestInfo: req ? req.info : () => inner({ body: {}, query: {}, headers: {}, method: '' }),
      request: req ? Object.assign(() => req.request, req.request) : undefined,
      hasSuperuserAuth: () => !!auth?.isSuperuser(),
      isSuperuser: () => !!auth?.isSuperuser(),
      realIP: () => payload.request?.ip ?? '',
      remoteIP: () => payload.request?.ip ?? '',
    };
  }

  /** A record leaving for a client (onRecordEnrich) or a sign-in (onRecordAuthRequest). */
  function runHeld(reg: Reg, fn: any, payload: any) {
    const collection = new Collection(payload.collection);
    const record = payload.record ? Record.__from(payload.record, collection) : null;
    let nextCalled = false;
    const e: any = {
      ...requestParts(payload),
      collection,
      record,
      token: payload.token,
      authMethod: payload.method,
      meta: {},
      // The sign-in's own request (onRecordAuthWithPasswordRequest…): what the client sent.
      identity: payload.request?.body?.identity ?? '',
      identityField: 'email',
      password: payload.request?.body?.password ?? '',
      providerName: payload.request?.body?.provider ?? '',
      // An email change request's new address (onRecordRequestEmailChangeRequest).
      newEmail: payload.newEmail ?? '',
      // A file download's (onFileDownloadRequest): the name it is sent under is the handler's to change.
      fileField: payload.fileField ? inner(payload.fileField) : undefined,
      servedName: payload.servedName ?? '',
      servedPath: payload.servedName ?? '',
      next: () => {
        if (nextCalled) throw new Error('e.next() was already called');
        nextCalled = true;
        call('next', { ...(record ? record.__delta() : {}), servedName: String(e.servedName ?? '') });
      },
    };
    fn(e);
    return { nextCalled, delta: record ? record.__delta() : {}, servedName: String(e.servedName ?? '') };
  }

  /** An API request listing or viewing records (onRecordsListRequest, onRecordViewRequest). */
  function runRead(reg: Reg, fn: any, payload: any) {
    const collection = new Collection(payload.collection);
    const out: any = { answer: null, headers: {} };
    const c = payload.request ? routeContext(payload.request, out) : {};
    const records = (payload.records ?? []).map((r: any) => Record.__from(r, collection));
    const result = payload.result ? { ...payload.result, items: records } : undefined;
    let nextCalled = false;
    const exported = (): any[] => (e.record && payload.view ? [e.record] : (e.result?.items ?? e.records ?? [])).map((r: any) => (r instanceof Record ? r.publicExport() : r));
    const e: any = {
      ...c,
      ...requestParts(payload),
      collection,
      records,
      record: payload.view ? records[0] : undefined,
      result,
      next: () => {
        if (nextCalled) throw new Error('e.next() was already called');
        nextCalled = true;
        call('next', { records: exported(), result: meta() });
      },
    };
    /** The list's totals and paging as the handler left them. */
    const meta = () => {
      if (!e.result || typeof e.result !== 'object') return undefined;
      const { items: _items, ...rest } = e.result;
      return plain(rest);
    };
    fn(e);
    return { nextCalled, answer: out.answer, headers: out.headers, records: nextCalled || out.answer ? undefined : exported(), result: nextCalled || out.answer ? undefined : meta() };
  }

  /** Realtime: a client connecting, its subscription request, a message about to reach it. */
  function runRealtime(reg: Reg, fn: any, payload: any) {
    const id = String(payload.client?.id ?? '');
    const store: any = {};
    const e: any = {
      ...requestParts(payload),
      // PocketBase's subscriptions.Client, whose methods goja lowers: client.id(), client.subscriptions()…
      client: {
        id: () => id,
        get: (k: string) => store[k],
        set: (k: string, v: any) => (store[k] = v),
        subscriptions: () => Object.fromEntries((e.subscriptions ?? []).map((t: string) => [t, {}])),
        hasSubscription: (t: string) => (e.subscriptions ?? []).includes(t),
        isDiscarded: () => false,
      },
      subscriptions: payload.subscriptions ? inner(payload.subscriptions) : undefined,
      message: payload.message ? inner(payload.message) : undefined,
      idleTimeout: 300,
    };
    let nextCalled = false;
    const out = () => ({ subscriptions: e.subscriptions ? plain(e.subscriptions) : undefined, message: e.message ? { name: String(e.message.name ?? ''), data: typeof e.message.data === 'string' ? e.message.data : toStringOf(e.message.data) } : undefined });
    e.next = () => {
      if (nextCalled) throw new Error('e.next() was already called');
      nextCalled = true;
      call('next', out());
    };
    fn(e);
    return { nextCalled, ...out() };
  }

  /** A mail about to leave (onMailerSend, onMailerRecord*Send, v0.22's onMailerBefore*Send). */
  function runMail(reg: Reg, fn: any, payload: any) {
    const collection = payload.collection ? new Collection(payload.collection) : null;
    const message = new MailerMessage(payload.message ?? {});
    let nextCalled = false;
    const e: any = {
      app: $app,
      dao: () => dao,
      mailer: mailClient,
      mailClient,
      message,
      collection,
      record: payload.record ? Record.__from(payload.record, collection ?? undefined) : null,
      meta: inner(payload.meta ?? {}),
      next: () => {
        if (nextCalled) throw new Error('e.next() was already called');
        nextCalled = true;
        call('next', plain(e.message));
      },
    };
    fn(e);
    return { nextCalled, message: plain(e.message) };
  }

  function routeContext(req: any, out: any) {
    const r = requestOf(req);
    const auth = authRecord(req.auth);
    const respond = (status: number, type: string | undefined, body: any) => {
      // As PocketBase's router: a second answer is ignored ("response already committed"), the first stands.
      if (out.answer) {
        logger.warn('a pb_hooks route answered twice; the first answer stands');
        return;
      }
      out.answer = { status: Number(status), type, body };
    };
    const resHeaders = { set: (k: string, v: any) => (out.headers[String(k).toLowerCase()] = String(v)), add: (k: string, v: any) => (out.headers[String(k).toLowerCase()] = String(v)), get: (k: string) => out.headers[String(k).toLowerCase()] ?? '', del: (k: string) => delete out.headers[String(k).toLowerCase()] };
    // v0.22's echo calls them (`c.request()`, `c.response()`); ≥ 0.23 reads them as fields.
    const request = Object.assign(() => request, r.request);
    const response: any = Object.assign(() => response, { header: () => resHeaders });
    const c: any = {
      app: $app,
      auth,
      request,
      response,
      requestInfo: r.info,
      json: (status: number, data: any) => respond(status, 'application/json; charset=utf-8', JSON.stringify(data, (_k, x) => (x instanceof Record ? x.publicExport() : x)) ?? 'null'),
      string: (status: number, text: any) => respond(status, 'text/plain; charset=utf-8', String(text)),
      html: (status: number, text: any) => respond(status, 'text/html; charset=utf-8', String(text)),
      blob: (status: number, type: string, bytes: any) => respond(status, type, typeof bytes === 'string' ? bytes : Buffer.from(bytes).toString()),
      noContent: (status = 204) => respond(status, undefined, undefined),
      redirect: (status: number, url: string) => {
        respond(status, undefined, undefined);
        out.answer.location = String(url);
      },
      bindBody: (target: any) => {
        const body = req.body ?? {};
        if (target && typeof target === 'object') Object.assign(target, body);
        return target;
      },
      bind: (target: any) => c.bindBody(target),
      findUploadedFiles: (k: string) => {
        const list = req.files?.[k];
        if (!list || list.length === 0) throw new Error('http: no such file');
        return list.map(fileOfMarker);
      },
      pathParam: (k: string) => req.params?.[k] ?? '',
      pathParams: () => req.params ?? {},
      queryParam: (k: string) => r.query.get(k) ?? '',
      queryParams: () => r.query_,
      formValue: (k: string) => (req.body ?? {})[k] ?? '',
      realIP: () => req.ip ?? '',
      remoteIP: () => req.ip ?? '',
      hasSuperuserAuth: () => !!auth?.isSuperuser(),
      isAuth: () => !!auth,
      get: (k: string) => (k === 'authRecord' ? (auth && !auth.isSuperuser() ? auth : null) : k === 'admin' ? (auth && auth.isSuperuser() ? auth : null) : c.__store[k]),
      set: (k: string, v: any) => (c.__store[k] = v),
      __store: {},
      path: () => req.path,
      method: () => req.method,
      scheme: () => 'http',
      flushErrors: () => undefined,
      // The route's `{path...}` (v0.22's `*`) below the folder: the main thread finds and sends the file.
      __static: (dir: string, fallback: boolean) => {
        const first = !out.answer;
        respond(200, undefined, undefined);
        if (first) out.answer.static = { dir, fallback, path: String(req.params?.path ?? req.params?.['*'] ?? '') };
      },
    };
    return c;
  }

  function runRoute(reg: Reg, fn: any, req: any) {
    const out: any = { answer: null, headers: {} };
    const c = routeContext(req, out);
    const mws = [...globalMw, ...routeMw[regs.indexOf(reg)]];
    const gen = reg.gen;
    const at = (i: number): any => {
      if (i === mws.length) {
        const v = fn(c);
        if (v !== undefined && !out.answer && !(v && typeof v === 'object' && 'then' in v)) c.json(200, v);
        return;
      }
      const mw = mws[i];
      if (mw && mw.__apis) {
        checkApis(mw, c);
        return at(i + 1);
      }
      const m = mw && typeof mw === 'object' && typeof mw.func === 'function' ? mw.func : mw;
      if (typeof m !== 'function') return at(i + 1);
      if (gen === 22) return m(() => at(i + 1))(c);
      c.next = () => at(i + 1);
      return m(c);
    };
    at(0);
    return { answer: out.answer, headers: out.headers };
  }

  parentPort.on('message', (msg: any) => {
    if (msg.type !== 'run') return;
    const reg = regs[msg.index];
    const fn = fns[msg.index];
    runningGen = reg.gen;
    try {
      let result: any;
      if (reg.kind === 'event' && msg.payload?.kind === 'read') result = runRead(reg, fn, msg.payload);
      else if (reg.kind === 'event' && msg.payload?.kind === 'mail') result = runMail(reg, fn, msg.payload);
      else if (reg.kind === 'event' && msg.payload?.kind === 'realtime') result = runRealtime(reg, fn, msg.payload);
      else if (reg.kind === 'event' && msg.payload?.kind) result = runHeld(reg, fn, msg.payload);
      else if (reg.kind === 'event') result = runEvent(reg, fn, msg.payload);
      else if (reg.kind === 'route') result = runRoute(reg, fn, msg.payload);
      else {
        fn(msg.payload ?? {});
        result = {};
      }
      parentPort.postMessage({ type: 'done', result: plain(result) });
    } catch (err) {
      // A write deferred before the handler threw is done first: had it failed, e.next() would have thrown.
      let error = err;
      try {
        settle();
      } catch (failed) {
        error = failed;
      }
      parentPort.postMessage({ type: 'fail', error: serialize(error) });
    }
  });
  parentPort.postMessage({ type: 'loaded', regs });
}
