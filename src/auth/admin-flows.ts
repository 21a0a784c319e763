import { isEmail } from '../collections/fields/email.ts';
import { validationFailed } from '../errors.ts';
import type { MetaSettings } from '../settings/meta.ts';
import type { SettingsService } from '../settings/service.ts';
import type { Database } from '../storage/index.ts';
import type { AdminRow, AdminService } from './admins.ts';
import { PASSWORD_RESET_TTL_SECONDS } from './email-flows.ts';
import type { Mailer } from './mail/mailer.ts';
import { flowMail } from './mail/templates.ts';
import { consumeToken, issueToken, peekToken, revokeTokens } from './one-time-tokens.ts';
import { bodyOf } from './body.ts';
import type { PocketBaseTokens } from './pocketbase-tokens.ts';

/** Stands for the administrators in `_auth_tokens` of system.db, where no collection id exists. */
const ADMINS = '_admins';

const invalidToken = () =>
  validationFailed({ token: { code: 'validation_invalid_token', message: 'Invalid or expired token.' } }, 'Invalid or expired token.');


/**
 * PocketBase's administrator password reset (`/api/admins/request-password-reset`,
 * `/confirm-password-reset`): the same single-use, expiring mailed tokens as the user flows, kept in
 * system.db beside the administrators. A request never reveals whether the address belongs to one.
 * A reset link PocketBase mailed to a superuser before `cairn import pocketbase` works too
 * (`pocketbase`): it is stateless, and setting the password (a new tokenKey) ends it.
 */
export class AdminPasswordReset {
  /** Reset links PocketBase issued to imported superusers (src/auth/pocketbase-tokens.ts). */
  pocketbase?: PocketBaseTokens;

  constructor(
    private readonly system: Database,
    private readonly admins: AdminService,
    private readonly mailer: Mailer,
    private readonly settings: SettingsService,
  ) {}

  async request(body: unknown): Promise<void> {
    const email = bodyOf(body).email;
    if (typeof email !== 'string' || !isEmail(email.trim())) {
      throw validationFailed({ email: { code: 'validation_is_email', message: 'Must be a valid email address.' } });
    }
    const admin = await this.admins.findByEmail(email.trim());
    if (!admin) return;
    const token = await issueToken(this.system, 'password-reset', { collectionId: ADMINS, recordId: admin.id, email: admin.email }, PASSWORD_RESET_TTL_SECONDS);
    this.mailer.sendLater(flowMail('password-reset', await this.settings.get<MetaSettings>('meta'), admin.email, token, '30 minutes', { kind: 'admin' }));
  }

  /** Sets the new password, which also revokes the administrator's earlier auth tokens. The token is
   * taken only once the password passes validation, so a typo does not burn the link. */
  async confirm(body: unknown): Promise<AdminRow> {
    const input = bodyOf(body);
    const own = await peekToken(this.system, 'password-reset', ADMINS, input.token);
    const carried = own ? undefined : await this.pocketbase?.adminResetToken(input.token);
    if (!own && !carried) throw invalidToken();
    if (typeof input.password !== 'string' || input.passwordConfirm !== input.password) {
      throw validationFailed({ passwordConfirm: { code: 'validation_values_mismatch', message: "Values don't match." } }, 'Failed to reset the password.');
    }
    const problem = this.admins.passwordProblem(input.password);
    if (problem) throw validationFailed({ password: problem }, 'Failed to reset the password.');
    const token = carried ?? (await consumeToken(this.system, 'password-reset', ADMINS, input.token, ['password-reset']));
    const admin = token && (await this.admins.find(token.recordId));
    if (!token || !admin || admin.email.toLowerCase() !== token.email.toLowerCase()) throw invalidToken();
    const updated = await this.admins.update(admin.id, { password: input.password, passwordConfirm: input.password });
    await revokeTokens(this.system, 'password-reset', admin.id);
    return updated;
  }
}
