import { isEmail } from '../../collections/fields/email.ts';
import { badRequest, validationFailed } from '../../errors.ts';
import type { MetaSettings } from '../../settings/meta.ts';
import type { SettingsService } from '../../settings/service.ts';
import type { Mailer } from './mailer.ts';
import { type MailPurpose, flowMail } from './templates.ts';

const TEMPLATES: readonly MailPurpose[] = ['verification', 'password-reset'];

/** Error codes of nodemailer and Node's sockets worth showing (they name the failure, never credentials). */
const SAFE_CODE = /^E[A-Z]{2,20}$/;

/**
 * PocketBase v0.22's `POST /api/settings/test/email {email, template}`: sends one of the flow mails,
 * with a token that confirms nothing, through the configured transport, and waits for the outcome so
 * an administrator sees at once whether mail goes out.
 */
export async function sendTestMail(mailer: Mailer, settings: SettingsService, body: unknown): Promise<void> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('The request body must be a JSON object.');
  const { email, template = 'verification' } = body as Record<string, unknown>;
  const errors: Record<string, { code: string; message: string }> = {};
  if (typeof email !== 'string' || !isEmail(email.trim())) errors.email = { code: 'validation_invalid_email', message: 'Must be a valid email address.' };
  if (typeof template !== 'string' || !TEMPLATES.includes(template as MailPurpose)) {
    errors.template = { code: 'validation_invalid_value', message: `Must be one of: ${TEMPLATES.join(', ')}.` };
  }
  if (Object.keys(errors).length > 0) throw validationFailed(errors, 'Failed to send the test email.');
  const meta = await settings.get<MetaSettings>('meta');
  const mail = flowMail(template as MailPurpose, meta, (email as string).trim(), 'test-token-confirms-nothing', 'a test', { kind: 'record', database: 'main', collection: 'users' });
  try {
    await mailer.send({ ...mail, subject: `[Test] ${mail.subject}` });
  } catch (err) {
    mailer.log?.error({ err: err instanceof Error ? err.message : String(err) }, 'sending the test mail failed');
    const code = (err as { code?: unknown }).code;
    throw badRequest(`Failed to send the test email${typeof code === 'string' && SAFE_CODE.test(code) ? ` (${code})` : ''}; the server log has the details.`);
  }
}
