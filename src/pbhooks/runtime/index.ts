/**
 * PocketBase's JavaScript API (pb_hooks' and pb_migrations' globals: `$app`, `Record`, `Collection`,
 * `$dbx`, `$os`, `$http`, `$template`, …) as one runtime over a `node:vm` context. One runtime serves:
 *
 * - the pb_hooks workers: worker-entry.ts, bundled by esbuild into the worker's script (bundle.ts);
 * - the main-thread try of straight-line handlers (../main-runtime.ts);
 * - pb_migrations, whose files run in the same globals.
 *
 * Entry: `createPbRuntime({ bridge, hooksDir })`. The bridge answers `$app` operations synchronously
 * (realm.ts, HostBridge): on the main thread directly, in a worker through shared memory. Then:
 *
 *   const runtime = createPbRuntime({ bridge, hooksDir: dir });
 *   runtime.evaluate(file);               // a *.pb.js file (or a migration) runs in the context
 *   runtime.regs                          // what it registered (routes, events, cron)
 *   runtime.run(index, payload)           // runs registration `index`; its result, plain JSON
 *
 * `migrate(up, down)` is a no-op unless `options.migrate` receives the calls (pb_migrations).
 * Each module is built per runtime from one Realm, so runtimes in one process share no state.
 */
import fs from 'node:fs';
import vm from 'node:vm';
import { apisApi } from './apis.ts';
import { appApi } from './app.ts';
import { dbApi } from './db.ts';
import { serialize } from './errors.ts';
import { eventsApi } from './events.ts';
import { filesystemApi } from './file.ts';
import { pbGlobals } from './globals.ts';
import { generation, requireIn } from './loader.ts';
import { loggerApi } from './log.ts';
import { mailsApi } from './mail.ts';
import { osApi } from './os.ts';
import { createRealm, plain, type HostBridge } from './realm.ts';
import { recordClass, type RecordClass } from './record.ts';
import { registrations, type Reg } from './registrations.ts';
import { requestApi } from './request.ts';
import { routeRunner } from './route.ts';
import { schemaGlobals } from './schema.ts';
import { storeApi } from './store.ts';

export type { HostBridge } from './realm.ts';
export type { Reg } from './registrations.ts';
export { serialize } from './errors.ts';

export interface PbRuntimeOptions {
  bridge: HostBridge;
  /** `__hooks`, and where `require("./x")` of the top-level files starts. */
  hooksDir: string;
  /** The context to install the globals into; a fresh one by default. */
  context?: vm.Context;
  /** Keep each handler's source in its registration (the main-thread try reads them). */
  sources?: boolean;
  /** Receives `migrate(up, down)` calls (pb_migrations); without it `migrate` does nothing. */
  migrate?: (up: unknown, down: unknown) => void;
}

export interface PbRuntime {
  readonly context: vm.Context;
  /** The globals installed in the context, by name. */
  readonly globals: Record<string, any>;
  readonly regs: Reg[];
  /** Runs a file in the context (its source read from disk unless given), as a `*.pb.js` file runs. */
  evaluate(file: string, source?: string): void;
  /** Runs registration `index` with the host's payload; its result as plain JSON. Throws what the handler threw. */
  run(index: number, payload: any): any;
  /** Does a deferred `e.next()` now (what a handler's error leaves behind is written first). */
  settle(): void;
}

export function createPbRuntime(options: PbRuntimeOptions): PbRuntime {
  const rt = createRealm(options.bridge, options.context);
  const { context } = rt;
  const Record = recordClass(rt);
  const { db, RecordQuery } = dbApi(rt, Record);
  const { logger, console } = loggerApi(rt);
  const app = appApi(rt, Record, db, RecordQuery, logger);
  const store = storeApi(rt);
  app.$app.store = () => store;
  app.dao.store = () => store;
  const { $os, $http } = osApi(rt);
  const Admin = adminClass(Record);
  const registry = registrations(options.sources === true);
  const request = requestApi(rt, Record, app.$app, logger);
  const events = eventsApi({ rt, Record, $app: app.$app, dao: app.dao, mailClient: app.mailClient, registry, ...request });
  const runRoute = routeRunner(registry, request.routeContext);
  const globals = pbGlobals({
    rt,
    hooksDir: options.hooksDir,
    Record,
    RecordUpsertForm: app.RecordUpsertForm,
    $app: app.$app,
    $apis: apisApi(rt),
    $http,
    $os,
    $filesystem: filesystemApi(rt),
    $mails: mailsApi(rt, Record),
    console,
    registration: registry.globals,
    extra: { ...schemaGlobals(rt, app), ...(options.migrate ? { migrate: options.migrate } : {}) },
  });
  for (const [k, v] of Object.entries(globals)) context[k] = v;
  const known = new Set(Object.keys(globals));
  const modules = new Map<string, any>();

  function evaluate(file: string, source?: string): void {
    const src = source ?? fs.readFileSync(file, 'utf8');
    registry.at.file = file;
    registry.at.gen = generation(src);
    // Every `onX(` registration the file uses exists (the ones Cairn does not fire register and are listed).
    for (const m of src.matchAll(/\b(on[A-Z][A-Za-z0-9]*)\s*\(/g)) if (!known.has(m[1])) context[m[1]] = registry.hook(m[1]);
    context.require = requireIn(context, modules, options.hooksDir);
    // A file that assigns `module.exports` at its top level (goja_nodejs gives every script one).
    context.module = { exports: {} };
    context.exports = context.module.exports;
    new vm.Script(src, { filename: file }).runInContext(context);
  }

  function run(index: number, payload: any): any {
    const reg = registry.regs[index];
    const fn = registry.fns[index];
    rt.runningGen = reg.gen;
    let result: any;
    if (reg.kind === 'event' && payload?.kind === 'read') result = events.runRead(reg, fn, payload);
    else if (reg.kind === 'event' && payload?.kind === 'mail') result = events.runMail(reg, fn, payload);
    else if (reg.kind === 'event' && payload?.kind === 'realtime') result = events.runRealtime(reg, fn, payload);
    else if (reg.kind === 'event' && payload?.kind) result = events.runHeld(reg, fn, payload);
    else if (reg.kind === 'event') result = events.runEvent(reg, fn, payload);
    else if (reg.kind === 'route') result = runRoute(reg, fn, payload);
    else {
      fn(payload ?? {});
      result = {};
    }
    return plain(result);
  }

  return { context, globals, regs: registry.regs, evaluate, run, settle: () => rt.settle() };
}

/** v0.22's `Admin` model: a record of `_superusers` whose email is a property, as that API had it. */
function adminClass(Record: RecordClass) {
  class Admin extends Record {
    constructor(data?: any) {
      super({ id: '', name: '_superusers', type: 'auth' });
      if (data) for (const [k, v] of Object.entries(data)) k === 'password' ? this.setPassword(String(v)) : this.set(k, v);
    }
  }
  // Record's email() is a method; v0.22's Admin has a field.
  Object.defineProperty(Admin.prototype, 'email', {
    get(this: InstanceType<RecordClass>) {
      return this.getString('email');
    },
    set(this: InstanceType<RecordClass>, v: any) {
      this.set('email', String(v));
    },
  });
  return Admin;
}

/**
 * Runs registration `index` as a host expects: `{ type: 'done', result }` or `{ type: 'fail', error }`
 * (serialized). A write deferred before the handler threw is done first: had it failed, `e.next()`
 * would have thrown, so its error is the one reported.
 */
export function runForHost(runtime: PbRuntime, index: number, payload: any): { type: 'done'; result: any } | { type: 'fail'; error: any } {
  try {
    return { type: 'done', result: runtime.run(index, payload) };
  } catch (err) {
    let error = err;
    try {
      runtime.settle();
    } catch (failed) {
      error = failed;
    }
    return { type: 'fail', error: serialize(error) };
  }
}
