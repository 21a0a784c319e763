import { type FSWatcher, mkdirSync, watch } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { randomId } from '../../lib/ids.ts';
import type { ProcessNotices } from '../backend.ts';

// Notices that come together (a migration touching several collections) are taken as one.
const DEBOUNCE_MS = 30;

/**
 * Cache notices between the processes that open one SQLite data directory: a server, and a command
 * run beside it (`cairn superuser ips`, `migrate up`, `import`), as PocketBase ≥ 0.38 syncs them
 * through `pb_data/.notify`. A notice is a file made and removed again in `<dir>/.notify`, named
 * `<topic>.<database or ->.<process tag>.<n>`; every other process watching the folder (inotify and
 * its kin, no polling) drops what it names. Files never stay: the name is the message.
 */
export class FolderNotices implements ProcessNotices {
  /** This process's name in the files, so it skips its own (a process id repeats across containers). */
  private readonly tag = randomId(10);
  private seq = 0;
  private watcher?: FSWatcher;
  private readonly listeners: Array<(topic: string, key: string | undefined) => void> = [];
  private readonly due = new Map<string, NodeJS.Timeout>();

  constructor(private readonly dir: string) {}

  announce(topic: string, key?: string): void {
    // Topics and database names are letters, digits and underscores: no dot, no dash.
    const file = path.join(this.dir, `${topic}.${key ?? '-'}.${this.tag}.${++this.seq}`);
    // A folder that cannot be written only costs the other processes this notice.
    void writeFile(file, '')
      .then(() => rm(file, { force: true }))
      .catch(() => undefined);
  }

  listen(fn: (topic: string, key: string | undefined) => void): void {
    this.listeners.push(fn);
    if (this.watcher) return;
    try {
      mkdirSync(this.dir, { recursive: true });
      this.watcher = watch(this.dir, (_event, name) => this.seen(typeof name === 'string' ? name : undefined));
      this.watcher.on('error', () => undefined);
      // A command's process ends when its work does, watching or not.
      this.watcher.unref();
    } catch {
      // No folder to watch (a read-only data directory): changes of other processes show at restart.
    }
  }

  private seen(name: string | undefined): void {
    const [topic, key, tag] = name?.split('.') ?? [];
    if (!topic || !key || !tag || tag === this.tag) return;
    const id = `${topic}.${key}`;
    if (this.due.has(id)) return;
    const timer = setTimeout(() => {
      this.due.delete(id);
      for (const fn of this.listeners) fn(topic, key === '-' ? undefined : key);
    }, DEBOUNCE_MS);
    timer.unref();
    this.due.set(id, timer);
  }

  close(): void {
    this.watcher?.close();
    this.watcher = undefined;
    for (const timer of this.due.values()) clearTimeout(timer);
    this.due.clear();
  }
}
