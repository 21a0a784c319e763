/**
 * PocketBase's `types.DateTime` (`new DateTime(…)`, a record's `getDateTime`) and the Go `time.Time`
 * its `time()` gives, both in UTC. Pure: no host calls.
 */
/** Go's zero time (0001-01-01 00:00:00 UTC) in milliseconds since the epoch. */
export const ZERO_MS = -62135596800000;
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const DAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];
const pad = (n: number, w = 2) => String(Math.abs(n)).padStart(w, '0');
/** A time given to DateTime as milliseconds (ZERO_MS when zero or not a time), as PocketBase's ParseDateTime. */
export function msOf(v: any): number {
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
export const pbLayout = (ms: number) => new Date(ms).toISOString().replace('T', ' ');
/** Go's time.Format for the layout elements apps use, in UTC. */
export function goFormat(ms: number, layout: string): string {
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
export class GoTime {
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
export class DateTime {
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
