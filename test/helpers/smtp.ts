import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { SMTPServer } from 'smtp-server';
import { waitFor } from './wait.ts';

export interface ReceivedMail {
  from: string;
  to: string[];
  raw: string;
  subject: string;
  /** The raw message with quoted-printable soft line breaks and escapes undone. */
  text: string;
}

/** Undoes quoted-printable encoding well enough to read links and tokens out of a message. */
export function decodeQuotedPrintable(raw: string): string {
  return raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

/** Reads the single-use token Cairn prints in its mails. */
export function tokenFrom(mail: { text: string }): string {
  const m = /Token: ([A-Za-z0-9_-]{20,})/.exec(mail.text);
  if (!m) throw new Error(`no token in mail:\n${mail.text}`);
  return m[1];
}

/** A real SMTP server on 127.0.0.1 that keeps every message it receives. */
export interface Inbox {
  url: string;
  messages: ReceivedMail[];
  /** Waits for a message to `to` (and matching `subject`), beyond the first `skip` such messages. */
  next(to: string, subject?: RegExp, skip?: number): Promise<ReceivedMail>;
  close(): Promise<void>;
}

export async function startInbox(): Promise<Inbox> {
  const messages: ReceivedMail[] = [];
  const server = new SMTPServer({
    authOptional: true,
    disabledCommands: ['STARTTLS'],
    logger: false,
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks).toString('utf8');
        const text = decodeQuotedPrintable(raw);
        messages.push({
          from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
          to: session.envelope.rcptTo.map((r) => r.address.toLowerCase()),
          raw,
          subject: /^Subject: (.*)$/m.exec(raw)?.[1] ?? '',
          text,
        });
        callback();
      });
    },
  });
  server.listen(0, '127.0.0.1');
  await once(server.server, 'listening');
  const port = (server.server.address() as AddressInfo).port;
  return {
    url: `smtp://127.0.0.1:${port}`,
    messages,
    next(to, subject, skip = 0) {
      return waitFor(
        () => messages.filter((m) => m.to.includes(to.toLowerCase()) && (!subject || subject.test(m.subject)))[skip],
        { what: `mail to ${to}` },
      );
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
