import { watch } from 'node:fs';
import type { Logger } from '../lib/logger.ts';
import type { HookRuntime } from './runtime.ts';

// Editors write a file in several steps (truncate, write, rename): one reload after they settle.
const SETTLE_MS = 150;

/**
 * Development mode (`cairn serve --dev`): reloads the hooks when a file under `dir` changes, without
 * touching the server or its connections. A load that fails keeps the previous hooks and logs why
 * (the hooks screen shows it too). Returns what stops watching.
 */
export function watchHooks(dir: string, runtime: HookRuntime, log: () => Logger): () => void {
  let timer: NodeJS.Timeout | undefined;
  let reloading: Promise<void> = Promise.resolve();
  const reload = () => {
    reloading = reloading.then(async () => {
      const failure = await runtime.reload();
      if (failure) log().error({ file: failure.file, line: failure.line }, `hooks not reloaded, the previous ones stay: ${failure.message}`);
      else log().info({ files: runtime.current.files.length }, 'hooks reloaded');
    });
  };
  let watcher: ReturnType<typeof watch> | undefined;
  try {
    watcher = watch(dir, { recursive: true }, (_event, name) => {
      if (name && /(^|[/\\])(node_modules|\.git)([/\\]|$)/.test(String(name))) return;
      clearTimeout(timer);
      timer = setTimeout(reload, SETTLE_MS);
    });
  } catch (err) {
    log().warn({ err, dir }, 'cannot watch the hooks directory; hooks will not reload');
  }
  return () => {
    clearTimeout(timer);
    watcher?.close();
  };
}
