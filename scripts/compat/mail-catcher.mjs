#!/usr/bin/env node
// A mail catcher for suites that read their mail from Inbucket's or Mailpit's REST API: SMTP on one
// port, and on another Inbucket's `GET /api/v1/mailbox/:name` (the list) and
// `GET /api/v1/mailbox/:name/:id` ({…, body: {text, html}}; the mailbox is the recipient's local
// part, as Inbucket names it) beside Mailpit's `GET /api/v1/messages` ({messages: [{ID, To, …}]},
// newest first) and `GET /api/v1/message/:id` ({ID, Subject, Text, HTML, …}). The paths differ, so
// one port answers both.
//
//   node scripts/compat/mail-catcher.mjs [--smtp 2500] [--http 9000] [-- command args...]
//   (Mailpit's ports, for suites written against it: --smtp 1025 --http 8025)
//
// Runs from the Cairn checkout (smtp-server is one of its dev dependencies).

import { spawn } from 'node:child_process';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';
import { SMTPServer } from 'smtp-server';

const sep = process.argv.indexOf('--');
const { values: opts } = parseArgs({
  args: process.argv.slice(2, sep < 0 ? undefined : sep),
  options: { smtp: { type: 'string', default: '2500' }, http: { type: 'string', default: '9000' } },
});
const command = sep < 0 ? [] : process.argv.slice(sep + 1);
const boxes = new Map();
const all = [];
let seq = 0;

function decodePart(headers, body) {
  if (/quoted-printable/i.test(headers)) {
    body = body.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/gi, (_, h) => String.fromCharCode(parseInt(h, 16)));
    return Buffer.from(body, 'latin1').toString('utf8');
  }
  if (/base64/i.test(headers)) return Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8');
  return body;
}

/** The text and HTML parts of a raw message (single part or one level of multipart). */
function parse(raw) {
  const split = raw.indexOf('\r\n\r\n');
  const head = raw.slice(0, split);
  const rest = raw.slice(split + 4);
  const subject = /^subject:\s*(.*)$/im.exec(head)?.[1] ?? '';
  const boundary = /boundary="?([^";\r\n]+)"?/i.exec(head)?.[1];
  const parts = boundary ? rest.split(`--${boundary}`).slice(1, -1) : [`${head}\r\n\r\n${rest}`];
  const out = { text: '', html: '' };
  for (const part of parts) {
    const i = part.indexOf('\r\n\r\n');
    const h = part.slice(0, i);
    const b = decodePart(h, part.slice(i + 4).replace(/\r\n$/, ''));
    if (/content-type:\s*text\/html/i.test(h)) out.html = b;
    else if (/content-type:\s*text\/plain/i.test(h) || !/content-type/i.test(h)) out.text = b;
  }
  // Inbucket derives the text from the HTML when the message has none
  if (!out.text && out.html) out.text = out.html.replace(/<[^>]*>/g, '').trim();
  return { subject, ...out };
}

const smtp = new SMTPServer({
  authOptional: true,
  disabledCommands: ['STARTTLS'],
  onData(stream, session, done) {
    const chunks = [];
    stream.on('data', (c) => chunks.push(c));
    stream.on('end', () => {
      const msg = parse(Buffer.concat(chunks).toString('latin1'));
      const to = session.envelope.rcptTo.map((r) => ({ Name: '', Address: r.address }));
      const from = { Name: '', Address: session.envelope.mailFrom?.address ?? '' };
      all.unshift({ ID: String(seq + 1), From: from, To: to, Subject: msg.subject, Created: new Date().toISOString(), Text: msg.text, HTML: msg.html });
      for (const rcpt of session.envelope.rcptTo) {
        const box = rcpt.address.split('@')[0].toLowerCase();
        if (!boxes.has(box)) boxes.set(box, []);
        boxes.get(box).push({ id: String(++seq), mailbox: box, subject: msg.subject, date: new Date().toISOString(), body: { text: msg.text, html: msg.html } });
      }
      done();
    });
  },
});
smtp.listen(Number(opts.smtp), '127.0.0.1');

function mailpit(url) {
  if (/^\/api\/v1\/messages\/?(\?|$)/.test(url)) {
    const messages = all.map(({ Text: _t, HTML: _h, ...summary }) => summary);
    return { total: all.length, messages_count: all.length, messages };
  }
  const one = /^\/api\/v1\/message\/([^/?]+)/.exec(url);
  return one ? all.find((x) => x.ID === one[1]) ?? null : undefined;
}

const http = createServer((req, res) => {
  const mp = mailpit(req.url);
  if (mp !== undefined) {
    res.writeHead(mp ? 200 : 404, { 'content-type': 'application/json' });
    return res.end(JSON.stringify(mp ?? {}));
  }
  const m = /^\/api\/v1\/mailbox\/([^/?]+)(?:\/([^/?]+))?/.exec(req.url);
  const box = m ? boxes.get(decodeURIComponent(m[1]).toLowerCase()) ?? [] : null;
  const body = !m ? null : m[2] ? box.find((x) => x.id === m[2]) : box.map(({ body: _, ...h }) => h);
  res.writeHead(body ? 200 : 404, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body ?? {}));
});
http.listen(Number(opts.http), '127.0.0.1', () => {
  if (!command.length) return;
  const child = spawn(command[0], command.slice(1), { stdio: 'inherit' });
  child.on('exit', (code) => {
    smtp.close();
    http.close();
    process.exit(code ?? 1);
  });
});
