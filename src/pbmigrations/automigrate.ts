import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Collection } from '../collections/model.ts';
import { collectionJson, type CollectionJsonDefaults } from '../collections/pocketbase-shapes.ts';
import type { Logger } from '../lib/logger.ts';
import type { Database } from '../storage/index.ts';
import { ensureHistory, isApplied, recordApplied } from './history.ts';
import { collectionChangeMigration, migrationJson, snakecase } from './templates.ts';

/** How `around` reads a collection before and after a change (the collections domain's service). */
interface CollectionLookup {
  get(db: Database, nameOrId: string): Promise<Collection>;
  find(db: Database, nameOrId: string): Promise<Collection | undefined>;
}

/**
 * PocketBase's automigrate (plugins/migratecmd): a collection created, changed or deleted through the
 * collections API becomes a file of the app's `pb_migrations` folder (`<unix>_created_<name>.js`,
 * `…_updated_…`, `…_deleted_…`), recorded as applied in the database it was made in, so the folder
 * carries the change to the app's other instances (and to this one's other databases) as PocketBase's
 * does. Written after the change has committed, as PocketBase's; a file that cannot be written is
 * logged and the change stands.
 */
export class Automigrate {
  /** The last file's time, so two changes within a second still sort in the order they were made. */
  private last = 0;

  constructor(
    private readonly dir: string,
    private readonly defaults: CollectionJsonDefaults,
    private readonly log: () => Logger,
  ) {}

  /**
   * Runs `change` to the collection `name` and writes its migration, from the collection as it was
   * to what it is after (none: deleted).
   */
  async around<T>(collections: CollectionLookup, db: Database, name: string, change: () => Promise<T>): Promise<T> {
    const before = await collections.get(db, name);
    const result = await change();
    await this.record(db, before, await collections.find(db, before.id));
    return result;
  }

  /** Writes the migration of one change (`before` undefined: created; `after` undefined: deleted). */
  async record(db: Database, before: Collection | undefined, after: Collection | undefined): Promise<string | undefined> {
    const old = before && this.json(before);
    const now = after && this.json(after);
    const source = collectionChangeMigration(old, now);
    if (source === undefined) return undefined;
    const action = now === undefined ? 'deleted' : old === undefined ? 'created' : 'updated';
    const name = String((before ?? after)!.name);
    try {
      await mkdir(this.dir, { recursive: true });
      const file = await this.freeName(db, `${action}_${snakecase(name)}`);
      await db.transaction(async (tx) => {
        await ensureHistory(tx);
        await recordApplied(tx, file, Date.now() * 1000);
        // In the transaction, as PocketBase: a file that cannot be written leaves no history row.
        await writeFile(path.join(this.dir, file), source, { flag: 'wx' });
      });
      return file;
    } catch (err) {
      this.log().error({ err, collection: name, dir: this.dir }, 'automigrate: the migration file of a collection change could not be written');
      return undefined;
    }
  }

  private json(c: Collection): Record<string, unknown> {
    return migrationJson(collectionJson(c, this.defaults) as Record<string, unknown>);
  }

  /** `<unix seconds>_<name>.js`, a second later than the last one and than any file or history row of the name. */
  private async freeName(db: Database, name: string): Promise<string> {
    let seconds = Math.max(Math.floor(Date.now() / 1000), this.last + 1);
    let file = `${seconds}_${name}.js`;
    while (existsSync(path.join(this.dir, file)) || (await isApplied(db, file).catch(() => false))) file = `${++seconds}_${name}.js`;
    this.last = seconds;
    return file;
  }
}
