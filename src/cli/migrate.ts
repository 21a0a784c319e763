import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';
import type { Services } from '../app.ts';
import { collectionJson } from '../collections/pocketbase-shapes.ts';
import { SUPERUSERS_COLLECTION } from '../collections/superusers.ts';
import { type Config, ConfigError, loadConfig } from '../config.ts';
import type { MigrationItem, MigrationService } from '../migrations/service.ts';
import type { PbMigrationRunner, PbStep } from '../pbmigrations/runner.ts';
import type { PbMigrationRuntime } from '../pbmigrations/runtime.ts';
import { blankMigration, migrationFileName, snapshotMigration } from '../pbmigrations/templates.ts';
import { DEFAULT_DATABASE } from '../storage/registry.ts';
import { refusePocketBaseDataDir } from './pocketbase-flags.ts';

/**
 * `cairn migrate …`: both kinds of migrations on a data directory, without a running server.
 *
 * - Cairn's YAML migrations (`<dir>/migrations`, registry in system.db): `list`, `status`, `generate`,
 *   `apply V`, `rollback V`.
 * - PocketBase's `pb_migrations/*.js` (`--migrationsDir`, CAIRN_PB_MIGRATIONS_DIR; history in each
 *   database's `_migrations`): `create NAME`, `collections`, `history-sync`, as PocketBase's command.
 * - Both: `up` applies the pending pb_migrations (each database), as a start does, then the pending
 *   YAML migrations; `down [N]` reverts the N migrations applied last, of either kind, newest first.
 *   With one kind only, each is exactly its own command (`pocketbase migrate down 1`; Cairn's `down`).
 *
 * A server running on the same data is protected by the locks, but keeps its cached schema until it
 * restarts; apply through the API while it runs.
 */

type Out = (line: string) => void;

interface MigrateFlags {
  dir?: string;
  databaseUrl?: string;
  migrationsDir?: string;
  db?: string;
}

export interface MigrateOptions {
  /** What runs pb_migrations files (this build's own unless given). */
  pbMigrations?: PbMigrationRuntime;
  out?: Out;
}

interface Kit {
  config: Config;
  services: Services;
  yaml: MigrationService;
  pb: PbMigrationRunner;
  out: Out;
}

function configOf(cmd: Command): Config {
  const opts = cmd.optsWithGlobals<MigrateFlags>();
  return loadConfig({ dir: opts.dir, databaseUrl: opts.databaseUrl, pbMigrations: opts.migrationsDir });
}

async function withKit(cmd: Command, options: MigrateOptions, fn: (kit: Kit) => Promise<void>): Promise<void> {
  const config = configOf(cmd);
  refusePocketBaseDataDir(config.dir);
  // The server's modules are loaded by the command that uses them (see buildCli).
  const [{ buildServices }, { processLogger }, { PbMigrationRunner }, { pbMigrationRuntime }] = await Promise.all([
    import('../app.ts'),
    import('../http/logging.ts'),
    import('../pbmigrations/runner.ts'),
    import('../pbmigrations/runtime.ts'),
  ]);
  const services = await buildServices(config);
  const out = options.out ?? ((line: string) => process.stdout.write(`${line}\n`));
  try {
    const execute = (options.pbMigrations ?? pbMigrationRuntime)({
      registry: services.registry,
      collections: services.collections,
      records: services.records,
      mailer: services.mailer,
      emailFlows: services.emailFlows,
      settings: services.settings,
      log: processLogger(config.logLevel),
      admins: services.admins,
    });
    const pb = new PbMigrationRunner({ dir: config.pbMigrationsDir, registry: services.registry, collections: services.collections, execute });
    await fn({ config, services, yaml: services.migrations, pb, out });
  } finally {
    await services.registry.close();
  }
}

function describe(item: MigrationItem): string {
  const flags = [item.modified ? 'modified' : '', item.error && item.status === 'failed' ? `error: ${item.error}` : ''].filter(Boolean);
  return `${item.version}  ${item.status.padEnd(7)}  ${item.name}${flags.length > 0 ? `  (${flags.join('; ')})` : ''}`;
}

/** PocketBase's line for a file (`Applied 1712_x.js`), naming the database when it is not `main`. */
function stepLine(verb: string, step: PbStep): string {
  return `${verb} ${step.file}${step.db === DEFAULT_DATABASE ? '' : ` (database ${step.db})`}`;
}

/** The migration applied last, of either kind: the one `down` reverts next. */
async function latestApplied(kit: Kit): Promise<{ kind: 'yaml'; version: string } | { kind: 'pb'; file: string } | undefined> {
  const files = new Set(kit.pb.files().map((f) => f.file));
  let pb: { file: string; at: number } | undefined;
  for (const { rows } of await kit.pb.history()) {
    for (const r of rows) {
      // Old PocketBase versions wrote seconds: padded to microseconds, as PocketBase orders them.
      const at = Number(String(r.applied).padEnd(16, '0').slice(0, 16));
      if (files.has(r.file) && (!pb || at > pb.at || (at === pb.at && r.file > pb.file))) pb = { file: r.file, at };
    }
  }
  let yaml: { version: string; at: number } | undefined;
  for (const item of (await kit.yaml.list()).items) {
    if (item.status !== 'applied' || !item.applied_at) continue;
    const at = Date.parse(item.applied_at) * 1000;
    if (!yaml || at >= yaml.at) yaml = { version: item.version, at };
  }
  if (pb && (!yaml || pb.at > yaml.at)) return { kind: 'pb', file: pb.file };
  return yaml && { kind: 'yaml', version: yaml.version };
}

function count(raw: string | undefined): number {
  if (raw === undefined) return 1;
  if (!/^-?\d+$/.test(raw)) throw new ConfigError(`down takes a number of migrations, got "${raw}".`);
  // PocketBase: a negative count reverts everything.
  return Number(raw) < 0 ? Number.MAX_SAFE_INTEGER : Number(raw);
}

/** `migrate up`, and `migrate` alone: the pending pb_migrations (every database), then the pending YAML migrations. */
async function up(kit: Kit): Promise<void> {
  const steps = await kit.pb.up();
  for (const step of steps) kit.out(stepLine('Applied', step));
  const { applied } = await kit.yaml.applyPending();
  for (const v of applied) kit.out(`Applied ${v}.`);
  if (steps.length === 0 && applied.length === 0) kit.out(kit.pb.files().length > 0 ? 'No new migrations to apply.' : 'No pending migrations.');
}

/** `migrate list`: the YAML migrations, then each pb_migrations file with where it is applied. */
async function list(kit: Kit): Promise<void> {
  const { items } = await kit.yaml.list();
  const files = kit.pb.files();
  if (items.length === 0 && files.length === 0) kit.out('No migrations.');
  for (const item of items) kit.out(describe(item));
  if (files.length === 0) return;
  const histories = await kit.pb.history();
  for (const f of files) {
    const where = histories.filter((h) => h.rows.some((r) => r.file === f.file)).map((h) => h.db);
    const status = where.length === histories.length ? 'applied' : where.length === 0 ? 'pending' : 'partly';
    kit.out(`${f.file}  ${status.padEnd(7)}  pb_migrations${status === 'partly' ? `  (applied in ${where.join(', ')})` : ''}`);
  }
}

/** `migrate status`: counts of the YAML migrations, and of the pb_migrations files per database. */
async function status(kit: Kit): Promise<void> {
  const s = await kit.yaml.status();
  kit.out(`applied: ${s.appliedCount}`);
  kit.out(`pending: ${s.pendingCount}`);
  kit.out(`failed: ${s.failedCount}`);
  kit.out(`last applied: ${s.lastAppliedVersion ?? 'none'}`);
  const files = new Set(kit.pb.files().map((f) => f.file));
  if (files.size === 0) return;
  for (const { db, rows } of await kit.pb.history()) {
    const applied = rows.filter((r) => files.has(r.file)).length;
    kit.out(`pb_migrations (${db}): applied ${applied}, pending ${files.size - applied}`);
  }
}

/** `migrate down`: reverts the `wanted` migrations applied last, of either kind, newest first. */
async function down(kit: Kit, wanted: number): Promise<void> {
  let done = 0;
  for (; done < wanted; done++) {
    const latest = await latestApplied(kit);
    if (!latest) break;
    if (latest.kind === 'pb') for (const step of await kit.pb.revert(latest.file)) kit.out(stepLine('Reverted', step));
    else kit.out(`Rolled back ${(await kit.yaml.rollback(latest.version)).version}.`);
  }
  if (done === 0) kit.out(kit.pb.files().length > 0 ? 'No migrations to revert.' : 'No applied migrations.');
}

/** `migrate collections`: a pb_migrations file that imports the database's collections as they are. */
async function snapshot(kit: Kit, name: string): Promise<void> {
  const db = await kit.services.registry.get(name);
  const set = await kit.services.collections.all(db);
  const collections = [SUPERUSERS_COLLECTION, ...set.list]
    .map((c, i) => ({ c, i }))
    .sort((a, b) => (a.c.created < b.c.created ? -1 : a.c.created > b.c.created ? 1 : a.i - b.i))
    .map(({ c }) => collectionJson(c, { tokenTtl: kit.config.tokenTtl }) as Record<string, unknown>);
  kit.out(`Successfully created file "${writeMigration(kit.config, migrationFileName('collections_snapshot'), snapshotMigration(collections))}"`);
}

export function registerMigrateCommands(program: Command, options: MigrateOptions = {}): void {
  const migrate = program
    .command('migrate')
    .description('manage migrations: Cairn\'s YAML migrations and PocketBase\'s pb_migrations (works without a running server); without a command: up')
    .option('--dir <path>', 'data directory (env CAIRN_DIR)')
    .option('--database-url <url>', 'PostgreSQL URL (env CAIRN_DATABASE_URL)')
    .option('--migrationsDir <path>', "PocketBase's pb_migrations directory (env CAIRN_PB_MIGRATIONS_DIR, default ./pb_migrations)")
    .action((_opts: unknown, cmd: Command) => withKit(cmd, options, up));
  const sub = (spec: string, description: string) =>
    migrate
      .command(spec)
      .description(description)
      .option('--dir <path>', 'data directory (env CAIRN_DIR)')
      .option('--database-url <url>', 'PostgreSQL URL (env CAIRN_DATABASE_URL)')
      .option('--migrationsDir <path>', "PocketBase's pb_migrations directory (env CAIRN_PB_MIGRATIONS_DIR, default ./pb_migrations)");

  sub('list', 'list migrations with their status (YAML, then pb_migrations per database)').action((_opts: unknown, cmd: Command) => withKit(cmd, options, list));

  sub('status', 'counts of applied, pending and failed migrations').action((_opts: unknown, cmd: Command) => withKit(cmd, options, status));

  sub('generate <name>', 'save the schema changes since the last applied YAML migration as a pending migration')
    .option('--description <text>', 'description written into the file')
    .action((name: string, _opts: unknown, cmd: Command) =>
      withKit(cmd, options, async (kit) => {
        const result = await kit.yaml.generate({ name, description: cmd.opts<{ description?: string }>().description });
        if ('changes' in result) kit.out('No schema changes.');
        else kit.out(`Created migration ${result.version} (${(await kit.yaml.files.find(result.version))!.fileName}).`);
      }),
    );

  sub('up', 'apply the pending pb_migrations (every database), then the pending YAML migrations in version order').action((_opts: unknown, cmd: Command) =>
    withKit(cmd, options, up),
  );

  sub('down [n]', 'revert the N (default 1; negative: all) migrations applied last, of either kind, newest first').action((n: string | undefined, _opts: unknown, cmd: Command) =>
    withKit(cmd, options, (kit) => down(kit, count(n))),
  );

  sub('apply <version>', 'apply one YAML migration').action((version: string, _opts: unknown, cmd: Command) =>
    withKit(cmd, options, async (kit) => {
      await kit.yaml.apply(version);
      kit.out(`Applied ${version}.`);
    }),
  );

  sub('rollback <version>', 'roll back one YAML migration (the latest applied one)').action((version: string, _opts: unknown, cmd: Command) =>
    withKit(cmd, options, async (kit) => {
      await kit.yaml.rollback(version);
      kit.out(`Rolled back ${version}.`);
    }),
  );

  sub('create <name>', 'write a blank pb_migrations file (PocketBase ≥ 0.23 form)').action((name: string, _opts: unknown, cmd: Command) => {
    const config = configOf(cmd);
    const out = options.out ?? ((line: string) => process.stdout.write(`${line}\n`));
    out(`Successfully created file "${writeMigration(config, migrationFileName(name), blankMigration())}"`);
  });

  sub('collections', "write a pb_migrations file with a snapshot of a database's collections")
    .option('--db <name>', 'the database (default main)')
    .action((_opts: unknown, cmd: Command) => withKit(cmd, options, (kit) => snapshot(kit, cmd.opts<{ db?: string }>().db ?? DEFAULT_DATABASE)));

  sub('history-sync', "drop the history (each database's _migrations) of pb_migrations files that are gone").action((_opts: unknown, cmd: Command) =>
    withKit(cmd, options, async (kit) => {
      for (const step of await kit.pb.historySync()) kit.out(stepLine('Forgot', step));
      kit.out('The _migrations table was synced with the available migrations.');
    }),
  );
}

function writeMigration(config: Config, fileName: string, text: string): string {
  const dir = config.pbMigrationsDir;
  if (!dir) throw new ConfigError('pb_migrations are off (CAIRN_PB_MIGRATIONS_DIR=off): give --migrationsDir.');
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, fileName);
  writeFileSync(file, text, { flag: 'wx' });
  return file;
}
