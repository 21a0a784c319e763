import type { Command } from 'commander';
import { buildServices } from '../app.ts';
import { loadConfig } from '../config.ts';
import type { MigrationItem, MigrationService } from '../migrations/service.ts';

/**
 * `cairn migrate …`: the migrations domain on a data directory, without a running server. A server
 * running on the same directory is protected by the apply lock, but keeps its cached schema until it
 * restarts; apply through the API while it runs.
 */

type Out = (line: string) => void;

interface Where {
  dir?: string;
  databaseUrl?: string;
}

async function withMigrations(where: Where, fn: (m: MigrationService, out: Out) => Promise<void>): Promise<void> {
  const services = await buildServices(loadConfig({ dir: where.dir, databaseUrl: where.databaseUrl }));
  try {
    await fn(services.migrations, (line) => process.stdout.write(`${line}\n`));
  } finally {
    await services.registry.close();
  }
}

function describe(item: MigrationItem): string {
  const flags = [item.modified ? 'modified' : '', item.error && item.status === 'failed' ? `error: ${item.error}` : ''].filter(Boolean);
  return `${item.version}  ${item.status.padEnd(7)}  ${item.name}${flags.length > 0 ? `  (${flags.join('; ')})` : ''}`;
}

export function registerMigrateCommands(program: Command): void {
  const migrate = program.command('migrate').description('manage schema migrations (works without a running server)');
  const dirOption = ['--dir <path>', 'data directory (env CAIRN_DIR)'] as const;
  const urlOption = ['--database-url <url>', 'PostgreSQL URL (env CAIRN_DATABASE_URL)'] as const;

  migrate
    .command('list')
    .description('list migrations with their status')
    .option(...dirOption)
    .option(...urlOption)
    .action((opts: { dir?: string; databaseUrl?: string }) =>
      withMigrations(opts, async (m, out) => {
        const { items } = await m.list();
        if (items.length === 0) out('No migrations.');
        for (const item of items) out(describe(item));
      }),
    );

  migrate
    .command('status')
    .description('counts of applied, pending and failed migrations')
    .option(...dirOption)
    .option(...urlOption)
    .action((opts: { dir?: string; databaseUrl?: string }) =>
      withMigrations(opts, async (m, out) => {
        const s = await m.status();
        out(`applied: ${s.appliedCount}`);
        out(`pending: ${s.pendingCount}`);
        out(`failed: ${s.failedCount}`);
        out(`last applied: ${s.lastAppliedVersion ?? 'none'}`);
      }),
    );

  migrate
    .command('generate <name>')
    .description('save the schema changes since the last applied migration as a pending migration')
    .option('--description <text>', 'description written into the file')
    .option(...dirOption)
    .option(...urlOption)
    .action((name: string, opts: { dir?: string; databaseUrl?: string; description?: string }) =>
      withMigrations(opts, async (m, out) => {
        const result = await m.generate({ name, description: opts.description });
        if ('changes' in result) out('No schema changes.');
        else out(`Created migration ${result.version} (${(await m.files.find(result.version))!.fileName}).`);
      }),
    );

  migrate
    .command('up')
    .description('apply every pending migration in version order')
    .option(...dirOption)
    .option(...urlOption)
    .action((opts: { dir?: string; databaseUrl?: string }) =>
      withMigrations(opts, async (m, out) => {
        const { applied } = await m.applyPending();
        if (applied.length === 0) out('No pending migrations.');
        for (const v of applied) out(`Applied ${v}.`);
      }),
    );

  migrate
    .command('down')
    .description('roll back the latest applied migration')
    .option(...dirOption)
    .option(...urlOption)
    .action((opts: { dir?: string; databaseUrl?: string }) =>
      withMigrations(opts, async (m, out) => {
        const item = await m.rollbackLatest();
        out(item ? `Rolled back ${item.version}.` : 'No applied migrations.');
      }),
    );

  migrate
    .command('apply <version>')
    .description('apply one migration')
    .option(...dirOption)
    .option(...urlOption)
    .action((version: string, opts: { dir?: string; databaseUrl?: string }) =>
      withMigrations(opts, async (m, out) => {
        await m.apply(version);
        out(`Applied ${version}.`);
      }),
    );

  migrate
    .command('rollback <version>')
    .description('roll back one migration (the latest applied one)')
    .option(...dirOption)
    .option(...urlOption)
    .action((version: string, opts: { dir?: string; databaseUrl?: string }) =>
      withMigrations(opts, async (m, out) => {
        await m.rollback(version);
        out(`Rolled back ${version}.`);
      }),
    );
}
