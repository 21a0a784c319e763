import { buildServices } from '../app.ts';
import type { Config } from '../config.ts';

export async function createAdmin(config: Config, email: string, password: string): Promise<void> {
  const services = await buildServices(config);
  try {
    const admin = await services.admins.create({ email, password });
    process.stdout.write(`Created administrator ${admin.email} (${admin.id}).\n`);
  } finally {
    await services.registry.close();
  }
}
