import type { ServiceSlot } from './facade.ts';
import type { HookSet, LoadedPbHooks } from './registry.ts';

/**
 * Loads the pb_hooks of `dir` (and `extraFiles`, `*.pb.js` from the hooks directory) into `set`: src/pbhooks' `loadPbHooks`, handed to HookRuntime by whoever
 * creates it (src/http/host.ts). pb_hooks builds on hooks/, so hooks/ never imports it.
 */
export type PbHooksLoader = (dir: string, set: HookSet, slot: ServiceSlot, timeoutMs: number, extraFiles?: string[]) => Promise<LoadedPbHooks | undefined>;
