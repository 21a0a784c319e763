/**
 * PocketBase's `pb_hooks/*.pb.js`, run as they are (API contract §22).
 *
 * The files run in worker threads (pool.ts, runtime/), each evaluating them all in a `node:vm` context
 * with PocketBase's globals. What they register becomes handlers of the TypeScript hooks' set
 * (record events, routes, cron jobs), so they share its chain, transactions, time limit and cron
 * claim. A handler runs in one idle worker; its synchronous `$app` calls come here as messages,
 * are done with the event's `app` (bound to the write's transaction inside a record event), and
 * answered on the worker's port while it waits on a shared integer. A handler past the time limit
 * has its worker terminated and replaced: the request answers 503, the server never waits on it.
 */
import path from 'node:path';
import { folderFiles, isPbHookFile } from '../lib/folder-files.ts';
import { hookApp, type ServiceSlot } from '../hooks/facade.ts';
import type { HookSet } from '../hooks/registry.ts';
import { HookLoadError } from '../hooks/load-error.ts';
import { BOOTSTRAP, CRON_MACROS, EVENTS, pbRoutePath } from './catalogue.ts';
import { otherEventHandler, type PbHandlerContext, routeHandler, writeHandler } from './handlers.ts';
import { MainRuntime } from './main-runtime.ts';
import { type PbLog, PbPool, type PbRegistration } from './pool.ts';
import { opsFor } from './ops.ts';

export type { PbRegistration } from './pool.ts';

/** The `*.pb.js` files directly in `dir`, in name order (PocketBase's order); none without the folder. */
export function pbHookFiles(dir: string | undefined): string[] {
  if (!dir) return [];
  const unreadable = (err: Error) => new HookLoadError(`cannot read the pb_hooks directory: ${err.message}`, dir);
  return folderFiles(dir, isPbHookFile, unreadable).map((name) => path.join(dir, name));
}

/** A loaded `pb_hooks` folder. */
export interface PbLoaded {
  pool: PbPool;
  registrations: PbRegistration[];
  /** What Cairn does not fire (registered, listed, never called). */
  unsupported: string[];
  /** Runs `onBootstrap`/`onAfterBootstrap`/`onServe` handlers, once, when the app serves. */
  bootstrap(): Promise<void>;
  /** Runs `onTerminate` handlers, once, as the server stops (before its services close). */
  terminate(): Promise<void>;
}

/**
 * Loads `dir`'s `*.pb.js` files into `set`: record events, routes and cron jobs become the set's
 * handlers, each running its registration in the pool. Throws a `HookLoadError` naming the file
 * (and line) of a file that does not load. Undefined when there are no files.
 */
export async function loadPbHooks(dir: string | undefined, set: HookSet, slot: ServiceSlot, timeoutMs: number, extraFiles: string[] = []): Promise<PbLoaded | undefined> {
  const files = [...new Set([...pbHookFiles(dir), ...extraFiles])];
  if (files.length === 0) return undefined;
  const log: PbLog = (level, msg, data) => {
    const l = slot.current?.log ?? slot.log;
    (l as any)?.[level in { debug: 1, info: 1, warn: 1, error: 1 } ? level : 'info']?.(data ?? {}, msg);
  };
  const pool = new PbPool(files, dir!, timeoutMs, log);
  const registrations = await pool.start();
  const main = MainRuntime.load(files, dir!, registrations, log);
  const ctx: PbHandlerContext = { pool, slot, main, log };
  const unsupported: string[] = [];
  const bootstraps: number[] = [];
  const terminates: number[] = [];
  try {
    registrations.forEach((reg, index) => {
      const at = { index, source: reg.file };
      if (reg.kind === 'event') {
        if (BOOTSTRAP.has(reg.event!)) bootstraps.push(index);
        else if (reg.event === 'onTerminate') terminates.push(index);
        else {
          const mapped = EVENTS[reg.event!];
          if (!mapped) {
            unsupported.push(`${reg.event} (${path.basename(reg.file)})`);
            return;
          }
          const gen = mapped.gen ?? reg.gen;
          const kind = mapped.kind ?? 'write';
          const handler = kind === 'write' ? writeHandler(ctx, at, { on: mapped.on, api: mapped.api, gen }) : otherEventHandler(ctx, at, kind, gen, mapped.method);
          set.bind(mapped.on, handler, mapped.tags ?? reg.collections ?? [], reg.file);
        }
      } else if (reg.kind === 'route') {
        set.addRoute(reg.method === 'ANY' ? 'GET' : reg.method!, pbRoutePath(reg.path!), routeHandler(ctx, at, reg.path!), [], reg.file);
      } else if (reg.kind === 'cron') {
        const app = hookApp(slot, reg.file);
        set.addCron(reg.name!, CRON_MACROS[reg.schedule!.trim()] ?? reg.schedule!, () => pool.run(index, {}, opsFor(slot, app, 'main')), reg.file);
      } else if (reg.kind === 'cronRemove') {
        set.crons.delete(reg.name!);
      }
    });
  } catch (err) {
    pool.close();
    throw err instanceof HookLoadError ? err : new HookLoadError(err instanceof Error ? err.message : String(err), files[0]);
  }
  /** Runs each of `indexes` once, in order, with `payload` (errors logged: the server goes on, or on stopping). */
  const runOnce = (indexes: number[], payload: Record<string, unknown>, what: string) => {
    let ran = false;
    return async () => {
      if (ran || indexes.length === 0) return;
      ran = true;
      for (const index of indexes) {
        const source = registrations[index].file;
        const app = hookApp(slot, source);
        try {
          await pool.run(index, payload, opsFor(slot, app, 'main', { next: async () => undefined }));
        } catch (err) {
          log('error', `a pb_hooks ${what} handler failed`, { hook: source, err: err instanceof Error ? err.message : String(err) });
        }
      }
    };
  };
  return {
    pool,
    registrations,
    unsupported,
    bootstrap: runOnce(bootstraps, {}, 'bootstrap'),
    // PocketBase's e.isRestart: Cairn restarts by starting anew.
    terminate: runOnce(terminates, { isRestart: false }, 'terminate'),
  };
}

