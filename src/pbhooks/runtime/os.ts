/**
 * `$os` (environment, files, commands) and `$http.send` (outbound HTTP, done by the host). Files
 * written after a deferred `e.next()` are written once it has succeeded, as in PocketBase.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import nodePath from 'node:path';
import type { Realm } from './realm.ts';

export function osApi(rt: Realm) {
  const settle = () => rt.settle();
  const $os = {
    getenv: (name: string) => process.env[name] ?? '',
    readFile: (p: string) => fs.readFileSync(p),
    // Files written after a deferred e.next() are written once it has succeeded, as in PocketBase.
    writeFile: (p: string, data: any, perm?: number) => {
      settle();
      fs.writeFileSync(String(p), typeof data === 'string' ? data : Buffer.from(data ?? []), perm ? { mode: perm } : undefined);
    },
    mkdirAll: (p: string, perm?: number) => {
      settle();
      fs.mkdirSync(String(p), { recursive: true, mode: perm });
    },
    remove: (p: string) => {
      settle();
      fs.rmSync(String(p), { force: true });
    },
    removeAll: (p: string) => {
      settle();
      fs.rmSync(String(p), { recursive: true, force: true });
    },
    stat: (p: string) => { const st = fs.statSync(String(p)); return { name: () => nodePath.basename(String(p)), size: () => st.size, isDir: () => st.isDirectory(), modTime: () => st.mtime.toISOString() }; },
    readDir: (p: string) => fs.readdirSync(p),
    dirFS: (p: string) => ({ __dir: nodePath.resolve(String(p)) }),
    exit: () => {
      throw new Error('$os.exit is not available in Cairn');
    },
    args: () => [],
    /** A command run when asked (`output()`, `combinedOutput()`, `run()`); blocks this worker only. */
    cmd: (name: string, ...args: string[]) => {
      
      const exec = () => spawnSync(String(name), args.map(String), { encoding: 'buffer', timeout: 60000 });
      const check = (r: any) => {
        if (r.error) throw r.error;
        if (r.status !== 0) throw new Error(`exit status ${r.status}`);
        return r;
      };
      return { output: () => check(exec()).stdout, combinedOutput: () => { const r = check(exec()); return Buffer.concat([r.stdout, r.stderr]); }, run: () => void check(exec()) };
    },
    hostname: () => os.hostname(),
  };
  const $http = {
    send: (config: any) => {
      const res = rt.call('http', { url: config.url, method: config.method ?? 'GET', body: config.body ?? '', headers: config.headers ?? {}, timeout: config.timeout ?? 120 });
      return res;
    },
  };
  return { $os, $http };
}
