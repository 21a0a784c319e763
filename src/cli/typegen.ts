import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { buildServices } from '../app.ts';
import type { Config } from '../config.ts';
import { generateTypes } from '../openapi/typegen.ts';
import { DEFAULT_DATABASE } from '../storage/index.ts';

/** `cairn typegen`: writes the TypeScript types of a database's collections to a file or stdout. */
export async function typegen(config: Config, options: { db?: string; out?: string }): Promise<void> {
  const services = await buildServices(config);
  try {
    const name = options.db ?? DEFAULT_DATABASE;
    const db = await services.registry.get(name);
    const source = generateTypes((await services.collections.all(db)).list, { database: name });
    if (options.out) {
      writeFileSync(path.resolve(options.out), source);
      process.stderr.write(`cairn: wrote the types of database "${name}" to ${options.out}\n`);
    } else process.stdout.write(source);
  } finally {
    await services.registry.close();
  }
}
