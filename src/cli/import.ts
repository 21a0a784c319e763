import path from 'node:path';
import type { Command } from 'commander';
import type { Services } from '../app.ts';
import { loadConfig } from '../config.ts';
import type { ImportDeps } from '../import/service.ts';
import { checkRule } from '../rules/access/rule-access.ts';

/**
 * `cairn import pocketbase PATH`: a PocketBase instance into a database of the data directory (or
 * CAIRN_DATABASE_URL), with the server stopped, like `cairn migrate` (a server running on the same
 * data is told of the new collections and settings, but requests meanwhile meet a half-made import).
 */
/** What an import needs of the instance's services (also the bench's). */
export function importDeps(services: Services, dir: string, env: NodeJS.ProcessEnv = process.env): ImportDeps {
  return {
    registry: services.registry,
    collections: services.collections,
    storage: services.fileStore.storage,
    stagingDir: path.join(dir, 'storage', '.staging'),
    checkRule: (c, rule, others) => checkRule(c, rule, others, services.registry.dialect),
    settings: services.settings,
    encryptionKey: env.PB_ENCRYPTION_KEY || undefined,
  };
}

export function registerImportCommands(program: Command): void {
  const command = program.command('import').description('bring data from another system into Cairn (works without a running server)');
  command
    .command('pocketbase <path>')
    .description('import a PocketBase instance (its pb_data directory or data.db): collections, rules, auth options, records, files, administrators, OAuth2 links, settings; PocketBase\'s tokens stay valid (PB_ENCRYPTION_KEY decrypts encrypted settings)')
    .option('--db <name>', 'the Cairn database to import into (created when missing)', 'main')
    .option('--dir <path>', 'data directory (env CAIRN_DIR)')
    .option('--database-url <url>', 'PostgreSQL URL (env CAIRN_DATABASE_URL)')
    .option('--dry-run', 'print the report of what would be imported and change nothing')
    .option('--json', 'print the report as JSON')
    .action(async (source: string, _opts: unknown, cmd: Command) => {
      const opts = cmd.optsWithGlobals<{ db: string; dir?: string; databaseUrl?: string; dryRun?: boolean; json?: boolean }>();
      const config = loadConfig({ dir: opts.dir, databaseUrl: opts.databaseUrl });
      const [{ buildServices }, { importPocketBase }, { formatReport }] = await Promise.all([import('../app.ts'), import('../import/service.ts'), import('../import/report.ts')]);
      const services = await buildServices(config);
      try {
        const report = await importPocketBase(importDeps(services, config.dir), { path: source, database: opts.db, dryRun: opts.dryRun === true });
        process.stdout.write(opts.json ? `${JSON.stringify(report, null, 2)}\n` : `${formatReport(report)}\n`);
      } finally {
        await services.registry.close();
      }
    });
}
