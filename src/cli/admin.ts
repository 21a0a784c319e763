import type { Command } from 'commander';
import type { AdminService } from '../auth/admins.ts';
import { type Config, ConfigError, loadConfig } from '../config.ts';
import { isEmail } from '../collections/fields/email.ts';
import { refusePocketBaseDataDir } from './pocketbase-flags.ts';

/**
 * Administrators from the command line, without a running server: Cairn's `admin create`, PocketBase
 * ≥ 0.23's `superuser create|upsert|update|delete EMAIL [PASS]` and v0.22's `admin create|update|delete`.
 * Messages are PocketBase's, so scripts that look for them keep working.
 */

type Out = (line: string) => void;

async function withAdmins(config: Config, fn: (admins: AdminService, out: Out) => Promise<void>): Promise<void> {
  refusePocketBaseDataDir(config.dir);
  const { buildServices } = await import('../app.ts');
  const services = await buildServices(config);
  try {
    await fn(services.admins, (line) => process.stdout.write(`${line}\n`));
  } finally {
    await services.registry.close();
  }
}

/** PocketBase checks the email before it opens anything; so does Cairn. */
function checkedEmail(email: string | undefined): string {
  if (!email || !isEmail(email)) throw new ConfigError('missing or invalid email address');
  return email;
}

function checkedPair(email: string | undefined, password: string | undefined): [string, string] {
  if (email === undefined || password === undefined) throw new ConfigError('missing email and password arguments');
  return [checkedEmail(email), password];
}

export async function createAdmin(config: Config, email: string, password: string, pocketbase = false): Promise<void> {
  await withAdmins(config, async (admins, out) => {
    const admin = await admins.create({ email, password });
    out(pocketbase ? `Successfully created new superuser "${admin.email}"!` : `Created administrator ${admin.email} (${admin.id}).`);
  });
}

async function upsertAdmin(config: Config, email: string, password: string): Promise<void> {
  await withAdmins(config, async (admins, out) => {
    const found = await admins.findByEmail(email);
    const admin = found ? await admins.update(found.id, { password }) : await admins.create({ email, password });
    out(`Successfully saved superuser "${admin.email}"!`);
  });
}

async function updateAdmin(config: Config, email: string, password: string): Promise<void> {
  await withAdmins(config, async (admins, out) => {
    const found = await admins.findByEmail(email);
    if (!found) throw new ConfigError(`superuser with email "${email}" doesn't exist`);
    await admins.update(found.id, { password });
    out(`Successfully changed superuser "${email}" password!`);
  });
}

async function deleteAdmin(config: Config, email: string): Promise<void> {
  await withAdmins(config, async (admins, out) => {
    const found = await admins.findByEmail(email);
    if (!found) return out(`superuser "${email}" is missing or already deleted`);
    await admins.delete(found.id);
    out(`Successfully deleted superuser "${email}"!`);
  });
}

interface Where {
  dir?: string;
  databaseUrl?: string;
}

const configOf = (cmd: Command) => {
  const opts = cmd.optsWithGlobals<Where>();
  return loadConfig({ dir: opts.dir, databaseUrl: opts.databaseUrl });
};

function whereOptions(command: Command): Command {
  return command.option('--dir <path>', 'data directory (env CAIRN_DIR)').option('--database-url <url>', 'PostgreSQL URL (env CAIRN_DATABASE_URL)');
}

export function registerAdminCommands(program: Command): void {
  const admin = program.command('admin').description('manage administrators (works without a running server; PocketBase v0.22\'s form)');
  whereOptions(admin.command('create <email> <password>').description('create an administrator')).action(
    async (email: string, password: string, _opts: unknown, cmd: Command) => createAdmin(configOf(cmd), email, password),
  );
  whereOptions(admin.command('update <email> <password>').description("change an administrator's password")).action(
    async (email: string, password: string, _opts: unknown, cmd: Command) => updateAdmin(configOf(cmd), checkedEmail(email), password),
  );
  whereOptions(admin.command('delete <email>').description('delete an administrator')).action(async (email: string, _opts: unknown, cmd: Command) =>
    deleteAdmin(configOf(cmd), checkedEmail(email)),
  );

  const superuser = program.command('superuser').description("manage administrators as PocketBase ≥ 0.23's superusers (works without a running server)");
  whereOptions(superuser.command('create [email] [password]').description('create a superuser')).action(
    async (email: string | undefined, password: string | undefined, _opts: unknown, cmd: Command) => {
      const [e, p] = checkedPair(email, password);
      await createAdmin(configOf(cmd), e, p, true);
    },
  );
  whereOptions(superuser.command('upsert [email] [password]').description('create a superuser, or change its password when the email exists')).action(
    async (email: string | undefined, password: string | undefined, _opts: unknown, cmd: Command) => {
      const [e, p] = checkedPair(email, password);
      await upsertAdmin(configOf(cmd), e, p);
    },
  );
  whereOptions(superuser.command('update [email] [password]').description("change a superuser's password")).action(
    async (email: string | undefined, password: string | undefined, _opts: unknown, cmd: Command) => {
      const [e, p] = checkedPair(email, password);
      await updateAdmin(configOf(cmd), e, p);
    },
  );
  whereOptions(superuser.command('delete [email]').description('delete a superuser')).action(async (email: string | undefined, _opts: unknown, cmd: Command) =>
    deleteAdmin(configOf(cmd), checkedEmail(email)),
  );
}
