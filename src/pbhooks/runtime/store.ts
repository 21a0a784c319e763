/**
 * `$app.store()`: PocketBase's app-wide key/value store. pb_hooks handlers run in several workers, so
 * the values live in the host (`call('store', method, …)`) and are shared by all of them, as one
 * process's store is in PocketBase; a value must therefore be JSON (a function stored is lost).
 */
import type { Realm } from './realm.ts';

export function storeApi(rt: Realm) {
  const op = (method: string, ...args: any[]) => rt.call('store', method, ...args);
  const store = {
    get: (key: string) => op('get', String(key)) ?? null,
    set: (key: string, value: any) => void op('set', String(key), value),
    has: (key: string) => op('has', String(key)) === true,
    remove: (key: string) => void op('remove', String(key)),
    removeAll: () => void op('removeAll'),
    reset: (data: any) => void op('reset', data ?? {}),
    getAll: () => op('getAll') ?? {},
    values: () => op('values') ?? [],
    length: () => Number(op('length') ?? 0),
    /** Sets the value unless the store already holds `max` keys: whether it did. */
    setIfLessThanLimit: (key: string, value: any, max: number) => op('setIfLessThanLimit', String(key), value, Number(max)) === true,
    getOrSet: (key: string, make: () => any) => {
      if (store.has(key)) return store.get(key);
      const value = make();
      store.set(key, value);
      return value;
    },
    setFunc: (key: string, fn: (old: any) => any) => {
      const value = fn(store.get(key));
      store.set(key, value);
      return value;
    },
  };
  return store;
}
