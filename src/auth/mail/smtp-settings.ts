import type { SettingsSection } from '../../settings/service.ts';
import { isHost, shapedSection } from '../../settings/shape.ts';

/** PocketBase's `smtp` settings section: how mail leaves when CAIRN_SMTP_URL does not say. */
export interface SmtpSettings {
  enabled: boolean;
  host: string;
  port: number;
  username: string;
  password?: string;
  /** `''`, `PLAIN` or `LOGIN`. */
  authMethod: string;
  /** Implicit TLS from the first byte (SMTPS); otherwise STARTTLS when the server offers it. */
  tls: boolean;
  /** The name this host gives in HELO/EHLO. */
  localName: string;
}

/** What CAIRN_SMTP_URL sets, in the section's shape (never its password). */
function fromUrl(smtpUrl: string | undefined): SmtpSettings {
  const off: SmtpSettings = { enabled: false, host: '', port: 587, username: '', authMethod: '', tls: false, localName: '' };
  if (!smtpUrl) return off;
  try {
    const url = new URL(smtpUrl);
    const tls = url.protocol === 'smtps:';
    return { ...off, enabled: true, host: url.hostname, port: Number(url.port) || (tls ? 465 : 587), username: decodeURIComponent(url.username), tls };
  } catch {
    return { ...off, enabled: true };
  }
}

/**
 * The `smtp` section, stored and written in PocketBase's shape with its validation (a host and a
 * port once enabled), the password never shown. CAIRN_SMTP_URL, when set, is what the mailer uses
 * whatever is stored (src/auth/mail/mailer.ts); until something is stored the section shows it.
 */
export function smtpSection(smtpUrl: string | undefined): SettingsSection<SmtpSettings> {
  return shapedSection<SmtpSettings>({
    name: 'smtp',
    shape: {
      fields: { enabled: 'bool', host: 'string', port: 'int', username: 'string', password: 'string', authMethod: 'string', tls: 'bool', localName: 'string' },
    },
    defaults: () => fromUrl(smtpUrl),
    validate(value, problem) {
      if (value.enabled && value.host === '') problem('host', 'validation_required', 'Cannot be blank.');
      else if (value.host !== '' && !isHost(value.host)) problem('host', 'validation_is_host', 'Must be a valid host.');
      if (value.enabled && value.port === 0) problem('port', 'validation_required', 'Cannot be blank.');
      else if (value.port < 0 || value.port > 65535) problem('port', 'validation_invalid_value', 'Must be a port number.');
      if (!['', 'PLAIN', 'LOGIN'].includes(value.authMethod)) problem('authMethod', 'validation_in_invalid', 'Must be a valid value.');
      if (value.localName !== '' && !isHost(value.localName)) problem('localName', 'validation_is_host', 'Must be a valid host.');
    },
    secrets: ['password'],
  });
}
