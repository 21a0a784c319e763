/**
 * `$os` (environment, files, commands) and `$http.send` (outbound HTTP, done by the host). Files
 * written after a deferred `e.next()` are written once it has succeeded, as in PocketBase.
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import nodePath from 'node:path';
import { PbFormData } from './file.ts';
import { fileInfo, readDirEntries } from './filepath.ts';
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
    mkdir: (p: string, perm?: number) => {
      settle();
      fs.mkdirSync(String(p), { mode: perm });
    },
    // As Go's os.Remove: a file or an empty directory, an error when there is none.
    remove: (p: string) => {
      settle();
      if (fs.lstatSync(String(p)).isDirectory()) fs.rmdirSync(String(p));
      else fs.unlinkSync(String(p));
    },
    removeAll: (p: string) => {
      settle();
      fs.rmSync(String(p), { recursive: true, force: true });
    },
    rename: (from: string, to: string) => {
      settle();
      fs.renameSync(String(from), String(to));
    },
    truncate: (p: string, size: number) => {
      settle();
      fs.truncateSync(String(p), Number(size) || 0);
    },
    stat: (p: string) => fileInfo(String(p), fs.statSync(String(p))),
    readDir: (p: string) => readDirEntries(String(p)),
    tempDir: () => os.tmpdir(),
    getwd: () => process.cwd(),
    dirFS: (p: string) => ({ __dir: nodePath.resolve(String(p)) }),
    openRoot: (p: string) => openRoot(rt, nodePath.resolve(String(p))),
    openInRoot: (dir: string, name: string) => openRoot(rt, nodePath.resolve(String(dir))).open(name),
    exit: () => {
      throw new Error('$os.exit is not available in Cairn');
    },
    // Go's os.Args: the program and its arguments.
    args: process.argv.slice(1),
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
  // PocketBase keeps `exec` as the deprecated name of `cmd`.
  Object.assign($os, { exec: $os.cmd });
  const $http = {
    send: (config: any) => {
      const body = config.body instanceof PbFormData ? config.body.toJSON() : (config.body ?? '');
      const res = rt.call('http', { url: config.url, method: config.method ?? 'GET', body, headers: config.headers ?? {}, timeout: config.timeout ?? 120 });
      return res;
    },
  };
  return { $os, $http };
}

/**
 * Go's os.Root (`$os.openRoot`): file operations confined to one directory. A name that is absolute,
 * or that leads out of the directory (`..`, a symbolic link pointing elsewhere), is refused as Go
 * refuses it ("path escapes from parent").
 */
function openRoot(rt: Realm, root: string): any {
  const settle = () => rt.settle();
  const inside = (name: unknown): string => {
    const n = String(name);
    const target = nodePath.resolve(root, n);
    const realRoot = fs.realpathSync(root);
    const escapes = (p: string) => p !== realRoot && !p.startsWith(`${realRoot}/`);
    // The deepest part that exists, with its links followed, must still be inside.
    let existing = target;
    while (!fs.existsSync(existing) && existing !== nodePath.dirname(existing)) existing = nodePath.dirname(existing);
    if (nodePath.isAbsolute(n) || escapes(nodePath.resolve(realRoot, nodePath.relative(root, target))) || escapes(fs.realpathSync(existing))) {
      throw new Error(`openat ${n}: path escapes from parent`);
    }
    return target;
  };
  const file = (p: string, fd: number) => ({
    name: () => p,
    stat: () => fileInfo(p, fs.fstatSync(fd)),
    write: (data: any) => fs.writeSync(fd, typeof data === 'string' ? Buffer.from(data) : Buffer.from(data ?? [])),
    writeString: (text: string) => fs.writeSync(fd, String(text)),
    readDir: () => readDirEntries(p),
    close: () => fs.closeSync(fd),
    // What toString(file) reads, as PocketBase's toString reads an io.Reader.
    __read: () => fs.readFileSync(fd),
  });
  return {
    name: () => root,
    close: () => undefined,
    fs: () => ({ __dir: root }),
    open: (name: string) => {
      const p = inside(name);
      return file(p, fs.openSync(p, 'r'));
    },
    create: (name: string) => {
      settle();
      const p = inside(name);
      return file(p, fs.openSync(p, 'w+'));
    },
    openRoot: (name: string) => openRoot(rt, inside(name)),
    readFile: (name: string) => fs.readFileSync(inside(name)),
    writeFile: (name: string, data: any, perm?: number) => {
      settle();
      fs.writeFileSync(inside(name), typeof data === 'string' ? data : Buffer.from(data ?? []), perm ? { mode: perm } : undefined);
    },
    mkdir: (name: string, perm?: number) => {
      settle();
      fs.mkdirSync(inside(name), { mode: perm });
    },
    mkdirAll: (name: string, perm?: number) => {
      settle();
      fs.mkdirSync(inside(name), { recursive: true, mode: perm });
    },
    remove: (name: string) => {
      settle();
      const p = inside(name);
      if (fs.lstatSync(p).isDirectory()) fs.rmdirSync(p);
      else fs.unlinkSync(p);
    },
    removeAll: (name: string) => {
      settle();
      fs.rmSync(inside(name), { recursive: true, force: true });
    },
    rename: (from: string, to: string) => {
      settle();
      fs.renameSync(inside(from), inside(to));
    },
    stat: (name: string) => fileInfo(inside(name), fs.statSync(inside(name))),
    lstat: (name: string) => fileInfo(inside(name), fs.lstatSync(inside(name))),
  };
}
