import { createHmac, randomInt, timingSafeEqual } from 'node:crypto';
import { authSettingsOf } from '../collections/auth-settings.ts';
import { isEmail } from '../collections/fields/email.ts';
import type { Collection } from '../collections/model.ts';
import { type RequestContext, systemContext } from '../context.ts';
import { badRequest, type FieldError, forbidden, validationFailed } from '../errors.ts';
import { randomId, randomSecret } from '../lib/ids.ts';
import type { RecordService } from '../records/service.ts';
import { shapeOf } from '../records/shape.ts';
import type { MetaSettings } from '../settings/meta.ts';
import type { SettingsService } from '../settings/service.ts';
import type { Queryable, SchemaStep } from '../storage/index.ts';
import type { MailAbout, Mailer } from './mail/mailer.ts';
import { otpMail, templateMail } from './mail/templates.ts';
import { bodyOf } from './body.ts';
import { claimUnverified } from './claim.ts';
import { flowProceeds, type FlowRequestHook } from './flow-hook.ts';

/** One-time sign-in codes, in the database of their accounts; only a keyed hash of each code is kept. */
export const otpsTableStep: SchemaStep = {
  id: 'auth.otps',
  async up(tx) {
    await tx.exec(`CREATE TABLE _otps (
      id TEXT PRIMARY KEY NOT NULL,
      collectionId TEXT NOT NULL,
      recordId TEXT NOT NULL,
      hash TEXT NOT NULL,
      sentTo TEXT NOT NULL,
      attempts INTEGER DEFAULT 0 NOT NULL,
      created TEXT NOT NULL
    );
    CREATE INDEX _otps_created ON _otps (created)`);
  },
};

/** Wrong codes one OTP takes before it is void. */
export const OTP_MAX_ATTEMPTS = 5;
/** PocketBase's ceiling for `otp.duration`: rows older than that are void whatever the settings. */
const MAX_OTP_SECONDS = 86400;

/** Deletes one-time passwords older than any duration allows (the `__pbOTPCleanup__` job). */
export async function pruneOtps(db: Queryable, now = Date.now()): Promise<void> {
  await db.run('DELETE FROM _otps WHERE created < ?', [new Date(now - MAX_OTP_SECONDS * 1000).toISOString()]);
}


/** `180` → "3 minutes", for the mail. */
export function durationText(seconds: number): string {
  const [n, unit] = seconds % 3600 === 0 ? [seconds / 3600, 'hour'] : seconds % 60 === 0 ? [seconds / 60, 'minute'] : [seconds, 'second'];
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

function requireOtp(collection: Collection): void {
  if (!authSettingsOf(collection).otp.enabled) throw forbidden('The collection is not configured to allow OTP authentication.');
}

// Every way an OTP can fail answers the same, so that an `otpId` given for an unknown address (which
// has no row) cannot be told from a real one.
const invalidOtp = () => badRequest('Invalid or expired OTP.');

interface OtpRow {
  collectionId: string;
  recordId: string;
  hash: string;
  sentTo: string;
  attempts: number;
  created: string;
}

/**
 * PocketBase ≥ 0.23's OTP sign-in: `request-otp` mails a code of `otp.length` digits and answers an
 * `otpId` (for an unknown address too, with no mail and nothing stored: the answer tells nothing);
 * `auth-with-otp` takes the id and the code. A code is single use, void after `otp.duration` seconds
 * or `OTP_MAX_ATTEMPTS` wrong tries, and stored only as an HMAC under a key derived from the instance
 * secret (a leaked table cannot be searched for the eight-digit codes without it).
 */
export class OtpService {
  /** Set by the hooks domain (`onRecordAuthFlowRequest`, pb_hooks' `onRecordRequestOTPRequest`). */
  onFlowRequest?: FlowRequestHook;

  constructor(
    private readonly key: Uint8Array,
    private readonly records: RecordService,
    private readonly mailer: Mailer,
    private readonly settings: SettingsService,
  ) {}

  private hash(otpId: string, code: string): string {
    return createHmac('sha256', this.key).update(`${otpId}:${code}`).digest('base64url');
  }

  async request(ctx: RequestContext, collection: Collection, input: unknown): Promise<{ otpId: string }> {
    requireOtp(collection);
    const raw = bodyOf(input).email;
    const email = typeof raw === 'string' ? raw.trim() : '';
    if (email === '') throw validationFailed({ email: { code: 'validation_required', message: 'Cannot be blank.' } });
    if (email.length > 255 || !isEmail(email)) throw validationFailed({ email: { code: 'validation_is_email', message: 'Must be a valid email address.' } });
    const otpId = randomId();
    const account = await ctx.db.get<{ id: string; email: string }>(`SELECT id, email FROM ${shapeOf(collection).table} WHERE email = ?`, [email]);
    if (!account) return { otpId };
    // A handler that does not go on: the same answer, nothing stored or sent.
    if (!(await flowProceeds(this.onFlowRequest, this.records, ctx, collection, 'request-otp', account.id))) return { otpId };

    const { length } = authSettingsOf(collection).otp;
    let code = '';
    for (let i = 0; i < length; i++) code += String(randomInt(10));
    const now = new Date();
    await ctx.db.transaction(async (tx) => {
      // Codes past any duration go whenever a new one is made, so the table stays small.
      await tx.run('DELETE FROM _otps WHERE created < ?', [new Date(now.getTime() - MAX_OTP_SECONDS * 1000).toISOString()]);
      await tx.run('INSERT INTO _otps (id, collectionRef, recordRef, hash, sentTo, attempts, created, updated) VALUES (?, ?, ?, ?, ?, 0, ?, ?)', [
        otpId,
        collection.id,
        account.id,
        this.hash(otpId, code),
        account.email,
        now.toISOString(),
        now.toISOString(),
      ]);
    });
    await this.mailCode(ctx, collection, account, otpId, code);
    return { otpId };
  }

  /** Mails `code` of OTP `otpId` to the account (also `$mails.sendRecordOTP` of pb_hooks). */
  async mailCode(ctx: RequestContext, collection: Collection, account: { id: string; email: string }, otpId: string, code: string): Promise<void> {
    const { duration } = authSettingsOf(collection).otp;
    const meta = await this.settings.get<MetaSettings>('meta');
    const template = authSettingsOf(collection).otp.emailTemplate;
    // The collection's own mail (PocketBase's template) when it has one, with the record's id and email.
    const about: MailAbout = {
      event: 'otp',
      collection: { id: collection.id, name: collection.name },
      record: () => this.records.view(systemContext(ctx.dbName, ctx.db), collection, account.id) as Promise<Record<string, unknown>>,
      meta: { otpId, password: code },
    };
    if (template) this.mailer.sendLater(templateMail(template, meta, account.email, { '{OTP}': code, '{OTP_ID}': otpId }, { id: account.id, email: account.email }), about);
    else this.mailer.sendLater(otpMail(meta, account.email, code, durationText(duration)), about);
  }

  /**
   * Checks an `otpId` and its code and takes the OTP; returns the id of the account it was sent to.
   * Every try counts before the code is compared, in the same statement, so parallel guesses get no
   * more than `OTP_MAX_ATTEMPTS` comparisons. Signing in by a code mailed to the account's address
   * proves the address: the account becomes verified, and (as PocketBase does, unless MFA is on) its
   * password is replaced by a random one, which also ends the sessions of whoever may have registered
   * the address before its owner.
   */
  async verify(ctx: RequestContext, collection: Collection, input: unknown): Promise<string> {
    requireOtp(collection);
    const body = bodyOf(input);
    const errors: Record<string, FieldError> = {};
    const otpId = body.otpId;
    const code = body.password;
    if (typeof otpId !== 'string' || otpId === '') errors.otpId = { code: 'validation_required', message: 'Cannot be blank.' };
    else if (otpId.length > 255) errors.otpId = { code: 'validation_length_out_of_range', message: 'Must be at most 255 characters.' };
    if (typeof code !== 'string' || code === '') errors.password = { code: 'validation_required', message: 'Cannot be blank.' };
    else if (code.length > 71) errors.password = { code: 'validation_length_out_of_range', message: 'Must be at most 71 characters.' };
    if (Object.keys(errors).length > 0) throw validationFailed(errors);

    const row = await ctx.db.transaction((tx) =>
      tx.get<OtpRow>(
        `UPDATE _otps SET attempts = attempts + 1 WHERE id = ? AND collectionRef = ? AND attempts < ${OTP_MAX_ATTEMPTS} RETURNING collectionRef AS collectionId, recordRef AS recordId, hash, sentTo, attempts, created`,
        [otpId, collection.id],
      ),
    );
    if (!row) throw invalidOtp();
    const expired = Date.parse(row.created) + authSettingsOf(collection).otp.duration * 1000 < Date.now();
    const right = !expired && timingSafeEqual(Buffer.from(this.hash(otpId as string, code as string)), Buffer.from(row.hash));
    if (!right) {
      if (expired || row.attempts >= OTP_MAX_ATTEMPTS) await ctx.db.run('DELETE FROM _otps WHERE id = ?', [otpId]);
      throw invalidOtp();
    }
    // Single use: of two right answers sent at once, only the one that deletes the row signs in.
    const taken = await ctx.db.transaction((tx) => tx.get<{ recordId: string }>('DELETE FROM _otps WHERE id = ? RETURNING recordRef AS recordId', [otpId]));
    if (!taken) throw invalidOtp();

    const account = await ctx.db.get<{ id: string; email: string; verified: number | boolean }>(`SELECT id, email, verified FROM ${shapeOf(collection).table} WHERE id = ?`, [row.recordId]);
    if (!account) throw invalidOtp();
    const verified = account.verified === 1 || account.verified === true;
    if (!verified && account.email.toLowerCase() === row.sentTo.toLowerCase()) {
      const change: Record<string, unknown> = { verified: true };
      if (!authSettingsOf(collection).mfa.enabled) {
        const password = randomSecret(32);
        Object.assign(change, { password, passwordConfirm: password });
      }
      await this.records.update(systemContext(ctx.dbName, ctx.db), collection, account.id, change);
      // Earlier OAuth2 links go (issue 36 hole 3); with MFA on the password stays, so the tokens are
      // revoked here.
      await claimUnverified(ctx.db, collection, account.id, { revokeTokens: change.password === undefined });
    }
    return account.id;
  }
}
