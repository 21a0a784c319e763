import type { CollectionService } from '../collections/service.ts';
import type { DatabaseRegistry } from '../storage/index.ts';
import type { MigrationFiles } from './files.ts';
import type { MigrationRuleValidator, TransformContext } from './transform.ts';

/** What the migration actions work with; built once by MigrationService. */
export interface MigrationDeps {
  registry: DatabaseRegistry;
  collections: CollectionService;
  files: MigrationFiles;
}

/** The checks a migration's result goes through; late-bound, as the rules domain replaces validateRule. */
export function transformContext(collections: CollectionService): TransformContext {
  return {
    // The rules domain's validator also takes the other collections (for `@collection.*`); one that
    // does not simply ignores them.
    validateRule: (c, rule, others) => (collections.validateRule as MigrationRuleValidator)(c, rule, others),
    validateOptions: collections.validateOptions,
  };
}

export function messageOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
