/** The functions a template calls: Go's and PocketBase's `raw`. */
import { cmp, esc, goString, isTrue, Safe } from './values.ts';

const printf = (format: string, ...args: any[]): string => {
  let n = 0;
  return String(format).replace(/%([-+# 0]*)(\d+)?(?:\.(\d+))?([%vsdqfxXtTeg])/g, (_m, flags: string, width: string, prec: string, verb: string) => {
    if (verb === '%') return '%';
    const a = args[n++];
    let s: string;
    switch (verb) {
      case 'd':
        s = String(Math.trunc(Number(a)));
        break;
      case 'f':
      case 'e':
      case 'g':
        s = verb === 'f' ? Number(a).toFixed(prec !== undefined ? Number(prec) : 6) : verb === 'e' ? Number(a).toExponential(prec !== undefined ? Number(prec) : 6) : String(Number(a));
        break;
      case 'q':
        s = JSON.stringify(goString(a));
        break;
      case 'x':
      case 'X':
        s = typeof a === 'number' ? a.toString(16) : Buffer.from(goString(a)).toString('hex');
        if (verb === 'X') s = s.toUpperCase();
        break;
      case 't':
        s = String(!!a);
        break;
      case 'T':
        s = Array.isArray(a) ? '[]interface {}' : typeof a === 'number' ? (Number.isInteger(a) ? 'int' : 'float64') : typeof a === 'boolean' ? 'bool' : typeof a === 'string' ? 'string' : 'map[string]interface {}';
        break;
      default:
        s = prec !== undefined && verb === 's' ? goString(a).slice(0, Number(prec)) : goString(a);
    }
    if (width && s.length < Number(width)) s = flags.includes('-') ? s.padEnd(Number(width)) : s.padStart(Number(width), flags.includes('0') && verb !== 's' ? '0' : ' ');
    return s;
  });
};
export const FUNCS: Record<string, (...a: any[]) => any> = {
  and: (...a) => {
    for (const v of a) if (!isTrue(v)) return v;
    return a[a.length - 1];
  },
  or: (...a) => {
    for (const v of a) if (isTrue(v)) return v;
    return a[a.length - 1];
  },
  not: (v) => !isTrue(v),
  len: (v) => (v === null || v === undefined ? 0 : typeof v === 'string' ? Buffer.byteLength(v) : Array.isArray(v) ? v.length : v instanceof Map ? v.size : typeof v === 'object' ? Object.keys(v).length : 0),
  index: (v, ...keys) => {
    for (const k of keys) v = v === null || v === undefined ? undefined : v instanceof Map ? v.get(k) : v[k];
    return v;
  },
  slice: (v, i = 0, j?: number) => (typeof v === 'string' || Array.isArray(v) ? v.slice(i, j) : v),
  print: (...a) => a.map((x, i) => (i > 0 && typeof x !== 'string' && typeof a[i - 1] !== 'string' ? ' ' : '') + goString(x)).join(''),
  println: (...a) => a.map(goString).join(' ') + '\n',
  printf,
  eq: (a, ...bs) => bs.some((b) => cmp(a, b)),
  ne: (a, b) => !cmp(a, b),
  lt: (a, b) => a < b,
  le: (a, b) => a <= b,
  gt: (a, b) => a > b,
  ge: (a, b) => a >= b,
  html: (...a) => new Safe(esc(a.map(goString).join(''))),
  js: (...a) => JSON.stringify(a.map(goString).join('')).slice(1, -1).replace(/</g, '\\u003C').replace(/>/g, '\\u003E').replace(/'/g, "\\'"),
  urlquery: (...a) => encodeURIComponent(a.map(goString).join('')),
  call: (fn, ...a) => fn(...a),
  raw: (s) => new Safe(goString(s)),
};

