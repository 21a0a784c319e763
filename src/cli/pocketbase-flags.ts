import { existsSync, openSync, readSync, closeSync } from 'node:fs';
import path from 'node:path';
import { type Command, InvalidArgumentError, Option } from 'commander';
import { ConfigError } from '../config.ts';

/**
 * PocketBase's command line, as scripts, Dockerfiles and test set-ups call it (`pocketbase serve
 * --http=0.0.0.0:8090 --dir=pb_data --migrationsDir=…`), taken by `cairn` beside its own flags.
 * PocketBase's persistent flags may stand before or after the command (`pocketbase --dir=x serve`);
 * Go's boolean flags take `--flag`, `--flag=true` and `--flag=false`.
 */

/** A Go boolean flag's value: `--flag` alone is true. */
export function goBool(value: string | boolean | undefined): boolean {
  if (value === undefined || value === true) return true;
  if (value === false) return false;
  const v = value.trim().toLowerCase();
  if (['1', 't', 'true'].includes(v)) return true;
  if (['0', 'f', 'false'].includes(v)) return false;
  throw new InvalidArgumentError('must be true or false.');
}

/** `--http=HOST:PORT` (PocketBase's listen address; `:8090` listens on every interface). */
export function httpAddress(value: string): { host: string; port: string } {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]*)):(\d{1,5})$/.exec(value.trim());
  if (!m || Number(m[3]) > 65535) throw new InvalidArgumentError('must be HOST:PORT, such as 127.0.0.1:8090 or 0.0.0.0:8090.');
  const host = m[1] ?? m[2];
  return { host: host === '' ? '0.0.0.0' : host, port: m[3] };
}

/** PocketBase's `--origins` is a list flag: comma-separated, and it may be repeated. */
export function originList(value: string, previous: string | undefined): string {
  return previous ? `${previous},${value}` : value;
}

/** The flags PocketBase's root command takes (before or after the command), read with `optsWithGlobals()`. */
export interface PocketBaseGlobals {
  dir?: string;
  dev?: boolean;
  hooksDir?: string;
  migrationsDir?: string;
  automigrate?: boolean;
  publicDir?: string;
  indexFallback?: boolean;
}

/**
 * Adds PocketBase's persistent flags to the program, hidden from its help (each command lists those
 * it uses). Flags Cairn has no use for are accepted and ignored, so a script that passes them runs:
 * `--encryptionEnv` (Cairn's settings are not encrypted with a key from the environment),
 * `--queryTimeout` (CAIRN_PG_STATEMENT_TIMEOUT_MS), `--hooksWatch` (`--dev` reloads), `--hooksPool`
 * (workers are sized to the machine).
 */
export function addPocketBaseGlobals(program: Command): void {
  const hidden = (flags: string, parse?: (v: string) => unknown) => {
    const option = new Option(flags).hideHelp();
    if (parse) option.argParser(parse);
    program.addOption(option);
  };
  hidden('--dir <path>');
  hidden('--dev [bool]', goBool);
  hidden('--hooksDir <path>');
  hidden('--migrationsDir <path>');
  hidden('--publicDir <path>');
  hidden('--indexFallback [bool]', goBool);
  hidden('--encryptionEnv <name>');
  hidden('--queryTimeout <seconds>');
  hidden('--hooksWatch [bool]', goBool);
  hidden('--hooksPool <n>');
  hidden('--automigrate [bool]', goBool);
}

/** The same flags, listed in a command's help (the values reach the program's hidden twins). */
export function describePocketBaseFlags(command: Command, which: { dev?: boolean; hooks?: boolean; migrations?: boolean; public?: boolean }): Command {
  if (which.dev) command.addOption(new Option('--dev', 'development mode: reload the hooks when their files change'));
  if (which.hooks) command.addOption(new Option('--hooksDir <path>', "PocketBase's name for --pb-hooks"));
  if (which.migrations) {
    command.addOption(new Option('--migrationsDir <path>', "PocketBase's pb_migrations directory, or off (env CAIRN_PB_MIGRATIONS_DIR, default ./pb_migrations)"));
    command.addOption(
      new Option('--automigrate [bool]', 'write collection changes made through the API as pb_migrations files (env CAIRN_PB_AUTOMIGRATE, default: when the folder exists)').argParser(goBool),
    );
  }
  if (which.public) {
    command.addOption(new Option('--publicDir <path>', 'static files served at / (PocketBase\'s pb_public), or off (env CAIRN_PUBLIC_DIR, default ./pb_public)'));
    command.addOption(new Option('--indexFallback [bool]', 'missing paths under / answer index.html, for single-page apps (env CAIRN_INDEX_FALLBACK, default true)'));
  }
  return command;
}

const SQLITE_HEADER = 'SQLite format 3\0';

/**
 * Refuses a data directory that is PocketBase's (`pb_data`: a `data.db`, no Cairn `system.db`): Cairn
 * keeps its data in its own layout, and says in one line how to bring PocketBase's over.
 */
export function refusePocketBaseDataDir(dir: string): void {
  const dataDb = path.join(dir, 'data.db');
  if (!existsSync(dataDb) || existsSync(path.join(dir, 'system.db'))) return;
  const head = Buffer.alloc(SQLITE_HEADER.length);
  let fd: number | undefined;
  try {
    fd = openSync(dataDb, 'r');
    readSync(fd, head, 0, head.length, 0);
  } catch {
    return;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  if (head.toString('latin1') !== SQLITE_HEADER) return;
  const target = path.join(path.dirname(dir), 'cairn_data');
  const shown = (p: string) => {
    const rel = path.relative(process.cwd(), p) || '.';
    return rel.startsWith('..') ? p : rel;
  };
  throw new ConfigError(
    `${shown(dir)} is a PocketBase data folder: import it once with \`cairn import pocketbase ${shown(dir)} --dir ${shown(target)}\`, then serve with --dir=${shown(target)}.`,
  );
}
