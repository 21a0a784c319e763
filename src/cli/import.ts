import path from 'node:path';
import type { Command } from 'commander';
import { buildServices } from '../app.ts';
import { loadConfig } from '../config.ts';
import { importPocketBase } from '../import/service.ts';
import { formatReport } from '../import/report.ts';
import { checkRule } from '../rules/access/rule-access.ts';

/**
 * `cairn import pocketbase PATH`: a PocketBase instance into a database of the data directory (or
 * CAIRN_DATABASE_URL), with the server stopped, like `cairn migrate`. A server running on the same
 * data would keep its cached collections until it restarts.
 */
export function registerImportCommands(program: Command): void {
  const command = program.command('import').description('bring data from another system into Cairn (works without a running server)');
  command
    .command('pocketbase <path>')
    .description("import a PocketBase instance (its pb_data directory or data.db): collections, rules, records, files, administrators, OAuth2 links")
    .option('--db <name>', 'the Cairn database to import into (created when missing)', 'main')
    .option('--dir <path>', 'data directory (env CAIRN_DIR)')
    .option('--database-url <url>', 'PostgreSQL URL (env CAIRN_DATABASE_URL)')
    .option('--dry-run', 'print the report of what would be imported and change nothing')
    .action(async (source: string, opts: { db: string; dir?: string; databaseUrl?: string; dryRun?: boolean }) => {
      const config = loadConfig({ dir: opts.dir, databaseUrl: opts.databaseUrl });
      const services = await buildServices(config);
      try {
        const report = await importPocketBase(
          {
            registry: services.registry,
            collections: services.collections,
            storage: services.fileStore.storage,
            stagingDir: path.join(config.dir, 'storage', '.staging'),
            checkRule: (c, rule, others) => checkRule(c, rule, others, services.registry.dialect),
          },
          { path: source, database: opts.db, dryRun: opts.dryRun === true },
        );
        process.stdout.write(`${formatReport(report)}\n`);
      } finally {
        await services.registry.close();
      }
    });
}
