import { spawn } from 'node:child_process';
import { accessSync, constants, statSync } from 'node:fs';
import path from 'node:path';
import type { Mail } from './mail.ts';

/** Where PocketBase also looks when `sendmail` is not on the PATH (a daemon's PATH often lacks sbin). */
const STANDARD = ['/usr/sbin/sendmail', '/usr/bin/sendmail'];

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/**
 * The system's `sendmail`, which PocketBase hands mail to when no SMTP server is set: the first
 * executable `sendmail` on `envPath`, else one at its usual places; undefined when there is none.
 */
export function findSendmail(envPath: string | undefined): string | undefined {
  const dirs = (envPath ?? '').split(path.delimiter).filter((d) => d !== '' && path.isAbsolute(d));
  for (const candidate of [...dirs.map((d) => path.join(d, 'sendmail')), ...STANDARD]) {
    if (executable(candidate)) return candidate;
  }
  return undefined;
}

/** The bare addresses of a header value (`a@x.io, "B" <b@y.io>`). */
export function addressesOf(list: string | undefined): string[] {
  if (!list) return [];
  const parts = list.match(/(?:"(?:[^"\\]|\\.)*"|[^,])+/g) ?? [];
  return parts.map((p) => (/<([^>]*)>\s*$/.exec(p)?.[1] ?? p).trim()).filter((a) => a !== '');
}

const PRINTABLE = /^[\x20-\x7e]*$/;

/** RFC 2047's Q form of a header text that is not plain ASCII, as Go's `mime.QEncoding` writes it. */
function qEncode(text: string): string {
  if (PRINTABLE.test(text)) return text;
  const words: string[] = [];
  let word = '';
  for (const ch of text) {
    let enc = '';
    for (const byte of Buffer.from(ch, 'utf8')) {
      const c = String.fromCharCode(byte);
      enc += byte === 0x20 ? '_' : byte > 0x20 && byte < 0x7f && c !== '=' && c !== '?' && c !== '_' ? c : `=${byte.toString(16).toUpperCase().padStart(2, '0')}`;
    }
    // An encoded word is at most 75 characters: `=?utf-8?q?` and `?=` take 12.
    if (word.length + enc.length > 63) (words.push(word), (word = ''));
    word += enc;
  }
  words.push(word);
  return words.map((w) => `=?utf-8?q?${w}?=`).join(' ');
}

/**
 * The message as PocketBase hands it to `sendmail` (tools/mailer/sendmail.go): Go's header block
 * (keys sorted: `Cc`, `Content-Type: text/html; charset=UTF-8`, `From`, `Subject`, `To`), an empty
 * line, then the HTML (the text when there is none) as it is, not re-encoded, so a link in it stays
 * on its line. Cairn's own extra headers (`Reply-To`, a hook's) are kept among them.
 */
export function sendmailMessage(mail: Mail): Buffer {
  // As Go's `mail.Address`: a plain name quoted, any other one encoded (an encoded word is never quoted).
  const name = mail.from.name;
  const from = name === '' ? `<${mail.from.address}>` : PRINTABLE.test(name) ? `"${name.replace(/["\\]/g, '\\$&')}" <${mail.from.address}>` : `${qEncode(name)} <${mail.from.address}>`;
  const headers: Record<string, string> = {};
  for (const [key, value] of Object.entries(mail.headers ?? {})) headers[key] = value;
  if (mail.replyTo) headers['Reply-To'] = mail.replyTo;
  if (addressesOf(mail.cc).length > 0) headers.Cc = addressesOf(mail.cc).join(',');
  Object.assign(headers, { 'Content-Type': 'text/html; charset=UTF-8', From: from, Subject: qEncode(mail.subject), To: addressesOf(mail.to).join(',') });
  const lines = Object.keys(headers)
    .sort()
    .map((key) => `${key}: ${headers[key].replace(/[\r\n]+/g, ' ')}\r\n`);
  return Buffer.from(`${lines.join('')}\r\n${mail.html !== '' ? mail.html : mail.text}`, 'utf8');
}

/**
 * The arguments PocketBase gave `sendmail` from v0.22 through v0.39.5: the recipients, comma-joined,
 * as one argument (`sendmail a@x.io,b@y.io`, the message with its headers on standard input). Test
 * suites of PocketBase's clients stand in a script for `sendmail` that files each message under
 * `$1`; a real `sendmail` delivers to the same recipients as with v0.39.6's `-i -t`. Only a message
 * with a line of a single `.` (which ends the input without `-i`) gets `-i` first.
 */
export function sendmailArgs(recipients: readonly string[], message: string): string[] {
  const joined = recipients.join(',');
  return /^\.\r?$/m.test(message) ? ['-i', joined] : [joined];
}

/** Hands one message to `sendmail`; rejects when it cannot run or exits other than 0. */
export function handToSendmail(file: string, recipients: readonly string[], message: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(file, sendmailArgs(recipients, message.toString('latin1')), { stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr = (stderr + chunk).slice(-2000)));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`sendmail exited with ${code}${stderr ? `: ${stderr.trim()}` : ''}`))));
    // A sendmail that exits before reading everything ends the write with EPIPE: its exit code tells.
    child.stdin.on('error', () => undefined);
    child.stdin.end(message);
  });
}
