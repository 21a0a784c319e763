import { isEmail } from '../collections/fields/email.ts';
import type { Collection } from '../collections/model.ts';
import { type RequestContext, systemContext } from '../context.ts';
import { type FieldError, validationFailed } from '../errors.ts';
import { checkPassword } from '../records/auth-fields.ts';
import type { RecordService } from '../records/service.ts';
import { shapeOf } from '../records/shape.ts';
import type { MetaSettings } from '../settings/meta.ts';
import type { SettingsService } from '../settings/service.ts';
import type { Mailer } from './mail/mailer.ts';
import { flowMail, templateMail } from './mail/templates.ts';
import { durationText } from './otp.ts';
import { authSettingsOf } from '../collections/auth-settings.ts';
import { consumeToken, issueToken, type OneTimePurpose, peekToken, revokeTokens } from './one-time-tokens.ts';
import { bodyOf } from './body.ts';
import type { PocketBaseTokens } from './pocketbase-tokens.ts';

/** PocketBase's default lifetime of a password reset link (administrators'; a collection's is its `passwordResetToken.duration`). */
export const PASSWORD_RESET_TTL_SECONDS = 30 * 60;

/** A record's values a template may show: not its hidden fields. */
export function publicValues(collection: Collection, record: Record<string, unknown>): Record<string, unknown> {
  const hidden = new Set(collection.fields.filter((f) => f.hidden).map((f) => f.name));
  return Object.fromEntries(Object.entries(record).filter(([k]) => !hidden.has(k)));
}

const invalidToken = () =>
  validationFailed({ token: { code: 'validation_invalid_token', message: 'Invalid or expired token.' } }, 'Invalid or expired token.');


function emailOf(body: Record<string, unknown>): string {
  const email = typeof body.email === 'string' ? body.email.trim() : '';
  if (email === '') throw validationFailed({ email: { code: 'validation_required', message: 'Cannot be blank.' } });
  if (!isEmail(email)) throw validationFailed({ email: { code: 'validation_invalid_email', message: 'Must be a valid email address.' } });
  return email;
}

interface Account {
  id: string;
  email: string;
  verified: number;
}

/**
 * Email verification and password reset for auth collections (PocketBase's request-/confirm-
 * endpoints). Requests never reveal whether an account exists; confirmations take a single-use,
 * expiring token from the mail; a confirmed reset rotates the tokenKey, revoking earlier sessions.
 */
export class EmailFlows {
  /** Links PocketBase mailed before an import stay good (src/auth/pocketbase-tokens.ts). */
  pocketbase?: PocketBaseTokens;

  constructor(
    private readonly records: RecordService,
    private readonly mailer: Mailer,
    private readonly settings: SettingsService,
    private readonly minPasswordLength: number,
  ) {}

  private async account(ctx: RequestContext, collection: Collection, column: 'email' | 'id', value: string): Promise<Account | undefined> {
    return ctx.db.get<Account>(`SELECT id, email, verified FROM ${shapeOf(collection).table} WHERE ${column} = ?`, [value]);
  }

  /**
   * Mails a flow's single-use token, valid as long as the collection says (`verificationToken`,
   * `passwordResetToken` durations), in the collection's own template when it has one.
   */
  private async mail(ctx: RequestContext, collection: Collection, purpose: OneTimePurpose, account: Account) {
    const settings = authSettingsOf(collection);
    const ttl = purpose === 'verification' ? settings.verificationToken.duration : settings.passwordResetToken.duration;
    const token = await issueToken(ctx.db, purpose, { collectionId: collection.id, recordId: account.id, email: account.email }, ttl);
    const meta = await this.settings.get<MetaSettings>('meta');
    const template = purpose === 'verification' ? settings.verificationTemplate : settings.resetPasswordTemplate;
    if (template) {
      const record = await this.records.view(systemContext(ctx.dbName, ctx.db), collection, account.id).catch(() => ({ id: account.id, email: account.email }));
      this.mailer.sendLater(templateMail(template, meta, account.email, { '{TOKEN}': token }, publicValues(collection, record as Record<string, unknown>)));
      return;
    }
    this.mailer.sendLater(flowMail(purpose, meta, account.email, token, durationText(ttl), { kind: 'record', database: ctx.dbName, collection: collection.name }));
  }

  /** Sends a verification mail to an unverified account; answers the same for unknown addresses. */
  async requestVerification(ctx: RequestContext, collection: Collection, body: unknown): Promise<void> {
    const account = await this.account(ctx, collection, 'email', emailOf(bodyOf(body)));
    if (!account || account.verified === 1) return;
    await this.mail(ctx, collection, 'verification', account);
  }

  async confirmVerification(ctx: RequestContext, collection: Collection, body: unknown): Promise<void> {
    const raw = bodyOf(body).token;
    const token = (await consumeToken(ctx.db, 'verification', collection.id, raw)) ?? (await this.pocketbase?.flowToken(raw, ctx.db, collection, 'verification'));
    const account = token && (await this.account(ctx, collection, 'id', token.recordId));
    // A token mailed to an address the account no longer has proves nothing.
    if (!token || !account || account.email.toLowerCase() !== token.email.toLowerCase()) throw invalidToken();
    if (account.verified !== 1) await this.records.update(systemContext(ctx.dbName, ctx.db), collection, account.id, { verified: true });
  }

  /** Sends a password-reset mail; answers the same for unknown addresses. */
  async requestPasswordReset(ctx: RequestContext, collection: Collection, body: unknown): Promise<void> {
    const account = await this.account(ctx, collection, 'email', emailOf(bodyOf(body)));
    if (!account) return;
    await this.mail(ctx, collection, 'password-reset', account);
  }

  /**
   * Sets the new password. The token is checked before and taken after the password passes
   * validation, so a typo in `passwordConfirm` does not burn the link. Following the link also proves
   * the address, so the account becomes verified.
   */
  async confirmPasswordReset(ctx: RequestContext, collection: Collection, body: unknown): Promise<void> {
    const input = bodyOf(body);
    const errors: Record<string, FieldError> = {};
    const password = checkPassword(input, this.minPasswordLength, errors);
    const carried = await this.pocketbase?.flowToken(input.token, ctx.db, collection, 'passwordReset');
    if (!carried && !(await peekToken(ctx.db, 'password-reset', collection.id, input.token))) throw invalidToken();
    if (password === undefined) throw validationFailed(errors, 'Failed to reset the password.');
    const token = carried ?? (await consumeToken(ctx.db, 'password-reset', collection.id, input.token));
    const account = token && (await this.account(ctx, collection, 'id', token.recordId));
    if (!token || !account || account.email.toLowerCase() !== token.email.toLowerCase()) throw invalidToken();
    await this.records.update(systemContext(ctx.dbName, ctx.db), collection, account.id, { password, passwordConfirm: password, verified: true });
    await revokeTokens(ctx.db, 'password-reset', account.id);
  }
}
