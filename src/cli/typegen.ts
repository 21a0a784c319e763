import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildServices } from '../app.ts';
import { collectionsFromExport } from '../collections/pocketbase-shapes.ts';
import { SUPERUSERS_COLLECTION } from '../collections/superusers.ts';
import type { Config } from '../config.ts';
import { generateTypes } from '../openapi/typegen.ts';
import { DEFAULT_DATABASE } from '../storage/index.ts';

/** Whether the `cairn` package is installed where `file` lives (a `node_modules/cairn` above it). */
function cairnInstalledFor(file: string): boolean {
  for (let dir = path.dirname(file); ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, 'node_modules', 'cairn', 'package.json'))) return true;
    if (path.dirname(dir) === dir) return false;
  }
}

/**
 * `cairn typegen`: writes the TypeScript types of a database's collections (with `_superusers`) to a
 * file or stdout; with `--from`, of the collections a PocketBase export (JSON, either shape) describes.
 * The hooks' record types (`declare module 'cairn'`) are included where the package is installed, or
 * as `hooks` says.
 */
export async function typegen(config: Config, options: { db?: string; out?: string; from?: string; hooks?: boolean }): Promise<void> {
  const hooks = options.hooks ?? cairnInstalledFor(path.resolve(options.out ?? 'types.ts'));
  let source: string;
  if (options.from) {
    let collections;
    try {
      collections = collectionsFromExport(JSON.parse(readFileSync(path.resolve(options.from), 'utf8')));
    } catch (err) {
      throw new Error(`cannot read the collections of ${options.from}: ${(err as Error).message}`);
    }
    source = generateTypes(collections, { from: path.basename(options.from), hooks });
  } else {
    const services = await buildServices(config);
    try {
      const name = options.db ?? DEFAULT_DATABASE;
      const db = await services.registry.get(name);
      source = generateTypes([SUPERUSERS_COLLECTION, ...(await services.collections.all(db)).list], { database: name, hooks });
    } finally {
      await services.registry.close();
    }
  }
  if (options.out) {
    writeFileSync(path.resolve(options.out), source);
    process.stderr.write(`cairn: wrote the types to ${options.out}\n`);
  } else process.stdout.write(source);
}
