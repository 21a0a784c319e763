import { hostname } from 'node:os';
import { conflict } from '../errors.ts';
import { randomSecret } from '../lib/ids.ts';
import { nowIso } from '../lib/time.ts';
import type { DatabaseRegistry } from '../storage/index.ts';

/**
 * The apply lock. On PostgreSQL a session advisory lock, held by any node. On SQLite a row in
 * system.db's `_migrations_lock`, so that an apply or rollback started while
 * another runs, in this process or another one on the same data directory (the CLI beside a
 * server), is refused with a 409 instead of interleaving with it. A row left by a process that died
 * on this host is taken over.
 */

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

interface LockRow {
  owner: string;
  pid: number;
  host: string;
  acquired: string;
}

const BUSY = 'Another migration is being applied or rolled back; try again when it has finished.';

/** Takes the lock or throws 409; resolves with the function that releases it. */
export async function acquireApplyLock(registry: DatabaseRegistry): Promise<() => Promise<void>> {
  const { backend } = registry;
  if (backend.tryLock) {
    // Shared PostgreSQL: a lock that ends with the session of whoever holds it, on any node.
    const release = await backend.tryLock('cairn.migrations.apply');
    if (!release) throw conflict(BUSY);
    return release;
  }
  const system = registry.system;
  const owner = randomSecret(12);
  const host = hostname();
  await system.transaction(async (tx) => {
    const held = await tx.get<LockRow>('SELECT owner, pid, host, acquired FROM _migrations_lock WHERE id = 1');
    if (held) {
      if (held.host === host && !alive(held.pid)) {
        await tx.run('DELETE FROM _migrations_lock WHERE id = 1');
      } else {
        throw conflict(`Another migration is being applied or rolled back (process ${held.pid} on ${held.host}, since ${held.acquired}); try again when it has finished.`);
      }
    }
    await tx.run('INSERT INTO _migrations_lock (id, owner, pid, host, acquired) VALUES (1, ?, ?, ?, ?)', [owner, process.pid, host, nowIso()]);
  });
  return async () => {
    await system.run('DELETE FROM _migrations_lock WHERE id = 1 AND owner = ?', [owner]);
  };
}
