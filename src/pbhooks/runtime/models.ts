/**
 * `new DynamicModel({...})` and `arrayOf(model)`: the shapes `$app.db()` queries read rows into
 * (`one(model)`, `all(arrayOf(model))`), with `fill` converting a row to a model's value types.
 */
export class DynamicModel {
  constructor(shape: any = {}) {
    Object.assign(this, shape);
  }
}
/**
 * PocketBase's `nullString()`, `nullInt()`, `nullFloat()`, `nullBool()`, `nullArray()`, `nullObject()`
 * (v0.35): a DynamicModel field whose column may be NULL, read as `null` then and as its type otherwise.
 */
class Nullable {
  constructor(readonly kind: 'string' | 'number' | 'bool' | 'array' | 'object') {}
}
export const nullables = {
  nullString: () => new Nullable('string'),
  nullInt: () => new Nullable('number'),
  nullFloat: () => new Nullable('number'),
  nullBool: () => new Nullable('bool'),
  nullArray: () => new Nullable('array'),
  nullObject: () => new Nullable('object'),
};

export function arrayOf(model: any) {
  const arr: any = [];
  Object.defineProperty(arr, '__model', { value: model, enumerable: false });
  return arr;
}
/** A row into a model's shape: the model's values say the types (0 → number, false → boolean). */
export function fill(model: any, row: any) {
  const out: any = model instanceof DynamicModel ? new DynamicModel({}) : {};
  const shape = model ?? {};
  const keys = Object.keys(shape).length ? Object.keys(shape) : Object.keys(row);
  for (const k of keys) {
    let v = row[k];
    let z = shape[k];
    if (z instanceof Nullable) {
      if (v === null || v === undefined) {
        out[k] = null;
        continue;
      }
      z = z.kind === 'string' ? '' : z.kind === 'number' ? 0 : z.kind === 'bool' ? false : z.kind === 'array' ? [] : {};
    }
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
