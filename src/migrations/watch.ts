import type { CollectionService } from '../collections/service.ts';
import type { DatabaseRegistry } from '../storage/index.ts';

/** How often a running server looks for migrations applied by another process. */
export const WATCH_INTERVAL_MS = 1000;

/**
 * `cairn migrate` may apply or roll back a migration while a server runs on the same data directory
 * (the apply lock keeps the two from interleaving). The server caches collections and the database
 * list, so it looks at the migration journal once a second, off the request path, and when it has
 * changed reloads the database list and drops its cached collections. Its own applies change the
 * journal too; reloading after them is harmless.
 */
export function watchMigrationJournal(registry: DatabaseRegistry, collections: CollectionService, intervalMs = WATCH_INTERVAL_MS): () => void {
  let last: string | undefined;
  let running = false;
  const fingerprint = async () => {
    const row = await registry.system.get<{ n: number; u: string; d: number }>(
      "SELECT (SELECT COUNT(*) FROM _migrations) AS n, (SELECT COALESCE(MAX(updated), '') FROM _migrations) AS u, (SELECT COUNT(*) FROM _databases) AS d",
    );
    return `${row?.n}/${row?.u}/${row?.d}`;
  };
  const check = async () => {
    if (running) return;
    running = true;
    try {
      const now = await fingerprint();
      if (last !== undefined && now !== last) {
        await registry.reload();
        for (const info of registry.list()) {
          const db = registry.opened(info.name);
          if (db) collections.forget(db);
        }
      }
      last = now;
    } catch {
      // The registry is closing, or a busy moment: the next tick tries again.
    } finally {
      running = false;
    }
  };
  void check();
  const timer = setInterval(() => void check(), intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
