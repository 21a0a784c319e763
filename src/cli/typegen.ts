import { existsSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildServices } from '../app.ts';
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
 * `cairn typegen`: writes the TypeScript types of a database's collections to a file or stdout. The
 * hooks' record types (`declare module 'cairn'`) are included where the package is installed, or
 * as `hooks` says.
 */
export async function typegen(config: Config, options: { db?: string; out?: string; hooks?: boolean }): Promise<void> {
  const services = await buildServices(config);
  try {
    const name = options.db ?? DEFAULT_DATABASE;
    const db = await services.registry.get(name);
    const hooks = options.hooks ?? cairnInstalledFor(path.resolve(options.out ?? 'types.ts'));
    const source = generateTypes((await services.collections.all(db)).list, { database: name, hooks });
    if (options.out) {
      writeFileSync(path.resolve(options.out), source);
      process.stderr.write(`cairn: wrote the types of database "${name}" to ${options.out}\n`);
    } else process.stdout.write(source);
  } finally {
    await services.registry.close();
  }
}
