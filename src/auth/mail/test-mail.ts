import { authSettingsOf, type EmailTemplate, flowTemplateOf } from '../../collections/auth-settings.ts';
import { isEmail } from '../../collections/fields/email.ts';
import type { Collection } from '../../collections/model.ts';
import { badRequest, validationFailed } from '../../errors.ts';
import type { MetaSettings } from '../../settings/meta.ts';
import type { SettingsService } from '../../settings/service.ts';
import type { Mailer } from './mailer.ts';
import type { Mail } from './mail.ts';
import { authAlertMail, flowMail, type MailPurpose, otpMail, templateMail } from './templates.ts';

/** The mails an administrator can try (PocketBase's test templates). */
const TEMPLATES = ['verification', 'password-reset', 'email-change', 'otp', 'login-alert'] as const;
type Template = (typeof TEMPLATES)[number];

/** Error codes of nodemailer and Node's sockets worth showing (they name the failure, never credentials). */
const SAFE_CODE = /^E[A-Z]{2,20}$/;

/** Values a test mail fills a collection's template with, in place of a record's (as PocketBase's `__pb_test_<field>__`). */
function sampleRecord(collection: Collection, email: string): Record<string, unknown> {
  const record: Record<string, unknown> = { id: '__pb_test_id__' };
  for (const f of collection.fields) if (!f.hidden) record[f.name] = `__pb_test_${f.name}__`;
  return { ...record, email };
}

/** The collection's own template for a test mail, with the values its real mail would have, or undefined. */
function collectionMail(collection: Collection, template: Template, meta: MetaSettings, to: string): Mail | undefined {
  const s = authSettingsOf(collection);
  const own: [EmailTemplate | undefined, Record<string, string>] =
    template === 'otp'
      ? [s.otp.emailTemplate, { '{OTP}': '123456', '{OTP_ID}': '_PB_TEST_OTP_ID_' }]
      : template === 'login-alert'
        ? [s.authAlert.emailTemplate, { '{ALERT_INFO}': `${new Date().toISOString()} - TEST_IP TEST_USER_AGENT` }]
        : [flowTemplateOf(s, template), { '{TOKEN}': 'test-token-confirms-nothing' }];
  return own[0] ? templateMail(own[0], meta, to, own[1], sampleRecord(collection, to)) : undefined;
}

/**
 * PocketBase's `POST /api/settings/test/email {email, template, collection}`: sends one of the flow
 * mails, with a token that confirms nothing, through the configured transport, and waits for the
 * outcome so an administrator sees at once whether mail goes out. With `collection` (PocketBase ≥
 * 0.23; an auth collection's name or id in the main database) it is that collection's own template,
 * when it has one, filled with sample values.
 */
export async function sendTestMail(mailer: Mailer, settings: SettingsService, body: unknown, findCollection?: (ref: string) => Promise<Collection | undefined>): Promise<void> {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('The request body must be a JSON object.');
  const { email, template, collection: collectionRef } = body as Record<string, unknown>;
  const errors: Record<string, { code: string; message: string }> = {};
  let collection: Collection | undefined;
  if (collectionRef !== undefined && collectionRef !== null && collectionRef !== '') {
    collection = typeof collectionRef === 'string' && findCollection ? await findCollection(collectionRef) : undefined;
    if (collection?.type !== 'auth') errors.collection = { code: 'validation_invalid_auth_collection', message: 'Must be a valid auth collection id or name.' };
  }
  if (typeof email !== 'string' || email.trim() === '') errors.email = { code: 'validation_required', message: 'Cannot be blank.' };
  else if (!isEmail(email.trim())) errors.email = { code: 'validation_is_email', message: 'Must be a valid email address.' };
  if (typeof template !== 'string' || template === '') errors.template = { code: 'validation_required', message: 'Cannot be blank.' };
  else if (!TEMPLATES.includes(template as Template)) errors.template = { code: 'validation_in_invalid', message: `Must be one of: ${TEMPLATES.join(', ')}.` };
  if (Object.keys(errors).length > 0) throw validationFailed(errors, 'Failed to send the test email.');
  const meta = await settings.get<MetaSettings>('meta');
  const to = (email as string).trim();
  const mail =
    (collection && collectionMail(collection, template as Template, meta, to)) ??
    (template === 'otp'
      ? otpMail(meta, to, '12345678', 'a test')
      : template === 'login-alert'
        ? authAlertMail(meta, to, `${new Date().toISOString()} - a test sign-in`)
        : flowMail(template as MailPurpose, meta, to, 'test-token-confirms-nothing', 'a test', { kind: 'record', database: 'main', collection: collection?.name ?? 'users' }));
  try {
    await mailer.send({ ...mail, subject: `[Test] ${mail.subject}` });
  } catch (err) {
    mailer.log?.error({ err: err instanceof Error ? err.message : String(err) }, 'sending the test mail failed');
    const code = (err as { code?: unknown }).code;
    throw badRequest(`Failed to send the test email${typeof code === 'string' && SAFE_CODE.test(code) ? ` (${code})` : ''}; the server log has the details.`);
  }
}
