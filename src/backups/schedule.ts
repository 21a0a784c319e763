import type { Config } from '../config.ts';
import type { StoredS3 } from '../files/storage/check.ts';
import { s3Options, type SettingsFileStorage } from '../files/storage/switch.ts';
import type { SystemCrons } from '../jobs/system-crons.ts';
import type { SettingsService } from '../settings/service.ts';
import type { MetaSettings } from '../settings/meta.ts';
import type { AdminService } from '../auth/admins.ts';
import type { Mailer } from '../auth/mail/mailer.ts';
import { systemAlertMail } from '../auth/mail/templates.ts';
import type { BackupPlaces, BackupService } from './service.ts';

/** The `backups` settings section, as stored (PocketBase's BackupsConfig). */
export interface BackupSettings {
  cron: string;
  cronMaxKeep: number;
  s3: StoredS3;
}

/**
 * Where backups go: the bucket of `backups.s3` once that section is saved with it enabled, else
 * `<dir>/backups/`; read for each use, so a change saved on any node acts on the next backup there.
 */
export function backupPlaces(settings: SettingsService, files: SettingsFileStorage): BackupPlaces {
  return {
    filesOnS3: () => files.bucket() !== undefined,
    bucket() {
      const saved = settings.peekSaved<BackupSettings>('backups');
      return saved?.s3.enabled ? files.clients.get(s3Options(saved.s3)) : undefined;
    },
  };
}

/**
 * Keeps PocketBase's `__pbAutoBackup__` system job as the settings say: `backups.cron` and
 * `cronMaxKeep` once the `backups` section is saved (an empty cron: no automatic backups), until then
 * `CAIRN_BACKUP_CRON` and `CAIRN_BACKUP_KEEP`. Set again whenever the settings change, on this node
 * or another; none while backups cannot be made here (PostgreSQL, files in a bucket).
 */
export function scheduleBackups(
  services: { settings: SettingsService; backups: BackupService; admins: AdminService; mailer: Mailer },
  config: Pick<Config, 'backupCron' | 'backupKeep'>,
  crons: SystemCrons,
  log: { info(obj: unknown, msg: string): void; warn(obj: unknown, msg: string): void },
): void {
  const { settings, backups } = services;
  const apply = () => {
    const saved = settings.peekSaved<BackupSettings>('backups');
    const expression = saved ? saved.cron : (config.backupCron ?? '');
    const keep = saved ? saved.cronMaxKeep : config.backupKeep;
    if (expression === '' || backups.unsupported()) crons.remove('__pbAutoBackup__');
    else crons.set({ id: '__pbAutoBackup__', expression, run: () => backups.takeScheduled(keep, log).catch((err) => alertFailure(services, err, log)) });
  };
  apply();
  settings.onChange(apply);
}

/**
 * A scheduled backup that failed is mailed to every administrator, as PocketBase ≥ 0.39 does (its
 * system alert), then fails the job as before (the log says so too).
 */
async function alertFailure(services: { settings: SettingsService; admins: AdminService; mailer: Mailer }, err: unknown, log: { warn(obj: unknown, msg: string): void }): Promise<never> {
  const details = `Failed to create/upload automated backup. Raw error:\n${err instanceof Error ? err.message : String(err)}`;
  try {
    const meta = await services.settings.get<MetaSettings>('meta');
    for (const email of await services.admins.emails()) await services.mailer.send(systemAlertMail(meta, email, 'Autobackup failure', details));
  } catch (alertErr) {
    log.warn({ err: alertErr }, 'the alert of a failed scheduled backup could not be sent');
  }
  throw err;
}
