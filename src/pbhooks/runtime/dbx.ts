/**
 * `$dbx`: PocketBase's query-builder expressions (`hashExp`, `and`, `in`, `like`, …) as SQL text
 * with `{:name}` placeholders, which the host runs as it runs `$app.db().newQuery(…)`. Pure.
 */

/** An expression: `build` writes its SQL and puts its values in `params`. */
export class DbxExp {
  constructor(readonly build: (params: any) => string) {}
}
let dbxCounter = 0;
/** A value as a fresh placeholder. */
export const ph = (params: any, v: any) => {
  const name = `dbx_p${dbxCounter++}`;
  params[name] = v;
  return `{:${name}}`;
};
/** `title`, `p.title`, `p.title AS t` quoted as identifiers; anything else (functions, `*`) as written. */
export function quoteName(name: any): string {
  const s = String(name).trim();
  const part = (x: string) => (x === '*' ? x : `"${x.replace(/"/g, '""')}"`);
  const ident = /^[A-Za-z_][\w]*(\.([A-Za-z_][\w]*|\*))*$/;
  if (ident.test(s)) return s.split('.').map(part).join('.');
  const m = /^(.+?)\s+(?:as\s+)?([A-Za-z_]\w*)$/i.exec(s);
  if (m && ident.test(m[1])) return `${quoteName(m[1])} AS ${part(m[2])}`;
  return s;
}
export const built = (e: any, params: any): string => {
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
export const $dbx = {
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

/** dbx binds a Go nil, which an undefined value of a JS object is: NULL, not a missing parameter. */
export function bindInto(target: any, params: any): void {
  for (const [k, v] of Object.entries(params ?? {})) target[k] = v === undefined ? null : v;
}
