import { Command, InvalidArgumentError } from 'commander';
import { ConfigError, loadConfig } from '../config.ts';
import { isApiError } from '../errors.ts';
import { StorageStartError } from '../storage/index.ts';
import { HookLoadError } from '../hooks/loader.ts';
import { VERSION } from '../version.ts';
import { createAdmin } from './admin.ts';
import { registerImportCommands } from './import.ts';
import { registerMigrateCommands } from './migrate.ts';
import { serve } from './serve.ts';
import { typegen } from './typegen.ts';

function port(value: string): string {
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535) throw new InvalidArgumentError('must be a port number (0-65535).');
  return value;
}

/** Builds the `cairn` command line. Commands call domain code directly, never over HTTP. */
export function buildCli(): Command {
  const program = new Command('cairn').description('Cairn: collections, records, auth, rules, webhooks and schema migrations over HTTP.').version(VERSION);

  program
    .command('serve')
    .description('serve the HTTP API (default 127.0.0.1:8090, data in ./data)')
    .option('--port <port>', 'port to listen on (env CAIRN_PORT)', port)
    .option('--host <host>', 'address to bind (env CAIRN_HOST)')
    .option('--dir <path>', 'data directory (env CAIRN_DIR)')
    .option('--origins <list>', 'browser origins allowed by CORS, comma-separated, or * (env CAIRN_CORS_ORIGINS, default *)')
    .option('--database-url <url>', 'store everything in this PostgreSQL database instead of SQLite files (env CAIRN_DATABASE_URL)')
    .option('--hooks <path>', 'application hooks directory, or off (env CAIRN_HOOKS_DIR, default ./hooks)')
    .option('--pb-hooks <path>', "PocketBase's pb_hooks directory, or off (env CAIRN_PB_HOOKS_DIR, default ./pb_hooks)")
    .option('--dev', 'development mode: reload the hooks when their files change')
    .action(async (opts: { port?: string; host?: string; dir?: string; origins?: string; databaseUrl?: string; hooks?: string; pbHooks?: string; dev?: boolean }) => {
      await serve(loadConfig(opts));
    });

  const admin = program.command('admin').description('manage administrators');
  admin
    .command('create <email> <password>')
    .description('create an administrator (works without a running server)')
    .option('--dir <path>', 'data directory (env CAIRN_DIR)')
    .option('--database-url <url>', 'PostgreSQL URL (env CAIRN_DATABASE_URL)')
    .action(async (email: string, password: string, opts: { dir?: string; databaseUrl?: string }) => {
      await createAdmin(loadConfig(opts), email, password);
    });

  program
    .command('typegen')
    .description("write TypeScript types of a database's collections (record, create and update types, TypedPocketBase)")
    .option('--db <name>', 'the database (default main)')
    .option('--out <file>', 'write to this file instead of standard output')
    .option('--dir <path>', 'data directory (env CAIRN_DIR)')
    .option('--from <file>', "a PocketBase collections export (JSON, v0.22 or v0.23 shape) instead of a database")
    .option('--hooks', "also type application hooks' records (declare module 'cairn'); default: when the cairn package is installed there")
    .option('--no-hooks', "leave the hooks' types out")
    .action(async (opts: { db?: string; out?: string; dir?: string; from?: string; hooks?: boolean }) => {
      await typegen(loadConfig({ dir: opts.dir }), opts);
    });

  registerMigrateCommands(program);
  registerImportCommands(program);

  return program;
}

export async function runCli(argv: string[]): Promise<void> {
  try {
    await buildCli().parseAsync(argv);
  } catch (err) {
    if (err instanceof ConfigError) {
      process.stderr.write(`cairn: ${err.message}\n`);
      process.exit(2);
    }
    if (err instanceof HookLoadError) {
      // The file and line first, as a compiler says it: what an editor or a terminal can jump to.
      process.stderr.write(`cairn: hooks did not load: ${err.message}\n`);
      process.exit(1);
    }
    if (err instanceof StorageStartError) {
      process.stderr.write(`cairn: ${err.message}\n`);
      process.exit(1);
    }
    if (isApiError(err)) {
      const details = Object.entries(err.data)
        .map(([k, v]) => `  ${k}: ${(v as { message?: string }).message ?? JSON.stringify(v)}`)
        .join('\n');
      process.stderr.write(`cairn: ${err.message}${details ? `\n${details}` : ''}\n`);
      process.exit(1);
    }
    throw err;
  }
}
