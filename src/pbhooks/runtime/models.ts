/**
 * `new DynamicModel({...})` and `arrayOf(model)`: the shapes `$app.db()` queries read rows into
 * (`one(model)`, `all(arrayOf(model))`), with `fill` converting a row to a model's value types.
 */
export class DynamicModel {
  constructor(shape: any = {}) {
    Object.assign(this, shape);
  }
}
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
