import type { Command } from 'commander';
import type { Services } from '../app.ts';
import type { AdminService } from '../auth/admins.ts';
import { type Config, ConfigError, loadConfig } from '../config.ts';
import { isEmail } from '../collections/fields/email.ts';
import { isApiError } from '../errors.ts';
import { refusePocketBaseDataDir } from './pocketbase-flags.ts';

/**
 * Administrators from the command line, without a running server: Cairn's `admin create`, PocketBase
 * ≥ 0.23's `superuser create|upsert|update|delete EMAIL [PASS]`, `superuser ips` and `otp`, and v0.22's
 * `admin create|update|delete`.
 * Messages are PocketBase's, so scripts that look for them keep working.
 */

type Out = (line: string) => void;

async function withServices(config: Config, fn: (services: Services, out: Out) => Promise<void>): Promise<void> {
  refusePocketBaseDataDir(config.dir);
  const { buildServices } = await import('../app.ts');
  const services = await buildServices(config);
  try {
    await fn(services, (line) => process.stdout.write(`${line}\n`));
  } finally {
    await services.registry.close();
  }
}

const withAdmins = (config: Config, fn: (admins: AdminService, out: Out) => Promise<void>) => withServices(config, (services, out) => fn(services.admins, out));

/**
 * PocketBase's `superuser ips [IP|SUBNET ...]`: sets the `superuserIPs` setting (none: clears it), the
 * way back in for an administrator shut out by it. A server running on the same data takes it at once
 * (through PostgreSQL's notices, or the SQLite data directory's `.notify` folder).
 */
async function superuserIps(config: Config, ips: string[]): Promise<void> {
  await withServices(config, async (services, out) => {
    try {
      await services.settings.patch({ superuserIPs: ips });
    } catch (err) {
      if (!isApiError(err) || err.status !== 400) throw err;
      const problems = (err.data as { superuserIPs?: Record<string, { message: string }> }).superuserIPs ?? {};
      throw new ConfigError(Object.entries(problems).map(([i, p]) => `${ips[Number(i)] ?? ''}: ${p.message}`).join('; ') || err.message);
    }
    if (ips.length === 0) return out('Successfully cleared SuperuserIPs setting!');
    out('Successfully updated SuperuserIPs setting:');
    const saved = await services.settings.get<string[]>('superuserIPs');
    saved.forEach((ip, i) => out(`${i === saved.length - 1 ? '└─' : '├─'} ${ip}`));
  });
}

/** PocketBase's `superuser otp EMAIL`: Cairn's administrators have no one-time-password sign-in. */
async function superuserOtp(config: Config, email: string): Promise<void> {
  await withAdmins(config, async (admins) => {
    if (!(await admins.findByEmail(email))) throw new ConfigError(`superuser with email "${email}" doesn't exist`);
    throw new ConfigError('OTP auth is not enabled for the _superusers collection');
  });
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
  whereOptions(
    superuser.command('ips [ips...]').description('set the superuser IPs whitelist (addresses or CIDR subnets, space separated); none clears it'),
  ).action(async (ips: string[], _opts: unknown, cmd: Command) => superuserIps(configOf(cmd), ips));
  whereOptions(superuser.command('otp [email]').description("a one-time password for a superuser (Cairn's administrators sign in with their password)")).action(
    async (email: string | undefined, _opts: unknown, cmd: Command) => superuserOtp(configOf(cmd), checkedEmail(email)),
  );
}
