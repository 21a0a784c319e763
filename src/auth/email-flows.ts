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
import { flowMail } from './mail/templates.ts';
import { consumeToken, issueToken, type OneTimePurpose, peekToken, revokeTokens } from './one-time-tokens.ts';
import { bodyOf } from './body.ts';

/** PocketBase's defaults: a verification link lasts a week, a reset link half an hour. */
export const VERIFICATION_TTL_SECONDS = 7 * 86400;
export const PASSWORD_RESET_TTL_SECONDS = 30 * 60;

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
  constructor(
    private readonly records: RecordService,
    private readonly mailer: Mailer,
    private readonly settings: SettingsService,
    private readonly minPasswordLength: number,
  ) {}

  private async account(ctx: RequestContext, collection: Collection, column: 'email' | 'id', value: string): Promise<Account | undefined> {
    return ctx.db.get<Account>(`SELECT id, email, verified FROM ${shapeOf(collection).table} WHERE ${column} = ?`, [value]);
  }

  private async mail(ctx: RequestContext, collection: Collection, purpose: OneTimePurpose, account: Account, ttl: number, validFor: string) {
    const token = await issueToken(ctx.db, purpose, { collectionId: collection.id, recordId: account.id, email: account.email }, ttl);
    const meta = await this.settings.get<MetaSettings>('meta');
    this.mailer.sendLater(flowMail(purpose, meta, account.email, token, validFor, { kind: 'record', database: ctx.dbName, collection: collection.name }));
  }

  /** Sends a verification mail to an unverified account; answers the same for unknown addresses. */
  async requestVerification(ctx: RequestContext, collection: Collection, body: unknown): Promise<void> {
    const account = await this.account(ctx, collection, 'email', emailOf(bodyOf(body)));
    if (!account || account.verified === 1) return;
    await this.mail(ctx, collection, 'verification', account, VERIFICATION_TTL_SECONDS, '7 days');
  }

  async confirmVerification(ctx: RequestContext, collection: Collection, body: unknown): Promise<void> {
    const token = await consumeToken(ctx.db, 'verification', collection.id, bodyOf(body).token);
    const account = token && (await this.account(ctx, collection, 'id', token.recordId));
    // A token mailed to an address the account no longer has proves nothing.
    if (!token || !account || account.email.toLowerCase() !== token.email.toLowerCase()) throw invalidToken();
    if (account.verified !== 1) await this.records.update(systemContext(ctx.dbName, ctx.db), collection, account.id, { verified: true });
  }

  /** Sends a password-reset mail; answers the same for unknown addresses. */
  async requestPasswordReset(ctx: RequestContext, collection: Collection, body: unknown): Promise<void> {
    const account = await this.account(ctx, collection, 'email', emailOf(bodyOf(body)));
    if (!account) return;
    await this.mail(ctx, collection, 'password-reset', account, PASSWORD_RESET_TTL_SECONDS, '30 minutes');
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
    if (!(await peekToken(ctx.db, 'password-reset', collection.id, input.token))) throw invalidToken();
    if (password === undefined) throw validationFailed(errors, 'Failed to reset the password.');
    const token = await consumeToken(ctx.db, 'password-reset', collection.id, input.token);
    const account = token && (await this.account(ctx, collection, 'id', token.recordId));
    if (!token || !account || account.email.toLowerCase() !== token.email.toLowerCase()) throw invalidToken();
    await this.records.update(systemContext(ctx.dbName, ctx.db), collection, account.id, { password, passwordConfirm: password, verified: true });
    await revokeTokens(ctx.db, 'password-reset', account.id);
  }
}
