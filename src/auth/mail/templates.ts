import type { MetaSettings } from '../../settings/meta.ts';
import type { Mail } from './mailer.ts';

export type MailPurpose = 'verification' | 'password-reset' | 'email-change';

const COPY: Record<MailPurpose, { subject: string; intro: string; action: string; outro: string }> = {
  verification: {
    subject: 'Verify your {app} email',
    intro: 'Thank you for joining {app}. Confirm your email address with the link below.',
    action: 'Verify',
    outro: 'If you did not sign up, ignore this email.',
  },
  'password-reset': {
    subject: 'Reset your {app} password',
    intro: 'A password reset was requested for your {app} account. Choose a new password with the link below.',
    action: 'Reset password',
    outro: 'If you did not ask to reset your password, ignore this email: your password stays as it is.',
  },
  'email-change': {
    subject: 'Confirm your {app} new email address',
    intro: 'A change of your {app} account\'s email address to this one was requested. Confirm it with the link below and your password.',
    action: 'Confirm new email',
    outro: 'If you did not ask to change your email address, ignore this email: your account keeps its address.',
  },
};

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** Whose account a mail is for, which decides the dashboard page its link opens. */
export type MailAccount = { kind: 'record'; database: string; collection: string } | { kind: 'admin' };

/**
 * The dashboard page that completes a flow. Users' links are PocketBase's
 * (`<appUrl>/_/#/auth/confirm-…/<token>`), with the database and collection added when they are not
 * the page's defaults (`main`, `users`), since Cairn's tokens are opaque and the page must know where
 * to confirm them; a `users` account of `main` gets PocketBase's link exactly (clients' suites cut
 * the token from it). Administrators' follow PocketBase's admin page
 * (`<appUrl>/_/#/confirm-password-reset/<token>`).
 */
export function flowLink(purpose: MailPurpose, appUrl: string, token: string, account: MailAccount): string {
  if (account.kind === 'admin') return `${appUrl}/_/#/confirm-${purpose}/${token}`;
  const query = new URLSearchParams();
  if (account.database !== 'main') query.set('db', account.database);
  if (account.collection !== 'users') query.set('collection', account.collection);
  return `${appUrl}/_/#/auth/confirm-${purpose}/${token}${query.size > 0 ? `?${query}` : ''}`;
}

/** The mail for a flow: a link to the page that completes it, and the token on its own, for apps that
 * confirm through the API themselves. */
export function flowMail(purpose: MailPurpose, meta: MetaSettings, to: string, token: string, validFor: string, account: MailAccount): Mail {
  const copy = COPY[purpose];
  const app = meta.appName;
  const link = flowLink(purpose, meta.appUrl, token, account);
  const intro = copy.intro.replace('{app}', app);
  const text = `Hello,\n\n${intro}\n\n${link}\n\nToken: ${token}\n\nThe link is valid for ${validFor} and can be used once.\n${copy.outro}\n\n${app}\n`;
  const html =
    `<p>Hello,</p><p>${escapeHtml(intro)}</p>` +
    `<p><a href="${escapeHtml(link)}">${escapeHtml(copy.action)}</a></p>` +
    `<p>Token: <code>${escapeHtml(token)}</code></p>` +
    `<p>The link is valid for ${escapeHtml(validFor)} and can be used once.<br>${escapeHtml(copy.outro)}</p><p>${escapeHtml(app)}</p>`;
  return { from: { name: meta.senderName, address: meta.senderAddress }, to, subject: copy.subject.replace('{app}', app), text, html };
}

/** The mail of a one-time sign-in code (PocketBase ≥ 0.23's OTP): the code and how long it lasts. */
export function otpMail(meta: MetaSettings, to: string, code: string, validFor: string): Mail {
  const app = meta.appName;
  const intro = `Your one-time code to sign in to ${app}:`;
  const outro = 'If you did not ask to sign in, ignore this email: nobody can sign in without the code.';
  const text = `Hello,\n\n${intro}\n\nCode: ${code}\n\nThe code is valid for ${validFor} and can be used once.\n${outro}\n\n${app}\n`;
  const html =
    `<p>Hello,</p><p>${escapeHtml(intro)}</p><p><strong>Code: <code>${escapeHtml(code)}</code></strong></p>` +
    `<p>The code is valid for ${escapeHtml(validFor)} and can be used once.<br>${escapeHtml(outro)}</p><p>${escapeHtml(app)}</p>`;
  return { from: { name: meta.senderName, address: meta.senderAddress }, to, subject: `Your ${app} sign-in code`, text, html };
}

/**
 * PocketBase's system alert to an administrator (v0.39: an automated backup that failed): the subject
 * `[<app> system alert] <what>`, the details as they are, and where to look further.
 */
export function systemAlertMail(meta: MetaSettings, to: string, what: string, details: string): Mail {
  const app = meta.appName;
  const outro = 'For more information you could explore the logs in the dashboard of your application.';
  const text = `${app} system alert occurred:\n\n${details}\n\n${outro}\n`;
  const html =
    `<p>${escapeHtml(app)} system alert occurred:</p>` +
    `<p style="padding:15px;background:#e4e8ec;border-radius:5px;white-space:pre-wrap"><strong>${escapeHtml(details)}</strong></p><p>${escapeHtml(outro)}</p>`;
  return { from: { name: meta.senderName, address: meta.senderAddress }, to, subject: `[${app} system alert] ${what}`, text, html };
}

/** The mail telling an account it was signed in to from somewhere new (PocketBase's login alert). */
export function authAlertMail(meta: MetaSettings, to: string, where: string): Mail {
  const app = meta.appName;
  const intro = `Your ${app} account was just signed in to from a new location:`;
  const outro = 'If it was not you, change your password at once: that ends every session.';
  const text = `Hello,\n\n${intro}\n\n${where}\n\n${outro}\n\n${app}\n`;
  const html = `<p>Hello,</p><p>${escapeHtml(intro)}</p><p><em>${escapeHtml(where)}</em></p><p>${escapeHtml(outro)}</p><p>${escapeHtml(app)}</p>`;
  return { from: { name: meta.senderName, address: meta.senderAddress }, to, subject: `Sign-in to ${app} from a new location`, text, html };
}

/**
 * A collection's own mail (PocketBase's templates, carried by an import or set through the
 * collections API): `{APP_NAME}`, `{APP_URL}`, `{TOKEN}`, `{OTP}`, `{OTP_ID}` and `{RECORD:field}`
 * replaced as PocketBase replaces them. Record values are those anyone shown the record may see:
 * hidden fields and the auth secrets stay placeholders.
 */
export function templateMail(
  template: { subject: string; body: string },
  meta: MetaSettings,
  to: string,
  values: Record<string, string>,
  record: Record<string, unknown>,
): Mail {
  const all: Record<string, string> = { '{APP_NAME}': meta.appName, '{APP_URL}': meta.appUrl, ...values };
  for (const [key, value] of Object.entries(record)) {
    if (value === null || value === undefined || typeof value === 'object') continue;
    all[`{RECORD:${key}}`] = String(value);
  }
  const fill = (text: string, escape: boolean) => text.replace(/\{[A-Z_]+(?::[A-Za-z0-9_]+)?\}/g, (m) => (all[m] === undefined ? m : escape ? escapeHtml(all[m]) : all[m]));
  const html = fill(template.body, true);
  const text = html
    .replace(/<(br|\/p|\/div|\/h[1-6]|\/li)\s*\/?>/gi, '\n')
    .replace(/<a\s[^>]*href="([^"]*)"[^>]*>([^<]*)<\/a>/gi, '$2: $1')
    .replace(/<[^>]+>/g, '')
    .replace(/&#(\d+);/g, (_m, n: string) => String.fromCharCode(Number(n)))
    .replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&quot;/g, '"').replace(/&amp;/g, '&')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
  return { from: { name: meta.senderName, address: meta.senderAddress }, to, subject: fill(template.subject, false), text: `${text}\n`, html };
}
