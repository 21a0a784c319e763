import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { skipOn } from '../helpers/postgres.ts';
import { freePort } from '../helpers/process.ts';
import { ADMIN_EMAIL, startServer, type TestServer } from '../helpers/server.ts';
import { type Inbox, startInbox } from '../helpers/smtp.ts';

/**
 * PocketBase ≥ 0.39 mails every superuser when an automated backup fails (its "system alert"); Cairn
 * mails every administrator, and the job still fails as before.
 */
describe('a scheduled backup that fails', { skip: skipOn('postgres', 'backups of a PostgreSQL instance are pg_dump’s') }, () => {
  let server: TestServer;
  let inbox: Inbox;

  before(async () => {
    inbox = await startInbox();
    server = await startServer();
    const saved = await server.admin('PATCH', '/api/settings', {
      body: {
        meta: { appName: 'Ledger' },
        smtp: { enabled: true, host: '127.0.0.1', port: Number(new URL(inbox.url).port) },
        // A bucket nobody answers for; a schedule that does not come round during the test.
        backups: {
          cron: '0 0 1 1 *',
          cronMaxKeep: 1,
          s3: { enabled: true, bucket: 'gone', region: 'us-east-1', endpoint: `http://127.0.0.1:${await freePort()}`, accessKey: 'key', secret: 'secret', forcePathStyle: true },
        },
      },
    });
    assert.equal(saved.status, 200, saved.text);
  });
  after(async () => {
    await server?.close();
    await inbox?.close();
  });

  test('is mailed to every administrator, and the job still fails', async () => {
    await server.services.admins.create({ email: 'second-admin@example.com', password: 'second-admin-password' });
    const run = await server.admin('POST', '/api/crons/__pbAutoBackup__');
    assert.notEqual(run.status, 204, 'the run failed');
    for (const to of [ADMIN_EMAIL, 'second-admin@example.com']) {
      const mail = await inbox.next(to, /^\[Ledger system alert\] Autobackup failure$/);
      assert.match(mail.text, /Ledger system alert occurred:/);
      assert.match(mail.text, /Failed to create\/upload automated backup\. Raw error:/);
    }
  });
});
