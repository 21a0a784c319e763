import type { SettingsSection } from '../../settings/service.ts';

/** How mail leaves, as administrators may see it (never the credentials of CAIRN_SMTP_URL). */
export interface SmtpView {
  enabled: boolean;
  host: string;
  port: number;
}

/**
 * PocketBase's `smtp` settings section, read-only in Cairn: the transport comes from CAIRN_SMTP_URL
 * at start, so the secret stays in the environment instead of the database.
 */
export function smtpSection(smtpUrl: string | undefined): SettingsSection<SmtpView> {
  let view: SmtpView = { enabled: false, host: '', port: 0 };
  if (smtpUrl) {
    try {
      const url = new URL(smtpUrl);
      view = { enabled: true, host: url.hostname, port: Number(url.port) || (url.protocol === 'smtps:' ? 465 : 587) };
    } catch {
      view = { enabled: true, host: '', port: 0 };
    }
  }
  return {
    name: 'smtp',
    defaults: () => view,
    merge(_input, current, errors) {
      errors.smtp = { code: 'validation_read_only', message: 'Mail delivery is set with CAIRN_SMTP_URL when the server starts.' };
      return current;
    },
    // The environment decides, whatever an older version may have stored.
    view: () => view,
  };
}
