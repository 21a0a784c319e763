/** Go's values as html/template prints, compares and tests them, over JavaScript's. */

/** Text that is printed as it is (what `raw` and `html` return): every other value is escaped. */
export class Safe {
  constructor(readonly s: string) {}
  toString() {
    return this.s;
  }
}
export class TemplateError extends Error {}

/** HTML-escapes as Go's `template.HTMLEscapeString` does. */
export const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&#34;').replace(/'/g, '&#39;').replace(/\0/g, '\uFFFD');

/** Go's truth of a value: its zero value, and empty lists, maps and strings, are false. */
export const isTrue = (v: any): boolean => {
  if (v === null || v === undefined || v === false || v === 0 || v === '') return false;
  if (Array.isArray(v)) return v.length > 0;
  if (v instanceof Map) return v.size > 0;
  if (v instanceof Safe) return v.s !== '';
  if (typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) return Object.keys(v).length > 0;
  return true;
};
/** A value printed as Go's `fmt` prints it (`[a b]`, `map[k:v]`, nothing for nil). */
export const goString = (v: any): string => {
  if (v === null || v === undefined) return '';
  if (v instanceof Safe) return v.s;
  if (Array.isArray(v)) return `[${v.map(goString).join(' ')}]`;
  if (typeof v === 'object') {
    if (typeof v.toString === 'function' && v.toString !== Object.prototype.toString) return String(v);
    return `map[${Object.keys(v)
      .sort()
      .map((k) => `${k}:${goString(v[k])}`)
      .join(' ')}]`;
  }
  return String(v);
};
/** A field or method of `v`: Go's exported names (`Title`, `GetString`) find JS ones (`title`, `getString`) too. */
export const member = (v: any, key: string, args: any[] | null): any => {
  if (v === null || v === undefined) return undefined;
  let holder = v;
  let k = key;
  if (v instanceof Map) return v.get(key);
  if (!(k in Object(v))) {
    const lower = k[0].toLowerCase() + k.slice(1);
    if (lower in Object(v)) k = lower;
    else if (typeof v.get === 'function' && !Array.isArray(v)) return args ? undefined : v.get(key);
  }
  const got = holder[k];
  if (typeof got === 'function') return got.apply(holder, args ?? []);
  return got;
};
/** `eq`'s comparison: a `Safe` compares as its text. */
export const cmp = (a: any, b: any) => (a instanceof Safe ? a.s : a) === (b instanceof Safe ? b.s : b) || (typeof a === 'number' && typeof b === 'number' && a === b);
