/**
 * What the hook files register while they load: event handlers (`onRecordCreate(fn, "posts")`),
 * routes (`routerAdd`, with their middlewares; `routerUse` for all), cron jobs (`cronAdd`,
 * `cronRemove`). The host learns the list (`regs`) and later runs a handler by its index.
 */

export interface Reg {
  kind: 'event' | 'route' | 'cron' | 'cronRemove';
  event?: string;
  collections?: string[];
  method?: string;
  path?: string;
  name?: string;
  schedule?: string;
  file: string;
  gen: 22 | 23;
  source?: string;
}

/** `sources`: keep each handler's source text in its registration (for the main-thread try's straight-line check). */
export function registrations(sources: boolean) {
  const regs: Reg[] = [];
  const fns: any[] = [];
  /**
   * Whether a handler's `e.next()` may be deferred: not when its source has a `try`, which could
   * catch what `e.next()` throws (a deferred one throws after the handler has ended).
   */
  const deferrable: boolean[] = [];
  const routeMw: any[][] = [];
  const globalMw: any[] = [];
  const at: { file: string; gen: 22 | 23 } = { file: '', gen: 23 };
  const register = (reg: Omit<Reg, 'file' | 'gen'>, fn: any, mws: any[] = []) => {
    if (typeof fn !== 'function') throw new TypeError(`${reg.event ?? reg.kind}: the handler must be a function`);
    regs.push({ ...reg, file: at.file, gen: at.gen, ...(sources ? { source: Function.prototype.toString.call(fn) } : {}) });
    fns.push(fn);
    deferrable.push(!/\btry\b/.test(Function.prototype.toString.call(fn)));
    routeMw.push(mws);
  };
  /** `onX(handler, ...collections)`, and also `onX(collection, handler)`, which some apps write. */
  const hook =
    (event: string) =>
    (fn: any, ...collections: any[]) => {
      if (typeof fn === 'string' && typeof collections[collections.length - 1] === 'function') {
        const handler = collections.pop();
        collections.unshift(fn);
        fn = handler;
      }
      register({ kind: 'event', event, collections: collections.flat().map(String) }, fn);
    };
  const globals = {
    routerAdd: (method: string, path: string, fn: any, ...mws: any[]) => register({ kind: 'route', method: String(method).toUpperCase(), path: String(path) }, fn, mws.flat()),
    routerUse: (...mws: any[]) => globalMw.push(...mws.flat()),
    routerPre: (...mws: any[]) => globalMw.push(...mws.flat()),
    cronAdd: (name: string, schedule: string, fn: any) => register({ kind: 'cron', name: String(name), schedule: String(schedule) }, fn),
    cronRemove: (name: string) => register({ kind: 'cronRemove', name: String(name) }, () => undefined),
  };
  return { regs, fns, deferrable, routeMw, globalMw, at, hook, globals };
}

export type Registrations = ReturnType<typeof registrations>;
