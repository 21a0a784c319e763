import { decodeJwt } from 'jose';
import { authSettingsOf, flowTemplateOf } from '../collections/auth-settings.ts';
import { isEmail } from '../collections/fields/email.ts';
import type { Collection } from '../collections/model.ts';
import { type RequestContext, systemContext } from '../context.ts';
import { badRequest, type FieldError, forbidden, unauthorized, validationFailed } from '../errors.ts';
import type { RecordService } from '../records/service.ts';
import { shapeOf } from '../records/shape.ts';
import type { MetaSettings } from '../settings/meta.ts';
import type { SettingsService } from '../settings/service.ts';
import type { MailAbout, Mailer } from './mail/mailer.ts';
import { flowMail, templateMail } from './mail/templates.ts';
import { durationText } from './otp.ts';
import { consumeToken, issueToken, type OneTimePurpose, type OneTimeToken, peekToken, revokeTokens } from './one-time-tokens.ts';
import { MAX_PASSWORD_LENGTH, verifyPassword } from './passwords.ts';
import { bodyOf } from './body.ts';
import type { PocketBaseTokens } from './pocketbase-tokens.ts';
import { claimUnverified } from './claim.ts';
import { type FlowAction, flowProceeds, type FlowRequestHook } from './flow-hook.ts';

/**
 * The account's other links a confirmation takes with its own token (`consumeToken`): a new password
 * voids the reset and email-change links, a new address the other email-change links and the reset
 * links mailed to the old one.
 */
const VOIDS: Record<OneTimePurpose, readonly OneTimePurpose[]> = {
  'password-reset': ['password-reset', 'email-change'],
  'email-change': ['email-change', 'password-reset'],
  verification: [],
};

/** PocketBase's default lifetime of a password reset link (administrators'; a collection's is its `passwordResetToken.duration`). */
export const PASSWORD_RESET_TTL_SECONDS = 30 * 60;

/** A record's values a template may show: not its hidden fields. */
export function publicValues(collection: Collection, record: Record<string, unknown>): Record<string, unknown> {
  const hidden = new Set(collection.fields.filter((f) => f.hidden).map((f) => f.name));
  return Object.fromEntries(Object.entries(record).filter(([k]) => !hidden.has(k)));
}

const INVALID_TOKEN: FieldError = { code: 'validation_invalid_token', message: 'Invalid or expired token.' };
const invalidToken = () => validationFailed({ token: INVALID_TOKEN }, 'Invalid or expired token.');
const INVALID_TOKEN_PAYLOAD: FieldError = { code: 'validation_invalid_token_payload', message: 'Invalid token payload - type mismatch.' };
/** A JWT whose `type` claim names another kind of token (an auth token sent to a confirmation, as PocketBase words it). */
function otherJwtType(value: string, kind: string): boolean {
  try {
    const type = decodeJwt(value).type;
    return typeof type === 'string' && type !== kind;
  } catch {
    return false;
  }
}
const REQUIRED: FieldError = { code: 'validation_required', message: 'Cannot be blank.' };

/** PocketBase's name of each flow's token type (links it mailed before an import). */
const POCKETBASE_KIND = { verification: 'verification', 'password-reset': 'passwordReset', 'email-change': 'emailChange' } as const;

/** A confirmation's token, checked: Cairn's own (single-use, taken after validation) or PocketBase's (`carried`). */
type CheckedToken = OneTimeToken & { carried: boolean };

const isFieldError = (v: CheckedToken | FieldError): v is FieldError => 'code' in v;


function emailOf(body: Record<string, unknown>): string {
  const email = typeof body.email === 'string' ? body.email.trim() : '';
  if (email === '') throw validationFailed({ email: { code: 'validation_required', message: 'Cannot be blank.' } });
  if (!isEmail(email)) throw validationFailed({ email: { code: 'validation_is_email', message: 'Must be a valid email address.' } });
  return email;
}

interface Account {
  id: string;
  email: string;
  verified: number;
}

/** Where an email change mail goes and what confirming it needs. */
interface EmailChangeAccount extends Account {
  passwordHash: string;
}

/**
 * Email verification and password reset for auth collections (PocketBase's request-/confirm-
 * endpoints). Requests never reveal whether an account exists; confirmations take a single-use,
 * expiring token from the mail; a confirmed reset rotates the tokenKey, revoking earlier sessions.
 */
export class EmailFlows {
  /** Links PocketBase mailed before an import stay good (src/auth/pocketbase-tokens.ts). */
  pocketbase?: PocketBaseTokens;
  /** Set by the hooks domain. */
  onFlowRequest?: FlowRequestHook;

  constructor(
    private readonly records: RecordService,
    private readonly mailer: Mailer,
    private readonly settings: SettingsService,
    private readonly minPasswordLength: number,
  ) {}

  /** Whether the hooks let a request go on to mail `account`. */
  private proceed(ctx: RequestContext, collection: Collection, action: FlowAction, account: Account, newEmail?: string): Promise<boolean> {
    return flowProceeds(this.onFlowRequest, this.records, ctx, collection, action, account.id, newEmail);
  }

  private async account(ctx: RequestContext, collection: Collection, column: 'email' | 'id', value: string): Promise<Account | undefined> {
    return ctx.db.get<Account>(`SELECT id, email, verified FROM ${shapeOf(collection).table} WHERE ${column} = ?`, [value]);
  }

  /**
   * Mails a flow's single-use token, valid as long as the collection says (`verificationToken`,
   * `passwordResetToken`, `emailChangeToken` durations), in the collection's own template when it has
   * one. An email change's mail goes to the new address: following the link proves it.
   */
  private async mail(ctx: RequestContext, collection: Collection, purpose: OneTimePurpose, account: Account, newEmail?: string) {
    const settings = authSettingsOf(collection);
    const ttl = (purpose === 'verification' ? settings.verificationToken : purpose === 'password-reset' ? settings.passwordResetToken : settings.emailChangeToken).duration;
    const token = await issueToken(ctx.db, purpose, { collectionId: collection.id, recordId: account.id, email: account.email, newEmail }, ttl);
    const meta = await this.settings.get<MetaSettings>('meta');
    const to = newEmail ?? account.email;
    const template = flowTemplateOf(settings, purpose);
    const view = () => this.records.view(systemContext(ctx.dbName, ctx.db), collection, account.id) as Promise<Record<string, unknown>>;
    const about: MailAbout = {
      event: purpose,
      collection: { id: collection.id, name: collection.name },
      record: view,
      meta: newEmail === undefined ? { token } : { token, newEmail },
    };
    if (template) {
      const record = await view().catch(() => ({ id: account.id, email: account.email }));
      this.mailer.sendLater(templateMail(template, meta, to, { '{TOKEN}': token }, publicValues(collection, record as Record<string, unknown>)), about);
      return;
    }
    this.mailer.sendLater(flowMail(purpose, meta, to, token, durationText(ttl), { kind: 'record', database: ctx.dbName, collection: collection.name }), about);
  }

  /**
   * The `token` of a confirmation, checked without taking it: its field error, or the token. A token
   * of another collection of this database says so (PocketBase's `validation_token_collection_mismatch`).
   */
  private async checkToken(ctx: RequestContext, purpose: OneTimePurpose, collection: Collection, value: unknown): Promise<CheckedToken | FieldError> {
    if (typeof value !== 'string' || value === '') return REQUIRED;
    const own = await peekToken(ctx.db, purpose, undefined, value);
    const carried = own ? undefined : await this.pocketbase?.flowToken(value, ctx.db, POCKETBASE_KIND[purpose]);
    const token = own ?? carried;
    // As PocketBase: only the email change names a token of another kind (its claims lack newEmail).
    if (!token) return purpose === 'email-change' && otherJwtType(value, POCKETBASE_KIND[purpose]) ? INVALID_TOKEN_PAYLOAD : INVALID_TOKEN;
    if (token.collectionId !== collection.id) {
      return { code: 'validation_token_collection_mismatch', message: 'The provided token is for a different auth collection.' };
    }
    return { ...token, carried: !own };
  }

  /** Takes a checked token: Cairn's are single-use; PocketBase's are stateless and lapse as the account changes. */
  private async take(ctx: RequestContext, purpose: OneTimePurpose, collection: Collection, checked: CheckedToken, raw: unknown): Promise<OneTimeToken | undefined> {
    return checked.carried ? checked : consumeToken(ctx.db, purpose, collection.id, raw, VOIDS[purpose]);
  }

  /**
   * Mails one account a flow's link now, whatever its state (application hooks' `$mails.sendRecord…`):
   * the same mail, template and hooks as the request endpoints'. An email change names the new address.
   */
  async sendFor(ctx: RequestContext, collection: Collection, purpose: OneTimePurpose, recordId: string, newEmail?: string): Promise<void> {
    const account = await this.account(ctx, collection, 'id', recordId);
    if (!account) throw badRequest(`No account "${recordId}" in "${collection.name}".`);
    if (purpose === 'email-change' && (typeof newEmail !== 'string' || !isEmail(newEmail))) throw badRequest('The new email address is not valid.');
    await this.mail(ctx, collection, purpose, account, purpose === 'email-change' ? newEmail : undefined);
  }

  /** Sends a verification mail to an unverified account; answers the same for unknown addresses. */
  async requestVerification(ctx: RequestContext, collection: Collection, body: unknown): Promise<void> {
    const account = await this.account(ctx, collection, 'email', emailOf(bodyOf(body)));
    if (!account || account.verified === 1) return;
    if (!(await this.proceed(ctx, collection, 'request-verification', account))) return;
    await this.mail(ctx, collection, 'verification', account);
  }

  async confirmVerification(ctx: RequestContext, collection: Collection, body: unknown): Promise<void> {
    const input = bodyOf(body);
    const checked = await this.checkToken(ctx, 'verification', collection, input.token);
    if (isFieldError(checked)) throw validationFailed({ token: checked }, 'Invalid or expired token.');
    const token = await this.take(ctx, 'verification', collection, checked, input.token);
    const account = token && (await this.account(ctx, collection, 'id', token.recordId));
    // A token mailed to an address the account no longer has proves nothing.
    if (!token || !account || account.email.toLowerCase() !== token.email.toLowerCase()) throw invalidToken();
    if (account.verified !== 1) {
      await this.records.update(systemContext(ctx.dbName, ctx.db), collection, account.id, { verified: true });
      // The address is proven: OAuth2 links made before it was are removed (issue 36).
      await claimUnverified(ctx.db, collection, account.id, { revokeTokens: false });
    }
  }

  /** Sends a password-reset mail; answers the same for unknown addresses. */
  async requestPasswordReset(ctx: RequestContext, collection: Collection, body: unknown): Promise<void> {
    if (!authSettingsOf(collection).passwordAuth.enabled) throw badRequest('The collection is not configured to allow password authentication.');
    const account = await this.account(ctx, collection, 'email', emailOf(bodyOf(body)));
    if (!account) return;
    if (!(await this.proceed(ctx, collection, 'request-password-reset', account))) return;
    await this.mail(ctx, collection, 'password-reset', account);
  }

  /**
   * Sets the new password. The token is checked before and taken after the password passes
   * validation, so a typo in `passwordConfirm` does not burn the link. Following the link also proves
   * the address, so the account becomes verified.
   */
  async confirmPasswordReset(ctx: RequestContext, collection: Collection, body: unknown): Promise<void> {
    const input = bodyOf(body);
    // Every field's problem at once, as PocketBase's form reports them.
    const errors: Record<string, FieldError> = {};
    const checked = await this.checkToken(ctx, 'password-reset', collection, input.token);
    if (isFieldError(checked)) errors.token = checked;
    const password = typeof input.password === 'string' ? input.password : '';
    if (password === '') errors.password = REQUIRED;
    else if ([...password].length < this.minPasswordLength || password.length > MAX_PASSWORD_LENGTH) {
      errors.password = { code: 'validation_length_out_of_range', message: `The length must be between ${this.minPasswordLength} and ${MAX_PASSWORD_LENGTH}.` };
    }
    if (typeof input.passwordConfirm !== 'string' || input.passwordConfirm === '') errors.passwordConfirm = REQUIRED;
    else if (input.passwordConfirm !== password) errors.passwordConfirm = { code: 'validation_values_mismatch', message: "Values don't match." };
    if (isFieldError(checked) || Object.keys(errors).length > 0) throw validationFailed(errors, errors.token ? 'Invalid or expired token.' : 'Failed to reset the password.');
    const token = await this.take(ctx, 'password-reset', collection, checked, input.token);
    const account = token && (await this.account(ctx, collection, 'id', token.recordId));
    if (!token || !account || account.email.toLowerCase() !== token.email.toLowerCase()) throw invalidToken();
    await this.records.update(systemContext(ctx.dbName, ctx.db), collection, account.id, { password, passwordConfirm: password, verified: true });
    // The new password already revoked the tokens; OAuth2 links made before the address was proven go.
    if (account.verified !== 1) await claimUnverified(ctx.db, collection, account.id, { revokeTokens: false });
    await revokeTokens(ctx.db, 'password-reset', account.id);
  }

  /**
   * Mails a link to change the signed-in account's address to `newEmail` (PocketBase's
   * request-email-change): only for the account itself, never for an address another account of the
   * collection has. Nothing changes until the link is followed from the new address.
   */
  async requestEmailChange(ctx: RequestContext, collection: Collection, body: unknown): Promise<void> {
    const auth = ctx.auth;
    if (auth.type === 'guest') throw unauthorized('The request requires valid record authorization token.');
    if (auth.type !== 'record' || auth.collectionId !== collection.id) {
      throw forbidden(`The request requires an auth record of the ${collection.name} collection.`);
    }
    const input = bodyOf(body);
    const newEmail = typeof input.newEmail === 'string' ? input.newEmail.trim() : '';
    const account = await this.account(ctx, collection, 'id', auth.id);
    if (!account) throw unauthorized('The request requires valid record authorization token.');
    let problem: FieldError | undefined;
    if (newEmail === '') problem = REQUIRED;
    else if (newEmail.length > 255 || !isEmail(newEmail)) problem = { code: 'validation_is_email', message: 'Must be a valid email address.' };
    else if (newEmail.toLowerCase() === account.email.toLowerCase()) problem = { code: 'validation_not_in_invalid', message: 'Must be a different address than the current one.' };
    else if (await this.account(ctx, collection, 'email', newEmail)) problem = { code: 'validation_invalid_new_email', message: 'Invalid new email address.' };
    if (problem) throw validationFailed({ newEmail: problem }, 'An error occurred while validating the submitted data.');
    if (!(await this.proceed(ctx, collection, 'request-email-change', account, newEmail))) return;
    await this.mail(ctx, collection, 'email-change', account, newEmail);
  }

  /**
   * Moves the account to the token's new address with the account's password (PocketBase's
   * confirm-email-change); the address is then verified, since the link reached it. The token is
   * checked first and taken only once the password matched, so a typo does not burn the link.
   */
  async confirmEmailChange(ctx: RequestContext, collection: Collection, body: unknown): Promise<void> {
    const input = bodyOf(body);
    const errors: Record<string, FieldError> = {};
    const checked = await this.checkToken(ctx, 'email-change', collection, input.token);
    if (isFieldError(checked)) errors.token = checked;
    const password = typeof input.password === 'string' ? input.password : '';
    if (password === '') errors.password = REQUIRED;
    let account: EmailChangeAccount | undefined;
    if (!isFieldError(checked)) {
      account = await ctx.db.get<EmailChangeAccount>(`SELECT id, email, verified, "passwordHash" FROM ${shapeOf(collection).table} WHERE id = ?`, [checked.recordId]);
      // A token asked for from an address the account no longer has proves nothing.
      if (!account || account.email.toLowerCase() !== checked.email.toLowerCase()) errors.token = INVALID_TOKEN;
      else if (checked.newEmail && (await this.account(ctx, collection, 'email', checked.newEmail))) {
        errors.token = { code: 'validation_invalid_token_email', message: 'The new email address is invalid.' };
      }
      if (password !== '' && !errors.token && !(account?.passwordHash && (await verifyPassword(account.passwordHash, password)))) {
        errors.password = { code: 'validation_invalid_password', message: 'Missing or invalid auth record password.' };
      }
    }
    if (isFieldError(checked) || Object.keys(errors).length > 0) throw validationFailed(errors, errors.token ? 'Invalid or expired token.' : 'Failed to confirm the email change.');
    const token = await this.take(ctx, 'email-change', collection, checked, input.token);
    if (!token?.newEmail || !account) throw invalidToken();
    await this.records.update(systemContext(ctx.dbName, ctx.db), collection, account.id, { email: token.newEmail, verified: true });
  }
}
