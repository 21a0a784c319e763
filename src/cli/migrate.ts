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

async function withMigrations(dir: string | undefined, fn: (m: MigrationService, out: Out) => Promise<void>): Promise<void> {
  const services = await buildServices(loadConfig({ dir }));
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

  migrate
    .command('list')
    .description('list migrations with their status')
    .option(...dirOption)
    .action((opts: { dir?: string }) =>
      withMigrations(opts.dir, async (m, out) => {
        const { items } = await m.list();
        if (items.length === 0) out('No migrations.');
        for (const item of items) out(describe(item));
      }),
    );

  migrate
    .command('status')
    .description('counts of applied, pending and failed migrations')
    .option(...dirOption)
    .action((opts: { dir?: string }) =>
      withMigrations(opts.dir, async (m, out) => {
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
    .action((name: string, opts: { dir?: string; description?: string }) =>
      withMigrations(opts.dir, async (m, out) => {
        const result = await m.generate({ name, description: opts.description });
        if ('changes' in result) out('No schema changes.');
        else out(`Created migration ${result.version} (${m.files.find(result.version)!.fileName}).`);
      }),
    );

  migrate
    .command('up')
    .description('apply every pending migration in version order')
    .option(...dirOption)
    .action((opts: { dir?: string }) =>
      withMigrations(opts.dir, async (m, out) => {
        const { applied } = await m.applyPending();
        if (applied.length === 0) out('No pending migrations.');
        for (const v of applied) out(`Applied ${v}.`);
      }),
    );

  migrate
    .command('down')
    .description('roll back the latest applied migration')
    .option(...dirOption)
    .action((opts: { dir?: string }) =>
      withMigrations(opts.dir, async (m, out) => {
        const item = await m.rollbackLatest();
        out(item ? `Rolled back ${item.version}.` : 'No applied migrations.');
      }),
    );

  migrate
    .command('apply <version>')
    .description('apply one migration')
    .option(...dirOption)
    .action((version: string, opts: { dir?: string }) =>
      withMigrations(opts.dir, async (m, out) => {
        await m.apply(version);
        out(`Applied ${version}.`);
      }),
    );

  migrate
    .command('rollback <version>')
    .description('roll back one migration (the latest applied one)')
    .option(...dirOption)
    .action((version: string, opts: { dir?: string }) =>
      withMigrations(opts.dir, async (m, out) => {
        await m.rollback(version);
        out(`Rolled back ${version}.`);
      }),
    );
}
