import { createHash } from 'node:crypto';
import { authSettingsOf } from '../collections/auth-settings.ts';
import type { Collection } from '../collections/model.ts';
import { type RequestContext, systemContext } from '../context.ts';
import { randomId } from '../lib/ids.ts';
import type { RecordService } from '../records/service.ts';
import type { MetaSettings } from '../settings/meta.ts';
import type { SettingsService } from '../settings/service.ts';
import type { MailAbout, Mailer } from './mail/mailer.ts';
import { authAlertMail, templateMail } from './mail/templates.ts';

/**
 * PocketBase's sign-in origins and login alerts: every sign-in (password, OAuth2, OTP) notes its
 * device in `_authOrigins` (a hash of address and user agent); a sign-in from a device the account
 * has not used, when it has used others, mails the account (the collection's `authAlert`, its
 * `emailTemplate` when set). Its settings are read at each sign-in, so a change acts at once.
 */
export class AuthAlerts {
  constructor(
    private readonly mailer: Mailer,
    private readonly settings: SettingsService,
    private readonly records: RecordService,
  ) {}

  async signedIn(ctx: RequestContext, collection: Collection, row: Record<string, unknown>): Promise<void> {
    const ip = ctx.request.ip ?? '';
    const agent = String(ctx.request.headers['user-agent'] ?? '');
    const fingerprint = createHash('sha256').update(`${ip}\n${agent}`).digest('hex');
    const recordId = String(row.id);
    const known = await ctx.db.all<{ fingerprint: string }>('SELECT fingerprint FROM _authOrigins WHERE collectionRef = ? AND recordRef = ?', [collection.id, recordId]);
    const now = new Date().toISOString();
    if (known.some((o) => o.fingerprint === fingerprint)) {
      await ctx.db.run('UPDATE _authOrigins SET updated = ? WHERE collectionRef = ? AND recordRef = ? AND fingerprint = ?', [now, collection.id, recordId, fingerprint]);
      return;
    }
    await ctx.db.run('INSERT INTO _authOrigins (id, collectionRef, recordRef, fingerprint, created, updated) VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING', [
      randomId(),
      collection.id,
      recordId,
      fingerprint,
      now,
      now,
    ]);
    const alert = authSettingsOf(collection).authAlert;
    const email = typeof row.email === 'string' ? row.email : '';
    if (known.length === 0 || !alert.enabled || email === '') return;
    await this.mail(ctx, collection, recordId, email, `${now.replace('T', ' ').slice(0, 19)} UTC - ${ip}${agent ? ` ${agent}` : ''}`);
  }

  /** Mails the alert about a sign-in from `where` to the account (also `$mails.sendRecordAuthAlert` of pb_hooks). */
  async mail(ctx: RequestContext, collection: Collection, recordId: string, email: string, where: string): Promise<void> {
    const alert = authSettingsOf(collection).authAlert;
    const meta = await this.settings.get<MetaSettings>('meta');
    const about: MailAbout = {
      event: 'auth-alert',
      collection: { id: collection.id, name: collection.name },
      record: () => this.records.view(systemContext(ctx.dbName, ctx.db), collection, recordId) as Promise<Record<string, unknown>>,
      meta: { info: where },
    };
    const mail = alert.emailTemplate
      ? templateMail(alert.emailTemplate, meta, email, { '{ALERT_INFO}': where }, { id: recordId, email })
      : authAlertMail(meta, email, where);
    this.mailer.sendLater(mail, about);
  }
}
