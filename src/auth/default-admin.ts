import type { Config } from '../config.ts';
import { ConfigError } from '../config.ts';
import type { AdminService } from './admins.ts';

/** Passwords the README shows as examples; refused as a production administrator password. */
export const EXAMPLE_PASSWORDS = ['change-me-now', 'changeme', 'password', 'admin', 'admin123', 'administrator', '1234567890', '123456789012'];

export const MIN_PRODUCTION_ADMIN_PASSWORD = 12;

/** Refuses to start in production with a weak default administrator password (API contract §5). */
export function checkDefaultAdminPassword(config: Config): void {
  if (!config.production || !config.adminPassword) return;
  if ([...config.adminPassword].length < MIN_PRODUCTION_ADMIN_PASSWORD) {
    throw new ConfigError(
      `CAIRN_ADMIN_PASSWORD is shorter than ${MIN_PRODUCTION_ADMIN_PASSWORD} characters; with NODE_ENV=production Cairn refuses to start with a weak administrator password.`,
    );
  }
  if (EXAMPLE_PASSWORDS.includes(config.adminPassword.toLowerCase())) {
    throw new ConfigError('CAIRN_ADMIN_PASSWORD is an example value from the README; with NODE_ENV=production choose your own password.');
  }
}

/**
 * At start: creates the default administrator from CAIRN_ADMIN_EMAIL / CAIRN_ADMIN_PASSWORD when no
 * administrator exists, or says how to create the first one.
 */
export async function ensureDefaultAdmin(config: Config, admins: AdminService, log: (msg: string) => void): Promise<void> {
  checkDefaultAdminPassword(config);
  if ((await admins.count()) > 0) return;
  if (config.adminEmail && config.adminPassword) {
    await admins.create({ email: config.adminEmail, password: config.adminPassword });
    log(`Created the default administrator ${config.adminEmail}.`);
    return;
  }
  log(
    'No administrator exists yet. Create the first one with POST /api/admins/init {email, password, passwordConfirm}, ' +
      'or `cairn admin create EMAIL PASSWORD`, or set CAIRN_ADMIN_EMAIL and CAIRN_ADMIN_PASSWORD before starting.',
  );
}
