import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import PocketBase021, { ClientResponseError as ClientResponseError021 } from 'pocketbase';
import PocketBase028, { ClientResponseError as ClientResponseError028 } from 'pocketbase-0.28';
import { onPostgres } from '../helpers/postgres.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, startServer, type TestServer } from '../helpers/server.ts';
import { type Inbox, startInbox } from '../helpers/smtp.ts';
import { closeSdkClients, sdkClient } from '../helpers/sse.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * Both PocketBase JavaScript SDKs, unmodified, against one real server: 0.21 (PocketBase v0.22's API)
 * and 0.28 (v0.23 and later). The same application steps run with each, every one in the shapes
 * that SDK sends and reads; then what only 0.28 has (superusers, OTP, MFA, impersonation, batch,
 * truncate, scaffolds).
 */

const PNG = Buffer.from('89504e470d0a1a0a0000000d4948445200000001000000010806000000', 'hex');

type AnyClient = PocketBase021 | PocketBase028;

interface Sdk {
  version: '0.21' | '0.28';
  client(url: string): any;
  /** Signs the client in as the server's administrator, the way an application for that SDK does. */
  signInAdmin(pb: any): Promise<void>;
  isAdmin(pb: any): boolean;
  fileUrl(pb: any, record: Record<string, unknown>, file: string, query?: Record<string, unknown>): string;
  /** The administrators' CRUD service. */
  admins(pb: any): any;
  backupUrl(pb: any, token: string, key: string): string;
  /** A collection body in the SDK's own shape. */
  collectionBody(name: string): Record<string, unknown>;
  errorClass: typeof ClientResponseError021 | typeof ClientResponseError028;
}

const clients028: PocketBase028[] = [];

const SDKS: Sdk[] = [
  {
    version: '0.21',
    client: (url) => sdkClient(url),
    signInAdmin: async (pb: PocketBase021) => void (await pb.admins.authWithPassword(ADMIN_EMAIL, ADMIN_PASSWORD)),
    isAdmin: (pb: PocketBase021) => pb.authStore.isAdmin,
    fileUrl: (pb: PocketBase021, record, file, query) => pb.files.getUrl(record, file, query),
    admins: (pb: PocketBase021) => pb.admins,
    backupUrl: (pb: PocketBase021, token, key) => pb.backups.getDownloadUrl(token, key),
    collectionBody: (name) => ({
      name,
      type: 'base',
      schema: [
        { name: 'title', type: 'text', required: true, options: { max: 50 } },
        { name: 'tags', type: 'json', options: {} },
        { name: 'photo', type: 'file', options: { maxSelect: 1, maxSize: 100000, mimeTypes: ['image/png'] } },
        { name: 'contract', type: 'file', options: { maxSelect: 1, maxSize: 100000, protected: true } },
      ],
      listRule: '',
      viewRule: '',
      createRule: '',
      updateRule: '',
      deleteRule: '',
    }),
    errorClass: ClientResponseError021,
  },
  {
    version: '0.28',
    client: (url) => {
      const pb = new PocketBase028(url);
      pb.autoCancellation(false);
      clients028.push(pb);
      return pb;
    },
    signInAdmin: async (pb: PocketBase028) => void (await pb.collection('_superusers').authWithPassword(ADMIN_EMAIL, ADMIN_PASSWORD)),
    isAdmin: (pb: PocketBase028) => pb.authStore.isSuperuser,
    fileUrl: (pb: PocketBase028, record, file, query) => pb.files.getURL(record, file, query),
    admins: (pb: PocketBase028) => pb.collection('_superusers'),
    backupUrl: (pb: PocketBase028, token, key) => pb.backups.getDownloadURL(token, key),
    collectionBody: (name) => ({
      name,
      type: 'base',
      fields: [
        { name: 'title', type: 'text', required: true, max: 50, presentable: true },
        { name: 'tags', type: 'json' },
        { name: 'photo', type: 'file', maxSelect: 1, maxSize: 100000, mimeTypes: ['image/png'] },
        { name: 'contract', type: 'file', maxSelect: 1, maxSize: 100000, protected: true },
      ],
      listRule: '',
      viewRule: '',
      createRule: '',
      updateRule: '',
      deleteRule: '',
    }),
    errorClass: ClientResponseError028,
  },
];

async function rejectsWith(promise: Promise<unknown>, status: number, errorClass: Sdk['errorClass']): Promise<any> {
  try {
    await promise;
  } catch (err) {
    assert.ok(err instanceof errorClass, String(err));
    assert.equal((err as { status: number }).status, status, JSON.stringify((err as { response: unknown }).response));
    return err;
  }
  assert.fail(`expected a ${status}`);
}

describe('the PocketBase JS SDKs 0.21 and 0.28, unmodified', () => {
  let server: TestServer;
  let inbox: Inbox;

  before(async () => {
    inbox = await startInbox();
    server = await startServer({ env: { CAIRN_SMTP_URL: inbox.url } });
  });
  after(async () => {
    await closeSdkClients();
    for (const pb of clients028) await pb.realtime.unsubscribe().catch(() => undefined);
    await server.close();
    await inbox.close();
  });

  for (const sdk of SDKS) {
    const coll = `albums_${sdk.version.replace('.', '')}`;

    test(`${sdk.version}: an administrator signs in, creates a collection in the SDK's shape, lists and changes it`, async () => {
      const pb = sdk.client(server.url);
      await sdk.signInAdmin(pb);
      assert.equal(sdk.isAdmin(pb), true);
      const created = await pb.collections.create(sdk.collectionBody(coll));
      assert.equal(created.name, coll);
      assert.equal(created.fields.find((f: any) => f.name === 'title').max, 50);
      assert.equal(created.fields[0].name, 'id', "≥ 0.23's fields list the system fields");
      assert.equal(created.schema[0].options.max, 50);
      const all = await pb.collections.getFullList();
      assert.ok(all.some((c: any) => c.name === coll));
      assert.ok(all.some((c: any) => c.name === '_superusers' && c.system));
      const one = await pb.collections.getOne(coll);
      const fields = sdk.version === '0.21' ? [...one.schema, { name: 'views', type: 'number', options: {} }] : [...one.fields, { name: 'views', type: 'number', min: 0 }];
      const updated = await pb.collections.update(coll, sdk.version === '0.21' ? { schema: fields } : { fields });
      assert.equal(updated.schema.at(-1).name, 'views');
      await pb.collections.create({ name: `${coll}_gone`, type: 'base' });
      assert.equal(await pb.collections.delete(`${coll}_gone`), true);
      await rejectsWith(pb.collections.getOne(`${coll}_gone`), 404, sdk.errorClass);
    });

    test(`${sdk.version}: users register, sign in, refresh and work on records`, async () => {
      const pb = sdk.client(server.url);
      const email = `sdk-${sdk.version}@example.com`;
      await pb.collection('users').create({ email, password: 'sdk-password-1', passwordConfirm: 'sdk-password-1', name: 'SDK' });
      const auth = await pb.collection('users').authWithPassword(email, 'sdk-password-1');
      assert.equal(auth.record.email, email);
      assert.equal(sdk.isAdmin(pb), false);
      const first = pb.authStore.token;
      const refreshed = await pb.collection('users').authRefresh();
      assert.equal(refreshed.record.id, auth.record.id);
      assert.notEqual(pb.authStore.token, first);
      await rejectsWith(pb.collection('users').authWithPassword(email, 'wrong-password'), 401, sdk.errorClass);

      const a = await pb.collection(coll).create({ title: 'first', tags: ['x'] });
      await pb.collection(coll).create({ title: 'second', tags: [] });
      const page = await pb.collection(coll).getList(1, 10, { filter: 'title ~ "sec"', sort: '-created' });
      assert.deepEqual(page.items.map((r: any) => r.title), ['second']);
      assert.equal((await pb.collection(coll).getFirstListItem('title = "first"')).id, a.id);
      assert.equal((await pb.collection(coll).getFullList({ sort: 'title' })).length, 2);
      const updated = await pb.collection(coll).update(a.id, { title: 'first!' });
      assert.equal(updated.title, 'first!');
      const excerpt = await pb.collection(coll).getOne(a.id, { fields: 'id,title:excerpt(3,true)' });
      assert.deepEqual(excerpt, { id: a.id, title: 'fir...' });
      await rejectsWith(pb.collection(coll).create({ title: 'x'.repeat(51) }), 400, sdk.errorClass);
      assert.equal(await pb.collection(coll).delete(a.id), true);
      const methods = await pb.collection('users').listAuthMethods();
      if (sdk.version === '0.21') assert.equal(methods.emailPassword, true);
      else assert.deepEqual(Object.keys(methods).sort(), ['mfa', 'oauth2', 'otp', 'password']);
    });

    test(`${sdk.version}: files upload, download, and protected files with a file token`, async () => {
      const pb = sdk.client(server.url);
      const data = new FormData();
      data.append('title', 'with files');
      data.append('photo', new File([PNG], 'beach.png', { type: 'image/png' }));
      data.append('contract', new File(['signed'], 'contract.txt', { type: 'text/plain' }));
      const record = await pb.collection(coll).create(data);
      const res = await fetch(sdk.fileUrl(pb, record, record.photo));
      assert.equal(res.status, 200);
      assert.deepEqual(Buffer.from(await res.arrayBuffer()), PNG);
      await sdk.signInAdmin(pb);
      const token = await pb.files.getToken();
      const got = await fetch(sdk.fileUrl(pb, record, record.contract, { token }));
      assert.equal(got.status, 200);
      assert.equal(await got.text(), 'signed');
    });

    test(`${sdk.version}: realtime subscriptions`, async () => {
      const pb = sdk.client(server.url);
      const events: any[] = [];
      const unsubscribe = await pb.collection(coll).subscribe('*', (e: any) => events.push(e));
      const created = await server.admin('POST', `/api/collections/${coll}/records`, { body: { title: 'live' } });
      const event = await waitFor(() => events.find((e) => e.action === 'create' && e.record.id === created.body.id), { what: `the ${sdk.version} create event` });
      assert.equal(event.record.title, 'live');
      await unsubscribe();
    });

    test(`${sdk.version}: request logs, settings and backups`, async () => {
      const pb = sdk.client(server.url);
      await sdk.signInAdmin(pb);
      const logs = await waitFor(async () => {
        const list = await pb.logs.getList(1, 5, { filter: 'status >= 200' });
        return list.items.length > 0 ? list : undefined;
      });
      assert.equal((await pb.logs.getOne(logs.items[0].id)).id, logs.items[0].id);
      assert.ok(Array.isArray(await pb.logs.getStats()));

      const settings = await pb.settings.getAll();
      assert.equal(typeof settings.meta.appName, 'string');
      const changed = await pb.settings.update({ meta: { appName: `App ${sdk.version}` } });
      assert.equal(changed.meta.appName, `App ${sdk.version}`);

      const name = `sdk_${sdk.version.replace('.', '')}.zip`;
      if (onPostgres) {
        await rejectsWith(pb.backups.create(name), 400, sdk.errorClass);
        return;
      }
      assert.equal(await pb.backups.create(name), true);
      assert.ok((await pb.backups.getFullList()).some((b: any) => b.key === name));
      const download = await fetch(sdk.backupUrl(pb, await pb.files.getToken(), name));
      assert.equal(download.status, 200);
      assert.equal(await pb.backups.delete(name), true);
    });

    test(`${sdk.version}: administrators are managed through the SDK's own service`, async () => {
      const pb = sdk.client(server.url);
      await sdk.signInAdmin(pb);
      const admins = sdk.admins(pb);
      const email = `second-${sdk.version}@example.com`;
      const created = await admins.create({ email, password: 'second-admin-1', passwordConfirm: 'second-admin-1' });
      assert.equal(created.email, email);
      const list = await admins.getFullList();
      assert.ok(list.some((a: any) => a.id === created.id));
      const updated = await admins.update(created.id, { email: `renamed-${email}` });
      assert.equal(updated.email, `renamed-${email}`);
      assert.equal(await admins.delete(created.id), true);
      const user = sdk.client(server.url);
      await user.collection('users').authWithPassword(`sdk-${sdk.version}@example.com`, 'sdk-password-1');
      await rejectsWith(sdk.admins(user).getList(), 403, sdk.errorClass);
    });
  }

  test('0.28: the superuser session: isSuperuser, refresh, auth methods', async () => {
    const pb = SDKS[1].client(server.url) as PocketBase028;
    const auth = await pb.collection('_superusers').authWithPassword(ADMIN_EMAIL, ADMIN_PASSWORD);
    assert.equal(auth.record.collectionName, '_superusers');
    assert.equal(pb.authStore.isSuperuser, true);
    const first = pb.authStore.token;
    await pb.collection('_superusers').authRefresh();
    assert.notEqual(pb.authStore.token, first);
    assert.equal(pb.authStore.isSuperuser, true);
    const methods = await pb.collection('_superusers').listAuthMethods();
    assert.deepEqual(methods.password, { enabled: true, identityFields: ['email'] });
    assert.equal(await pb.collection('_superusers').requestPasswordReset(ADMIN_EMAIL), true);
  });

  test('0.28: batch, truncate and scaffolds', async () => {
    const pb = SDKS[1].client(server.url) as PocketBase028;
    await SDKS[1].signInAdmin(pb);
    await pb.collections.create({ name: 'batched', type: 'base', fields: [{ name: 'title', type: 'text' }] });
    const batch = pb.createBatch();
    batch.collection('batched').create({ title: 'a' });
    batch.collection('batched').create({ title: 'b' });
    const results = await batch.send();
    assert.deepEqual(results.map((r) => r.status), [200, 200]);
    assert.equal((await pb.collection('batched').getList(1, 10)).totalItems, 2);
    assert.equal(await pb.collections.truncate('batched'), true);
    assert.equal((await pb.collection('batched').getList(1, 10)).totalItems, 0);
    await rejectsWith(pb.collections.truncate('users'), 400, ClientResponseError028);
    const scaffolds = await pb.collections.getScaffolds();
    assert.deepEqual(Object.keys(scaffolds).sort(), ['auth', 'base', 'view']);
  });

  test('0.28: OTP through a real SMTP server, then MFA, then impersonation', async () => {
    const admin = SDKS[1].client(server.url) as PocketBase028;
    await SDKS[1].signInAdmin(admin);
    await admin.collections.update('users', { otp: { enabled: true } });
    const pb = SDKS[1].client(server.url) as PocketBase028;
    const email = 'sdk-0.28@example.com';
    const { otpId } = await pb.collection('users').requestOTP(email);
    const code = /Code: (\d+)/.exec((await inbox.next(email, /sign-in code/)).text)![1];
    const auth = await pb.collection('users').authWithOTP(otpId, code);
    assert.equal(auth.record.email, email);
    assert.equal(pb.authStore.isValid, true);
    await rejectsWith(pb.collection('users').authWithOTP(otpId, code), 400, ClientResponseError028);
    const { otpId: unknownId } = await pb.collection('users').requestOTP('nobody-0.28@example.com');
    assert.match(unknownId, /^[a-z0-9]{15}$/);

    await admin.collections.update('users', { mfa: { enabled: true } });
    await admin.collection('users').update(auth.record.id, { password: 'mfa-password-1', passwordConfirm: 'mfa-password-1' });
    // The password change revoked the OTP session's token, which Cairn would refuse (API contract §5).
    pb.authStore.clear();
    const err = await rejectsWith(pb.collection('users').authWithPassword(email, 'mfa-password-1'), 401, ClientResponseError028);
    const mfaId = err.response.mfaId;
    assert.match(mfaId, /^[a-z0-9]{15}$/);
    const again = await pb.collection('users').requestOTP(email);
    const code2 = /Code: (\d+)/.exec((await inbox.next(email, /sign-in code/, 1)).text)![1];
    const done = await pb.collection('users').authWithOTP(again.otpId, code2, { mfaId });
    assert.equal(done.record.id, auth.record.id);
    await admin.collections.update('users', { mfa: { enabled: false }, otp: { enabled: false } });

    const impersonated = await admin.collection('users').impersonate(auth.record.id, 300);
    assert.equal(impersonated.authStore.record?.id, auth.record.id);
    assert.equal(impersonated.authStore.isValid, true);
    assert.equal(impersonated.authStore.isSuperuser, false);
    assert.equal((await impersonated.collection('users').getOne(auth.record.id)).email, email);
    const user = SDKS[1].client(server.url) as PocketBase028;
    await user.collection('users').authWithPassword(email, 'mfa-password-1');
    await rejectsWith(user.collection('users').impersonate(auth.record.id, 60), 403, ClientResponseError028);
  });
});
