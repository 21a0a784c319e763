/**
 * Running a route registered with `routerAdd`: the global (`routerUse`) then the route's middlewares,
 * `$apis.require…()` markers checked here, ≥ 0.23's `e.next()` or v0.22's `(next) => (c) => …`
 * wrappers, then the handler; a value it returns is answered as JSON.
 */
import { checkApis } from './apis.ts';
import type { Reg, Registrations } from './registrations.ts';

export function routeRunner(registry: Registrations, routeContext: (req: any, out: any) => any) {
  const { regs, routeMw, globalMw } = registry;
  function runRoute(reg: Reg, fn: any, req: any) {
    const out: any = { answer: null, headers: {} };
    const c = routeContext(req, out);
    // By priority, lower first, in the order they were added otherwise (PocketBase's router sorts so).
    const priority = (mw: any) => (mw && typeof mw === 'object' && typeof mw.func === 'function' ? Number(mw.priority) || 0 : 0);
    const mws = [...globalMw, ...routeMw[regs.indexOf(reg)]].map((mw, i) => ({ mw, i })).sort((a, b) => priority(a.mw) - priority(b.mw) || a.i - b.i).map((x) => x.mw);
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
  
  return runRoute;
}
