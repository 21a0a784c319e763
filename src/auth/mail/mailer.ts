import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Transporter } from 'nodemailer';
import { randomId } from '../../lib/ids.ts';
import { addressesOf, handToSendmail, sendmailMessage } from './sendmail.ts';
import type { Mail } from './mail.ts';
import type { SmtpSettings } from './smtp-settings.ts';

export type { Mail } from './mail.ts';

/** What an auth flow's mail is about, for the hooks that see it before it leaves (pb_hooks' onMailerRecord*Send). */
export interface MailAbout {
  event: 'password-reset' | 'verification' | 'email-change' | 'otp' | 'auth-alert';
  collection: { id: string; name: string };
  /** The account's record, read when a hook asks for it. */
  record: () => Promise<Record<string, unknown>>;
  /** PocketBase's `e.meta`: the token, the OTP's id and code… */
  meta: Record<string, unknown>;
}

/** Runs before a mail leaves: the mail to send (changed or not), or undefined when a hook stopped it. */
export type MailHook = (mail: Mail, about?: MailAbout) => Promise<Mail | undefined>;

export interface MailLog {
  error(obj: object, msg: string): void;
}

/**
 * Sends mail through CAIRN_SMTP_URL; without it, through the SMTP server of the `smtp` settings
 * section when that is enabled (an imported PocketBase's, or one set through `/api/settings`); else,
 * as PocketBase, hands it to the system's `sendmail` when there is one (and CAIRN_MAIL_DIR is not
 * set); else writes each message as an `.eml` file under the mail folder (mode 0600: the messages
 * carry single-use tokens). nodemailer (some 10 MB resident) is imported with the first mail: most
 * instances send none for hours.
 */
export class Mailer {
  /** The transport in use and the settings it was made from (a changed section makes a new one). */
  private transport?: { key: string; transport: Promise<Transporter> };
  private readonly pending = new Set<Promise<void>>();
  private closing?: Promise<void>;
  log?: MailLog;
  /** The application hooks' (onMailerSend and the auth flows' mail events), set while hooks are loaded. */
  hook?: MailHook;

  constructor(
    private readonly smtpUrl: string | undefined,
    private readonly mailDir: string,
    /** The `smtp` settings section, read for each mail (cached by the settings service). */
    private readonly stored?: () => Promise<SmtpSettings>,
    /** The system's `sendmail` (sendmail.ts), for mail when no SMTP server is set. */
    private readonly sendmail?: string,
  ) {}

  /** The transport for the next mail, and whether it writes files. */
  private async transporter(): Promise<{ transport: Transporter; toFiles: boolean; toSendmail: boolean }> {
    const stored = this.smtpUrl ? undefined : await this.stored?.();
    const settings = stored?.enabled && stored.host !== '' ? stored : undefined;
    const key = this.smtpUrl ? 'url' : settings ? JSON.stringify(settings) : this.sendmail ? 'sendmail' : 'files';
    if (this.transport?.key !== key) {
      const previous = this.transport?.transport;
      const transport = import('nodemailer').then(({ default: nodemailer }) => {
        if (this.smtpUrl) return nodemailer.createTransport(this.smtpUrl);
        // Files take the message as built here; sendmail gets PocketBase's own (in `send`).
        if (!settings) return nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
        return nodemailer.createTransport({
          host: settings.host,
          port: settings.port,
          secure: settings.tls,
          name: settings.localName || undefined,
          auth: settings.username ? { user: settings.username, pass: settings.password ?? '' } : undefined,
          authMethod: settings.authMethod || undefined,
        });
      });
      this.transport = { key, transport };
      // Mails already handed to the old transport finish there; it closes once idle.
      void previous?.then((t) => t.close()).catch(() => undefined);
    }
    return { transport: await this.transport.transport, toFiles: key === 'files', toSendmail: key === 'sendmail' };
  }

  async send(given: Mail, about?: MailAbout): Promise<void> {
    const mail = this.hook ? await this.hook(given, about) : given;
    if (!mail) return;
    const { transport, toFiles, toSendmail } = await this.transporter();
    if (toSendmail && this.sendmail) {
      // As PocketBase: its own plain message, the recipients (Bcc included) as the argument.
      const recipients = [mail.to, mail.cc, mail.bcc].flatMap(addressesOf);
      return handToSendmail(this.sendmail, recipients, sendmailMessage(mail));
    }
    const info = await transport.sendMail({
      from: mail.from,
      to: mail.to,
      subject: mail.subject,
      text: mail.text,
      html: mail.html,
      ...(mail.cc ? { cc: mail.cc } : {}),
      ...(mail.bcc ? { bcc: mail.bcc } : {}),
      ...(mail.replyTo ? { replyTo: mail.replyTo } : {}),
      ...(mail.headers && Object.keys(mail.headers).length ? { headers: mail.headers } : {}),
    });
    if (toFiles) {
      mkdirSync(this.mailDir, { recursive: true, mode: 0o700 });
      const name = `${new Date().toISOString().replace(/[:.]/g, '-')}-${randomId(6)}.eml`;
      // Written under a name no reader looks for, then renamed: whoever watches the folder for
      // `.eml` files never reads one half-written.
      const partial = path.join(this.mailDir, `.${name}.partial`);
      writeFileSync(partial, info.message as Buffer, { mode: 0o600 });
      renameSync(partial, path.join(this.mailDir, name));
    }
  }

  /**
   * Sends in the background: request endpoints answer at once whether or not a mail goes out, so
   * neither the answer nor its timing tells whether an account exists. Failures are logged.
   */
  sendLater(mail: Mail, about?: MailAbout): void {
    const job = this.send(mail, about)
      .catch((err: unknown) => this.log?.error({ err: err instanceof Error ? err.message : String(err) }, 'sending mail failed'))
      .finally(() => this.pending.delete(job));
    this.pending.add(job);
  }

  /**
   * Waits for mails still being sent (graceful shutdown), for at most `waitMs`: an SMTP server that
   * does not answer must not hold the shutdown for its own timeouts (minutes). Mails still under way
   * then are given up, and counted in the log.
   */
  close(waitMs = Infinity): Promise<void> {
    this.closing ??= (async () => {
      let timer: NodeJS.Timeout | undefined;
      const waited = await Promise.race([
        Promise.all(this.pending).then(() => true),
        new Promise<boolean>((resolve) => {
          if (Number.isFinite(waitMs)) timer = setTimeout(() => resolve(false), waitMs);
        }),
      ]);
      clearTimeout(timer);
      if (!waited) this.log?.error({ mails: this.pending.size }, 'shutdown: mails still being sent were given up');
      (await this.transport?.transport.catch(() => undefined))?.close();
    })();
    return this.closing;
  }
}
