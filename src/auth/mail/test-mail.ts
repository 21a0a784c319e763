import { isEmail } from '../../collections/fields/email.ts';
import { badRequest, validationFailed } from '../../errors.ts';
import type { MetaSettings } from '../../settings/meta.ts';
import type { SettingsService } from '../../settings/service.ts';
import type { Mailer } from './mailer.ts';
import { authAlertMail, flowMail, type MailPurpose, otpMail } from './templates.ts';

/** The mails an administrator can try (PocketBase's test templates). */
const TEMPLATES = ['verification', 'password-reset', 'email-change', 'otp', 'login-alert'] as const;
type Template = (typeof TEMPLATES)[number];

/** Error codes of nodemailer and Node's sockets worth showing (they name the failure, never credentials). */
const SAFE_CODE = /^E[A-Z]{2,20}$/;

/**
 * PocketBase v0.22's `POST /api/settings/test/email {email, template}`: sends one of the flow mails,
 * with a token that confirms nothing, through the configured transport, and waits for the outcome so
 * an administrator sees at once whether mail goes out.
 */
export async function sendTestMail(mailer: Mailer, settings: SettingsService, body: unknown): Promise<void> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('The request body must be a JSON object.');
  const { email, template } = body as Record<string, unknown>;
  const errors: Record<string, { code: string; message: string }> = {};
  if (typeof email !== 'string' || email.trim() === '') errors.email = { code: 'validation_required', message: 'Cannot be blank.' };
  else if (!isEmail(email.trim())) errors.email = { code: 'validation_is_email', message: 'Must be a valid email address.' };
  if (typeof template !== 'string' || template === '') errors.template = { code: 'validation_required', message: 'Cannot be blank.' };
  else if (!TEMPLATES.includes(template as Template)) errors.template = { code: 'validation_in_invalid', message: `Must be one of: ${TEMPLATES.join(', ')}.` };
  if (Object.keys(errors).length > 0) throw validationFailed(errors, 'Failed to send the test email.');
  const meta = await settings.get<MetaSettings>('meta');
  const to = (email as string).trim();
  const mail =
    template === 'otp'
      ? otpMail(meta, to, '12345678', 'a test')
      : template === 'login-alert'
        ? authAlertMail(meta, to, `${new Date().toISOString()} - a test sign-in`)
        : flowMail(template as MailPurpose, meta, to, 'test-token-confirms-nothing', 'a test', { kind: 'record', database: 'main', collection: 'users' });
  try {
    await mailer.send({ ...mail, subject: `[Test] ${mail.subject}` });
  } catch (err) {
    mailer.log?.error({ err: err instanceof Error ? err.message : String(err) }, 'sending the test mail failed');
    const code = (err as { code?: unknown }).code;
    throw badRequest(`Failed to send the test email${typeof code === 'string' && SAFE_CODE.test(code) ? ` (${code})` : ''}; the server log has the details.`);
  }
}
