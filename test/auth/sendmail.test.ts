import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { addressesOf, findSendmail, sendmailArgs, sendmailMessage } from '../../src/auth/mail/sendmail.ts';
import { dropDatabaseFor, onPostgres } from '../helpers/postgres.ts';
import { spawnServer, type SpawnedServer } from '../helpers/process.ts';
import { request } from '../helpers/server.ts';
import { startInbox, type Inbox } from '../helpers/smtp.ts';
import { waitFor } from '../helpers/wait.ts';

const ADMIN = { CAIRN_ADMIN_EMAIL: 'root@example.com', CAIRN_ADMIN_PASSWORD: 'root-password-1' };

/** A fake `sendmail` in its own bin folder: each message it is given lands in `out` with its arguments. */
function fakeSendmail(root: string): { bin: string; out: string } {
  const bin = path.join(root, 'bin');
  const out = path.join(root, 'sent');
  mkdirSync(bin, { recursive: true });
  mkdirSync(out, { recursive: true });
  const script = `#!/bin/sh\nprintf '%s\\n' "$@" > "${out}/$$.args"\ncat > "${out}/$$.tmp"\nmv "${out}/$$.tmp" "${out}/$$.eml"\n`;
  writeFileSync(path.join(bin, 'sendmail'), script);
  chmodSync(path.join(bin, 'sendmail'), 0o755);
  return { bin, out };
}

function sentMails(out: string): { args: string[]; message: string }[] {
  return readdirSync(out)
    .filter((f) => f.endsWith('.eml'))
    .map((f) => ({ args: readFileSync(path.join(out, f.replace(/\.eml$/, '.args')), 'utf8').trim().split('\n'), message: readFileSync(path.join(out, f), 'utf8') }));
}

async function requestReset(url: string): Promise<void> {
  const res = await request(url, 'POST', '/api/admins/request-password-reset', { body: { email: ADMIN.CAIRN_ADMIN_EMAIL } });
  assert.equal(res.status, 204, res.text);
}

describe('mail without SMTP goes to the system sendmail, as on PocketBase', () => {
  let root: string;
  let fake: { bin: string; out: string };
  let server: SpawnedServer;
  let inbox: Inbox;
  const dir = () => path.join(root, 'data');
  before(async () => {
    root = mkdtempSync(path.join(tmpdir(), 'cairn-sendmail-'));
    fake = fakeSendmail(root);
    inbox = await startInbox();
    server = await spawnServer(dir(), { ...ADMIN, PATH: `${fake.bin}${path.delimiter}${process.env.PATH}` });
  });
  after(async () => {
    await server?.kill();
    await inbox?.close();
    if (onPostgres) await dropDatabaseFor(path.resolve(dir()));
    rmSync(root, { recursive: true, force: true });
  });

  test('findSendmail takes the PATH, and nothing when there is none', () => {
    assert.equal(findSendmail(`/nonexistent${path.delimiter}${fake.bin}`), path.join(fake.bin, 'sendmail'));
    const empty = path.join(root, 'empty');
    mkdirSync(empty, { recursive: true });
    // The machine's own sendmail may exist at its usual places; the PATH is consulted first.
    const found = findSendmail(empty);
    assert.ok(found === undefined || found.startsWith('/usr/'));
  });

  test('a password-reset mail is handed to sendmail with its recipient; no .eml file is written', async () => {
    await requestReset(server.url);
    const mails = await waitFor(() => sentMails(fake.out).length > 0 && sentMails(fake.out), { what: 'a message given to sendmail' });
    assert.equal(mails.length, 1);
    // As PocketBase through v0.39.5 ran it: the recipients are the first (and only) argument, so a
    // stand-in script that files each message under "$1" (as clients' test suites use) finds it.
    assert.deepEqual(mails[0].args, [ADMIN.CAIRN_ADMIN_EMAIL]);
    // PocketBase's own message: Go's header lines, then the HTML as it is (not quoted-printable),
    // so the link and its token stay whole on their line.
    const [head, body] = mails[0].message.split('\r\n\r\n');
    assert.deepEqual(head.split('\r\n').map((l) => l.split(':')[0]), ['Content-Type', 'From', 'Subject', 'To']);
    assert.match(head, /^To: root@example\.com$/m);
    assert.match(head, /^Content-Type: text\/html; charset=UTF-8$/m);
    assert.match(head, /^Subject: .*[Rr]eset/m);
    assert.match(body, /\/confirm-password-reset\/[\w.-]{20,}"/);
    assert.equal(readdirSync(dir()).includes('mail'), false);
  });

  test("the message: Cc listed, Bcc left out, non-ASCII subject and sender name in RFC 2047's Q form", () => {
    const message = sendmailMessage({
      from: { name: 'Café Ops', address: 'ops@example.com' },
      to: '"Ann" <ann@example.com>, bob@example.com',
      cc: 'carol@example.com',
      bcc: 'dave@example.com',
      subject: 'Grüße',
      text: 'plain',
      html: '<p>hi</p>',
    }).toString('utf8');
    assert.equal(
      message,
      'Cc: carol@example.com\r\nContent-Type: text/html; charset=UTF-8\r\nFrom: =?utf-8?q?Caf=C3=A9_Ops?= <ops@example.com>\r\n' +
        'Subject: =?utf-8?q?Gr=C3=BC=C3=9Fe?=\r\nTo: ann@example.com,bob@example.com\r\n\r\n<p>hi</p>',
    );
    assert.deepEqual(addressesOf('"Doe, Jane" <jane@example.com>, x@example.com'), ['jane@example.com', 'x@example.com']);
  });

  test('several recipients are one comma-joined argument; a lone-dot line asks for -i first', () => {
    assert.deepEqual(sendmailArgs(['a@example.com', 'b@example.com'], 'To: a@example.com\n\nhello\n'), ['a@example.com,b@example.com']);
    assert.deepEqual(sendmailArgs(['a@example.com'], 'Subject: x\n\nfirst\n.\nlast\n'), ['-i', 'a@example.com']);
    assert.deepEqual(sendmailArgs(['a@example.com'], 'Subject: x\r\n\r\n.\r\n'), ['-i', 'a@example.com']);
    assert.deepEqual(sendmailArgs(['a@example.com'], 'Subject: x\n\n..\n. \n'), ['a@example.com']);
  });

  test('SMTP saved in the settings then wins over sendmail, on the running server', async () => {
    const login = await request(server.url, 'POST', '/api/admins/auth-with-password', { body: { identity: ADMIN.CAIRN_ADMIN_EMAIL, password: ADMIN.CAIRN_ADMIN_PASSWORD } });
    const port = Number(new URL(inbox.url).port);
    const saved = await request(server.url, 'PATCH', '/api/settings', { token: login.body.token, body: { smtp: { enabled: true, host: '127.0.0.1', port } } });
    assert.equal(saved.status, 200, saved.text);
    const before = sentMails(fake.out).length;
    await requestReset(server.url);
    const mail = await inbox.next(ADMIN.CAIRN_ADMIN_EMAIL);
    assert.match(mail.subject, /[Rr]eset/);
    assert.equal(sentMails(fake.out).length, before);
  });
});

describe('CAIRN_MAIL_DIR keeps mail in files even with sendmail on the PATH', () => {
  let root: string;
  let fake: { bin: string; out: string };
  let server: SpawnedServer;
  const dir = () => path.join(root, 'data');
  before(async () => {
    root = mkdtempSync(path.join(tmpdir(), 'cairn-maildir-'));
    fake = fakeSendmail(root);
    server = await spawnServer(dir(), { ...ADMIN, PATH: `${fake.bin}${path.delimiter}${process.env.PATH}`, CAIRN_MAIL_DIR: path.join(root, 'outbox') });
  });
  after(async () => {
    await server?.kill();
    if (onPostgres) await dropDatabaseFor(path.resolve(dir()));
    rmSync(root, { recursive: true, force: true });
  });

  test('the mail is an .eml file in CAIRN_MAIL_DIR and sendmail is not run', async () => {
    await requestReset(server.url);
    const files = await waitFor(() => {
      try {
        const names = readdirSync(path.join(root, 'outbox')).filter((f) => f.endsWith('.eml'));
        return names.length > 0 && names;
      } catch {
        return false;
      }
    }, { what: 'an .eml file in CAIRN_MAIL_DIR' });
    assert.match(readFileSync(path.join(root, 'outbox', files[0]), 'utf8'), /^To: root@example\.com$/m);
    assert.equal(sentMails(fake.out).length, 0);
  });
});
