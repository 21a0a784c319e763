import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { createCollection, createUser, startServer, type TestServer } from '../helpers/server.ts';
import { type Inbox, startInbox } from '../helpers/smtp.ts';
import { SseStream, subscribeRaw } from '../helpers/sse.ts';
import { pbDir } from './pb-dir.ts';

// A notes app (v0.23+): what leaves through the API is shaped by onRecordEnrich, the list and
// view requests may be changed or answered by their handlers.
const NOTES = `
onRecordEnrich((e) => {
  e.record.hide("draft");
  if (e.requestInfo().query.reveal === "1") e.record.unhide("secret");
  e.record.withCustomData(true);
  e.record.set("shout", e.record.getString("title").toUpperCase());
  e.record.set("context", e.requestInfo().context);
  e.next();
}, "notes");

onRecordsListRequest((e) => {
  e.result.items.forEach((r) => r.withCustomData(true).set("listed", true));
  e.next();
}, "notes");

onRecordViewRequest((e) => {
  if (e.record.getString("title") === "teapot") return e.json(418, { short: true, id: e.record.id });
  e.record.withCustomData(true).set("viewed", true);
  e.next();
}, "notes");
`;

// Sign-ins pass onRecordAuthRequest before their token leaves.
const SIGNIN = `
onRecordAuthRequest((e) => {
  if (e.record.email().startsWith("banned")) throw new ForbiddenError("Banned (" + e.authMethod + ").");
  e.next();
}, "users");

onRecordAuthWithPasswordRequest((e) => {
  if (e.identity === "fine@example.com" && e.password === "wrong-but-right") throw new BadRequestError("Never reached.");
  if (e.record.email() === "shy@example.com") throw new BadRequestError("Shy " + e.identity);
  e.next();
});
`;

// v0.22 handlers of the same read events change the answer and go on by themselves.
const LEGACY = `
onRecordsListRequest((e) => {
  e.result.totalItems = e.result.totalItems + 1000;
}, "tallies");
`;

// The auth flows' mails and every mail, changed before they leave.
const MAILS = `
onMailerRecordPasswordResetSend((e) => {
  e.message.subject = "Reset for " + e.record.getString("email") + " (" + e.collection.name + ")";
  e.message.html = e.message.html + "<p>token-length:" + e.meta.token.length + "</p>";
  e.next();
}, "users");

onMailerRecordOTPSend((e) => {
  if (e.record.email().startsWith("quiet")) return; // not sent
  e.message.subject = "Code " + e.meta.password;
  e.next();
});

onMailerSend((e) => {
  e.message.subject = "[Cairn] " + e.message.subject;
  e.message.bcc = [{ address: "audit@example.com" }];
  e.next();
});

onMailerBeforeRecordVerificationSend((e) => {
  e.message.subject = "Legacy verify " + e.record.getString("email");
});

routerAdd("POST", "/api/remind/{id}", (e) => {
  const user = $app.findRecordById("users", e.request.pathValue("id"));
  $mails.sendRecordVerification($app, user);
  return e.noContent(204);
});

routerAdd("POST", "/api/code/{id}", (e) => {
  const user = $app.findRecordById("users", e.request.pathValue("id"));
  $mails.sendRecordOTP($app, user, "otp-id-1", "864213");
  $mails.sendRecordAuthAlert($app, user, "from the new laptop");
  return e.noContent(204);
});

routerAdd("POST", "/api/shout", (e) => {
  $app.newMailClient().send(new MailerMessage({
    from: { address: "team@example.com", name: "Team" },
    to: [{ address: e.requestInfo().body.to }],
    cc: [{ address: "cc@example.com" }],
    subject: "Hello",
    text: "hi",
  }));
  return e.noContent(204);
});
`;

describe('pb_hooks: records leaving, read requests and mails', () => {
  let server: TestServer;
  let inbox: Inbox;
  let pb: ReturnType<typeof pbDir>;

  before(async () => {
    inbox = await startInbox();
    pb = pbDir({ 'notes.pb.js': NOTES, 'legacy.pb.js': LEGACY, 'mails.pb.js': MAILS, 'signin.pb.js': SIGNIN });
    server = await startServer({ env: { CAIRN_PB_HOOKS_DIR: pb.dir, CAIRN_SMTP_URL: inbox.url } });
    await server.admin('PATCH', '/api/settings', { body: { meta: { appName: 'Acme', appUrl: 'https://app.example.com/', senderName: 'Acme', senderAddress: 'support@example.com' } } });
    await createCollection(server, {
      name: 'notes',
      listRule: '',
      viewRule: '',
      fields: [
        { name: 'title', type: 'text' },
        { name: 'draft', type: 'text' },
        { name: 'secret', type: 'text', hidden: true },
      ],
    });
    await createCollection(server, { name: 'tallies', listRule: '', fields: [{ name: 'n', type: 'number' }] });
  });
  after(async () => {
    await server?.close();
    await inbox?.close();
    pb?.remove();
  });

  test('onRecordEnrich hides, unhides and adds custom keys on lists, views and realtime-less reads', async () => {
    const made = await server.admin('POST', '/api/collections/notes/records', { body: { title: 'hello', draft: 'wip', secret: 's3' } });
    assert.equal(made.status, 200, made.text);
    const list = await server.request('GET', '/api/collections/notes/records');
    assert.equal(list.status, 200, list.text);
    const item = list.body.items.find((r: any) => r.id === made.body.id);
    assert.equal(item.shout, 'HELLO');
    assert.equal(item.context, 'default');
    assert.equal(item.listed, true);
    assert.equal('draft' in item, false);
    assert.equal('secret' in item, false);
    const view = await server.request('GET', `/api/collections/notes/records/${made.body.id}?reveal=1`);
    assert.equal(view.status, 200, view.text);
    assert.equal(view.body.secret, 's3');
    assert.equal(view.body.viewed, true);
    assert.equal(view.body.shout, 'HELLO');
    assert.equal('draft' in view.body, false);
  });

  test('e.requestInfo().context names where the record goes: a realtime message is "realtime"', async () => {
    const stream = await SseStream.open(server.url);
    try {
      assert.equal((await subscribeRaw(server.url, stream.clientId, ['notes/*'])).status, 204);
      const made = await server.admin('POST', '/api/collections/notes/records', { body: { title: 'live' } });
      assert.equal(made.status, 200, made.text);
      const message = await stream.next((e) => e.event === 'notes/*', 'the create');
      const record = JSON.parse(message.data).record;
      assert.equal(record.id, made.body.id);
      assert.equal(record.context, 'realtime');
    } finally {
      stream.close();
    }
  });

  test('onRecordViewRequest may answer itself; v0.22 list handlers change the answer and go on', async () => {
    const tea = await server.admin('POST', '/api/collections/notes/records', { body: { title: 'teapot' } });
    const view = await server.request('GET', `/api/collections/notes/records/${tea.body.id}`);
    assert.equal(view.status, 418, view.text);
    assert.deepEqual(view.body, { short: true, id: tea.body.id });
    await server.admin('POST', '/api/collections/tallies/records', { body: { n: 1 } });
    const list = await server.request('GET', '/api/collections/tallies/records');
    assert.equal(list.status, 200, list.text);
    assert.equal(list.body.totalItems, 1001);
    assert.equal(list.body.items.length, 1);
  });

  test('password reset mail: onMailerRecordPasswordResetSend, then onMailerSend, change it before it leaves', async () => {
    await createUser(server, 'dora@example.com');
    const res = await server.request('POST', '/api/collections/users/request-password-reset', { body: { email: 'dora@example.com' } });
    assert.equal(res.status, 204, res.text);
    const mail = await inbox.next('dora@example.com', /Reset for/);
    assert.equal(mail.subject, '[Cairn] Reset for dora@example.com (users)');
    assert.match(mail.text, /token-length:\d{2,}/);
    const audit = await inbox.next('audit@example.com', /Reset for/);
    assert.ok(audit, 'the bcc added by onMailerSend receives it');
  });

  test('OTP mail: e.meta.password, and a handler that does not call e.next() stops the mail', async () => {
    await createUser(server, 'ola@example.com');
    await createUser(server, 'quiet@example.com');
    await server.admin('PATCH', '/api/collections/users', { body: { otp: { enabled: true } } });
    const loud = await server.request('POST', '/api/collections/users/request-otp', { body: { email: 'ola@example.com' } });
    assert.equal(loud.status, 200, loud.text);
    const mail = await inbox.next('ola@example.com', /Code/);
    assert.match(mail.subject, /^\[Cairn\] Code \d+$/);
    const quiet = await server.request('POST', '/api/collections/users/request-otp', { body: { email: 'quiet@example.com' } });
    assert.equal(quiet.status, 200, quiet.text);
    // The next mail through the same server arrives after the refused one would have.
    await server.request('POST', '/api/shout', { body: { to: 'marker@example.com' } });
    await inbox.next('marker@example.com');
    assert.equal(inbox.messages.filter((m) => m.to.includes('quiet@example.com')).length, 0);
  });

  test('onRecordAuthRequest may refuse a sign-in', async () => {
    const body = { email: 'banned@example.com', password: 'user-password-1', passwordConfirm: 'user-password-1' };
    assert.equal((await server.request('POST', '/api/collections/users/records', { body })).status, 200);
    const res = await server.request('POST', '/api/collections/users/auth-with-password', { body: { identity: 'banned@example.com', password: 'user-password-1' } });
    assert.equal(res.status, 403, res.text);
    assert.equal(res.body.message, 'Banned (password).');
    await createUser(server, 'fine@example.com');
    const shy = { email: 'shy@example.com', password: 'user-password-1', passwordConfirm: 'user-password-1' };
    assert.equal((await server.request('POST', '/api/collections/users/records', { body: shy })).status, 200);
    const refused = await server.request('POST', '/api/collections/users/auth-with-password', { body: { identity: 'shy@example.com', password: 'user-password-1' } });
    assert.equal(refused.status, 400, refused.text);
    assert.equal(refused.body.message, 'Shy shy@example.com');
  });

  test('$mails.sendRecordVerification mails the record through its flow (and its mail events)', async () => {
    const wes = await createUser(server, 'wes@example.com');
    const res = await server.request('POST', `/api/remind/${wes.id}`, { body: {} });
    assert.equal(res.status, 204, res.text);
    const mail = await inbox.next('wes@example.com', /Legacy verify/);
    assert.equal(mail.subject, '[Cairn] Legacy verify wes@example.com');
  });

  test('$mails.sendRecordOTP and sendRecordAuthAlert mail the record its code and the alert', async () => {
    const olga = await createUser(server, 'olga@example.com');
    const res = await server.request('POST', `/api/code/${olga.id}`, { body: {} });
    assert.equal(res.status, 204, res.text);
    // The OTP mail's own hook (above) names the code in the subject.
    const code = await inbox.next('olga@example.com', /Code 864213/);
    assert.match(code.text, /864213/);
    const alert = await inbox.next('olga@example.com', /new location/);
    assert.match(alert.text, /from the new laptop/);
  });

  test('GET /api/hooks lists these handlers and no event left unfired', async () => {
    const res = await server.admin('GET', '/api/hooks');
    assert.equal(res.status, 200, res.text);
    assert.deepEqual(res.body.pbNotFired, []);
    const events = new Set(res.body.handlers.map((h: any) => h.event));
    for (const e of ['onRecordEnrich', 'onRecordsListRequest', 'onRecordViewRequest', 'onMailerSend', 'onMailerRecordPasswordResetSend', 'onRecordAuthRequest']) assert.ok(events.has(e), e);
  });

  test('v0.22 onMailerBefore*Send and MailerMessage with cc through $app.newMailClient()', async () => {
    await createUser(server, 'vera@example.com');
    const res = await server.request('POST', '/api/collections/users/request-verification', { body: { email: 'vera@example.com' } });
    assert.equal(res.status, 204, res.text);
    const mail = await inbox.next('vera@example.com', /Legacy verify/);
    assert.equal(mail.subject, '[Cairn] Legacy verify vera@example.com');
    const shout = await server.request('POST', '/api/shout', { body: { to: 'sam@example.com' } });
    assert.equal(shout.status, 204, shout.text);
    const got = await inbox.next('sam@example.com', /Hello/);
    assert.equal(got.from, 'team@example.com');
    assert.ok(got.to.includes('cc@example.com'), got.to.join(','));
  });
});
