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

/**
 * Go's file operations over the names `at` resolves (as given for `$os`, kept inside a folder for an
 * os.Root). Writes after a deferred `e.next()` wait until it has succeeded, as in PocketBase.
 */
function fileOps(rt: Realm, at: (name: unknown) => string) {
  const settle = () => rt.settle();
  const bytes = (data: any) => (typeof data === 'string' ? data : Buffer.from(data ?? []));
  return {
    readFile: (p: string) => fs.readFileSync(at(p)),
    writeFile: (p: string, data: any, perm?: number) => {
      settle();
      fs.writeFileSync(at(p), bytes(data), perm ? { mode: perm } : undefined);
    },
    mkdir: (p: string, perm?: number) => {
      settle();
      fs.mkdirSync(at(p), { mode: perm });
    },
    mkdirAll: (p: string, perm?: number) => {
      settle();
      fs.mkdirSync(at(p), { recursive: true, mode: perm });
    },
    // As Go's Remove: a file or an empty directory, an error when there is none.
    remove: (p: string) => {
      settle();
      const target = at(p);
      if (fs.lstatSync(target).isDirectory()) fs.rmdirSync(target);
      else fs.unlinkSync(target);
    },
    removeAll: (p: string) => {
      settle();
      fs.rmSync(at(p), { recursive: true, force: true });
    },
    rename: (from: string, to: string) => {
      settle();
      fs.renameSync(at(from), at(to));
    },
    stat: (p: string) => fileInfo(at(p), fs.statSync(at(p))),
    lstat: (p: string) => fileInfo(at(p), fs.lstatSync(at(p))),
    readDir: (p: string) => readDirEntries(at(p)),
  };
}

export function osApi(rt: Realm) {
  const $os = {
    ...fileOps(rt, String),
    getenv: (name: string) => process.env[name] ?? '',
    truncate: (p: string, size: number) => {
      rt.settle();
      fs.truncateSync(String(p), Number(size) || 0);
    },
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
    ...fileOps(rt, inside),
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
  };
}
