import { Command, InvalidArgumentError } from 'commander';
import { ConfigError, loadConfig } from '../config.ts';
import { addPocketBaseGlobals, describePocketBaseFlags, httpAddress, originList, type PocketBaseGlobals, refusePocketBaseDataDir } from './pocketbase-flags.ts';
import { isApiError } from '../errors.ts';
import { StorageStartError } from '../storage/backend.ts';
import { HookLoadError } from '../hooks/load-error.ts';
import { VERSION } from '../version.ts';
import { registerAdminCommands } from './admin.ts';
import { registerImportCommands } from './import.ts';
import { type MigrateOptions, registerMigrateCommands } from './migrate.ts';
import { PbMigrationError } from '../pbmigrations/errors.ts';

function port(value: string): string {
  if (!/^\d{1,5}$/.test(value) || Number(value) > 65535) throw new InvalidArgumentError('must be a port number (0-65535).');
  return value;
}

interface ServeFlags extends PocketBaseGlobals {
  http?: { host: string; port: string };
  https?: string;
  port?: string;
  host?: string;
  origins?: string;
  databaseUrl?: string;
  hooks?: string;
  pbHooks?: string;
}

/**
 * Builds the `cairn` command line. Commands call domain code directly, never over HTTP. What a command
 * runs is imported when it runs: parsing, `--version`, `--help` and a refused flag load none of the
 * server (every start, and every test that spawns one, would pay for compiling all of it).
 */
export function buildCli(options: MigrateOptions = {}): Command {
  const program = new Command('cairn').description('Cairn: collections, records, auth, rules, webhooks and schema migrations over HTTP.').version(VERSION);

  addPocketBaseGlobals(program);

  describePocketBaseFlags(
    program
      .command('serve')
      .argument('[domains...]', "PocketBase's domains for its own TLS certificates: refused, Cairn serves plain HTTP behind a proxy")
      .description('serve the HTTP API (default 127.0.0.1:8090, data in ./data); applies pending pb_migrations first')
      .option('--http <host:port>', "address to listen on, PocketBase's form (or --host and --port)", httpAddress)
      .option('--https <host:port>', "PocketBase's TLS listener: refused (terminate TLS in a reverse proxy)")
      .option('--port <port>', 'port to listen on (env CAIRN_PORT)', port)
      .option('--host <host>', 'address to bind (env CAIRN_HOST)')
      .option('--dir <path>', 'data directory (env CAIRN_DIR)')
      .option('--origins <list>', 'browser origins allowed by CORS, comma-separated or repeated, or * (env CAIRN_CORS_ORIGINS, default *)', originList)
      .option('--database-url <url>', 'store everything in this PostgreSQL database instead of SQLite files (env CAIRN_DATABASE_URL)')
      .option('--hooks <path>', 'application hooks directory, or off (env CAIRN_HOOKS_DIR, default ./hooks)')
      .option('--pb-hooks <path>', "PocketBase's pb_hooks directory, or off (env CAIRN_PB_HOOKS_DIR, default ./pb_hooks)"),
    { dev: true, hooks: true, migrations: true, public: true },
  ).action(async (domains: string[], _opts: unknown, cmd: Command) => {
    const opts = cmd.optsWithGlobals<ServeFlags>();
    if (domains.length > 0 || opts.https !== undefined) {
      throw new ConfigError('Cairn serves plain HTTP: terminate TLS (and certificates for your domains) in a reverse proxy in front of it, and give --http=HOST:PORT.');
    }
    if (opts.http && (opts.host !== undefined || opts.port !== undefined)) throw new ConfigError('give --http=HOST:PORT or --host and --port, not both.');
    const config = loadConfig({
      host: opts.http?.host ?? opts.host,
      port: opts.http?.port ?? opts.port,
      dir: opts.dir,
      origins: opts.origins,
      databaseUrl: opts.databaseUrl,
      hooks: opts.hooks,
      pbHooks: opts.pbHooks ?? opts.hooksDir,
      pbMigrations: opts.migrationsDir,
      automigrate: opts.automigrate,
      publicDir: opts.publicDir,
      indexFallback: opts.indexFallback,
      dev: opts.dev,
    });
    refusePocketBaseDataDir(config.dir);
    const { serve } = await import('./serve.ts');
    await serve(config);
  });

  registerAdminCommands(program);

  program
    .command('typegen')
    .description("write TypeScript types of a database's collections (record, create and update types, TypedPocketBase)")
    .option('--db <name>', 'the database (default main)')
    .option('--out <file>', 'write to this file instead of standard output')
    .option('--dir <path>', 'data directory (env CAIRN_DIR)')
    .option('--from <file>', "a PocketBase collections export (JSON, v0.22 or v0.23 shape) instead of a database")
    .option('--hooks', "also type application hooks' records (declare module 'cairn'); default: when the cairn package is installed there")
    .option('--no-hooks', "leave the hooks' types out")
    .action(async (_opts: unknown, cmd: Command) => {
      const opts = cmd.optsWithGlobals<{ db?: string; out?: string; dir?: string; from?: string; hooks?: boolean }>();
      const { typegen } = await import('./typegen.ts');
      await typegen(loadConfig({ dir: opts.dir }), opts);
    });

  registerMigrateCommands(program, options);
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
    if (err instanceof PbMigrationError) {
      process.stderr.write(`cairn: pb_migrations: ${err.message}\n`);
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
