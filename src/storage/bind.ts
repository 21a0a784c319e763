/**
 * Parameters as both drivers bind them: undefined as NULL, booleans as 1/0 (better-sqlite3 binds
 * neither booleans nor undefined; PostgreSQL takes '1'/'0' for integer and boolean columns alike).
 */
export function bindable(params: readonly unknown[] | undefined): unknown[] {
  if (params === undefined || params.length === 0) return [];
  const out = new Array(params.length);
  for (let i = 0; i < params.length; i++) {
    const v = params[i];
    out[i] = v === undefined ? null : v === true ? 1 : v === false ? 0 : v;
  }
  return out;
}
