import assert from 'node:assert/strict';
import Database from 'better-sqlite3';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { swapIn, recoverInterruptedRestore, PREVIOUS_DIR } from '../../src/backups/swap.ts';
import { zipEntries } from '../../src/lib/zip.ts';
import { createCollection, request, startServer, type TestServer } from '../helpers/server.ts';
import { onPostgres, skipOn } from '../helpers/postgres.ts';
import { waitFor } from '../helpers/wait.ts';

async function fileToken(server: TestServer, token = server.adminToken): Promise<string> {
  const res = await server.request('POST', '/api/files/token', { token });
  assert.equal(res.status, 200, res.text);
  return res.body.token;
}

async function download(server: TestServer, key: string): Promise<Buffer> {
  const res = await fetch(`${server.url}/api/backups/${key}?token=${await fileToken(server)}`);
  assert.equal(res.status, 200, await res.clone().text());
  assert.equal(res.headers.get('content-type'), 'application/zip');
  return Buffer.from(await res.arrayBuffer());
}

async function upload(server: TestServer, name: string, data: Buffer) {
  const form = new FormData();
  form.append('file', new Blob([new Uint8Array(data)]), name);
  return server.admin('POST', '/api/backups/upload', { raw: form });
}

/** Every database file of a data directory passes `PRAGMA integrity_check`. */
function integrity(dir: string): string[] {
  const files = ['system.db', 'logs.db', ...readdirSync(path.join(dir, 'databases')).filter((f) => f.endsWith('.db')).map((f) => `databases/${f}`)];
  return files.map((f) => {
    const db = new Database(path.join(dir, f), { readonly: true });
    try {
      return `${f}: ${db.pragma('integrity_check', { simple: true })}`;
    } finally {
      db.close();
    }
  });
}

async function count(server: TestServer, collection: string): Promise<number> {
  const res = await server.admin('GET', `/api/collections/${collection}/records?perPage=1`);
  assert.equal(res.status, 200, res.text);
  return res.body.totalItems;
}

describe('backups on PostgreSQL', { skip: skipOn('sqlite', 'the PostgreSQL answer') }, () => {
  test("every endpoint answers 400 naming PostgreSQL's own tools", async () => {
    const server = await startServer();
    try {
      const form = new FormData();
      form.append('file', new Blob(['x']), 'a.zip');
      for (const [method, p, raw] of [['GET', '/api/backups'], ['POST', '/api/backups'], ['POST', '/api/backups/upload', form], ['DELETE', '/api/backups/a.zip'], ['POST', '/api/backups/a.zip/restore']] as const) {
        const res = await server.admin(method, p, raw ? { raw } : {});
        assert.equal(res.status, 400, `${method} ${p}: ${res.text}`);
        assert.match(res.body.message, /pg_dump/);
        assert.match(res.body.message, /pg_restore/);
      }
    } finally {
      await server.close();
    }
  });
});

describe('backups', { skip: skipOn('postgres', 'SQLite files; on PostgreSQL the endpoints answer 400') }, () => {
  let source: TestServer;
  let target: TestServer;
  before(async () => {
    source = await startServer();
    target = await startServer();
  });
  after(async () => {
    await source?.close();
    await target?.close();
  });

  test('a backup taken during a stream of writes restores into a fresh instance with every acknowledged record', async () => {
    await createCollection(source, {
      name: 'items',
      listRule: '',
      viewRule: '',
      fields: [
        { name: 'n', type: 'number' },
        { name: 'doc', type: 'file', options: { maxSelect: 1 } },
      ],
    });
    await source.admin('POST', '/api/databases', { body: { name: 'second' } });
    await createCollection(source, { name: 'notes', fields: [{ name: 'title', type: 'text' }] }, 'second');
    await source.admin('POST', '/api/collections/notes/records', { body: { title: 'in the second database' }, db: 'second' });
    const form = new FormData();
    form.append('n', '-1');
    form.append('doc', new Blob(['file content kept by the backup']), 'kept.txt');
    const withFile = await source.admin('POST', '/api/collections/items/records', { raw: form });
    assert.equal(withFile.status, 200, withFile.text);
    const key = await source.admin('POST', '/api/keys', { body: { name: 'survives', roles: ['admin'] } });

    // Four writers in a loop; an id counts as acknowledged once its answer has arrived.
    const acknowledged: Array<{ id: string; at: number }> = [];
    let stop = false;
    let n = 0;
    const writer = async () => {
      while (!stop) {
        const res = await source.admin('POST', '/api/collections/items/records', { body: { n: n++ } });
        assert.equal(res.status, 200, res.text);
        acknowledged.push({ id: res.body.id, at: Date.now() });
      }
    };
    const writers = Array.from({ length: 4 }, writer);
    await waitFor(() => acknowledged.length >= 200, { what: 'writes before the backup' });
    const started = Date.now();
    const created = await source.admin('POST', '/api/backups', { body: { name: 'during_writes.zip' } });
    assert.equal(created.status, 204, created.text);
    const writtenDuring = acknowledged.filter((a) => a.at > started).length;
    stop = true;
    await Promise.all(writers);
    assert.ok(writtenDuring > 0, 'writes went on while the backup was taken');
    const before = acknowledged.filter((a) => a.at < started).map((a) => a.id);

    const listed = await source.admin('GET', '/api/backups');
    assert.equal(listed.status, 200);
    assert.deepEqual(listed.body.map((b: any) => b.key), ['during_writes.zip']);
    assert.ok(listed.body[0].size > 0);
    assert.match(listed.body[0].modified, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}Z$/);
    const zip = await download(source, 'during_writes.zip');

    // The fresh instance: upload, restore, and it serves the restored data at the same address.
    assert.equal((await upload(target, 'during_writes.zip', zip)).status, 204);
    const restored = await target.admin('POST', '/api/backups/during_writes.zip/restore');
    assert.equal(restored.status, 204, restored.text);
    // Its administrator is now the source's (same credentials in these tests), with the source's secret.
    const login = await target.request('POST', '/api/admins/auth-with-password', { body: { identity: 'admin@example.com', password: 'admin-password-1' } });
    assert.equal(login.status, 200, login.text);
    const admin = (method: string, p: string, db?: string) => request(target.url, method, p, { token: login.body.token, db });

    const ids = new Set<string>();
    for (let page = 1; ; page++) {
      const res = await admin('GET', `/api/collections/items/records?perPage=500&page=${page}&fields=id`);
      assert.equal(res.status, 200, res.text);
      for (const r of res.body.items) ids.add(r.id);
      if (page >= res.body.totalPages) break;
    }
    const missing = before.filter((id) => !ids.has(id));
    assert.deepEqual(missing, [], `${missing.length} of ${before.length} acknowledged records are missing`);
    assert.ok(ids.has(withFile.body.id));
    const file = await fetch(`${target.url}/api/files/items/${withFile.body.id}/${withFile.body.doc}`);
    assert.equal(await file.text(), 'file content kept by the backup');
    assert.equal((await admin('GET', '/api/collections/notes/records', 'second')).body.items[0].title, 'in the second database');
    // The API key still works: the instance secret came with the backup.
    assert.equal((await request(target.url, 'GET', '/api/collections', { token: key.body.key })).status, 200);
    assert.deepEqual(integrity(target.dir), integrity(target.dir).map((l) => l.replace(/: .*$/, ': ok')));
    assert.equal(existsSync(path.join(target.dir, PREVIOUS_DIR)), false, 'the previous data is removed once the restore succeeded');
    // The backup itself stays listed on the restored instance.
    assert.deepEqual((await admin('GET', '/api/backups')).body.map((b: any) => b.key), ['during_writes.zip']);
  });

  test('names, permissions and downloads', async () => {
    assert.equal((await source.request('GET', '/api/backups')).status, 401);
    assert.equal((await source.admin('POST', '/api/backups', { body: { name: 'Bad Name.zip' } })).status, 400);
    assert.equal((await source.admin('POST', '/api/backups', { body: { name: '../x.zip' } })).status, 400);
    const dup = await source.admin('POST', '/api/backups', { body: { name: 'during_writes.zip' } });
    assert.equal(dup.status, 400);
    assert.equal(dup.body.data.name.code, 'validation_backup_name_exists');
    assert.equal((await source.admin('POST', '/api/backups')).status, 204);
    assert.equal((await source.admin('GET', '/api/backups')).body.length, 2);

    // Downloads take an administrator's file token, nothing else.
    assert.equal((await fetch(`${source.url}/api/backups/during_writes.zip`)).status, 403);
    assert.equal((await fetch(`${source.url}/api/backups/during_writes.zip`, { headers: { authorization: source.adminToken } })).status, 403);
    const user = await source.request('POST', '/api/auth/register', { body: { email: 'b@example.com', password: 'user-password-1', passwordConfirm: 'user-password-1' } });
    assert.equal(user.status, 200);
    const userLogin = await source.request('POST', '/api/auth/login', { body: { email: 'b@example.com', password: 'user-password-1' } });
    assert.equal((await fetch(`${source.url}/api/backups/during_writes.zip?token=${await fileToken(source, userLogin.body.token)}`)).status, 403);
    assert.equal((await fetch(`${source.url}/api/backups/during_writes.zip?token=${source.adminToken}`)).status, 403, 'an auth token is not a file token');
    assert.equal((await fetch(`${source.url}/api/backups/nope.zip?token=${await fileToken(source)}`)).status, 404);

    assert.equal((await source.admin('DELETE', '/api/backups/nope.zip')).status, 404);
    assert.equal((await source.admin('DELETE', '/api/backups/during_writes.zip')).status, 204);
    assert.deepEqual((await source.admin('GET', '/api/backups')).body.map((b: any) => b.key).includes('during_writes.zip'), false);
  });

  test('a corrupt or foreign archive is refused with a 400 and the data is untouched', async () => {
    const server = await startServer();
    try {
      await createCollection(server, { name: 'kept', fields: [{ name: 'title', type: 'text' }] });
      await server.admin('POST', '/api/collections/kept/records', { body: { title: 'still here' } });
      assert.equal((await server.admin('POST', '/api/backups', { body: { name: 'good.zip' } })).status, 204);
      const good = await download(server, 'good.zip');
      const { unzipEntries } = await import('../../src/lib/zip.ts');
      const entries = await unzipEntries(good, { maxEntries: 1000, maxEntrySize: 1e9, maxTotalSize: 1e9 });
      const without = (name: string) => entries.filter((e) => e.name !== name);
      const replaced = (name: string, data: Buffer) => entries.map((e) => (e.name === name ? { name, data } : e));
      const system = entries.find((e) => e.name === 'system.db')!.data;
      const damaged = Buffer.from(system);
      // Garbage over the pages after the header: the file opens, its b-trees are broken.
      for (let i = 4096; i < damaged.length; i += 7) damaged[i] = 0xff;
      // An entry named `storage/../../x`: yazl will not write it, so the bytes of a same-length name are changed.
      const evil = Buffer.from(await zipEntries([...entries, { name: 'storage/aa/aa/x', data: Buffer.from('x') }]));
      const needle = Buffer.from('storage/aa/aa/x');
      for (let at = evil.indexOf(needle); at >= 0; at = evil.indexOf(needle, at + 1)) Buffer.from('storage/../../x').copy(evil, at);

      const archives: Record<string, Buffer> = {
        'garbage.zip': Buffer.from('PK\u0003\u0004 this is not a zip at all'),
        'foreign.zip': await zipEntries([{ name: 'data.db', data: system }, { name: 'storage/x.txt', data: Buffer.from('x') }]),
        'no_manifest.zip': await zipEntries(without('cairn-backup.json')),
        'no_system.zip': await zipEntries(without('system.db')),
        'missing_database.zip': await zipEntries(without('databases/main.db')),
        'extra_entry.zip': await zipEntries([...entries, { name: 'notes.txt', data: Buffer.from('x') }]),
        'unlisted_database.zip': await zipEntries([...entries, { name: 'databases/extra.db', data: system }]),
        'damaged_db.zip': await zipEntries(replaced('system.db', damaged)),
        'not_sqlite.zip': await zipEntries(replaced('databases/main.db', Buffer.from('not a database'))),
        'dot_dot.zip': evil,
        'bad_manifest.zip': await zipEntries(replaced('cairn-backup.json', Buffer.from('{"format":"pocketbase"}'))),
      };
      const before = readdirSync(server.dir).sort();
      for (const [name, data] of Object.entries(archives)) {
        assert.equal((await upload(server, name, data)).status, 204, name);
        const res = await server.admin('POST', `/api/backups/${name}/restore`);
        assert.equal(res.status, 400, `${name}: ${res.status} ${res.text}`);
        assert.match(res.body.message, /^Invalid backup: /, name);
        // Untouched, and writes work again.
        assert.equal((await server.admin('GET', '/api/collections/kept/records')).body.items[0]?.title, 'still here', name);
        assert.equal((await server.admin('POST', '/api/collections/kept/records', { body: { title: name } })).status, 200, name);
        assert.deepEqual(readdirSync(server.dir).sort(), before, `${name}: nothing left behind in the data directory`);
      }
      assert.equal(existsSync(path.join(server.dir, '..', 'x')), false);
      assert.equal((await server.admin('POST', '/api/backups/nope.zip/restore')).status, 404);
      // Not a ZIP name: refused at upload.
      assert.equal((await upload(server, 'backup.tar', Buffer.from('x'))).status, 400);
      assert.equal((await upload(server, 'good.zip', good)).status, 400, 'an existing name');
    } finally {
      await server.close();
    }
  });

  test('while a restore runs, writes are answered 503 and reads still served', async () => {
    const release = source.host.refuseWrites('A backup is being restored; writes are refused until it completes. Try again in a moment.');
    try {
      const write = await source.admin('POST', '/api/collections/items/records', { body: { n: 1 } });
      assert.equal(write.status, 503);
      assert.deepEqual(Object.keys(write.body).sort(), ['code', 'data', 'message', 'status']);
      assert.match(write.body.message, /being restored/);
      assert.equal((await source.admin('GET', '/api/collections/items/records?perPage=1')).status, 200);
    } finally {
      release();
    }
    assert.equal((await source.admin('POST', '/api/collections/items/records', { body: { n: 1 } })).status, 200);
  });

  test('uploads and creates of one name at once: one is stored, the others refused as a taken name', async () => {
    const payloads = [0, 1, 2, 3, 4].map((i) => Buffer.alloc(2_000_000, i + 1));
    const replies = await Promise.all(payloads.map((data) => upload(source, 'same_name.zip', data)));
    assert.deepEqual(replies.map((r) => r.status).sort(), [204, 400, 400, 400, 400], replies.map((r) => r.text).join('\n'));
    for (const r of replies.filter((r) => r.status === 400)) assert.equal(r.body.data.file.code, 'validation_backup_name_exists');
    const stored = await download(source, 'same_name.zip');
    assert.ok(stored.equals(payloads[replies.findIndex((r) => r.status === 204)]), 'the stored file is the one answered 204');

    const [uploaded, created] = await Promise.all([upload(source, 'contested.zip', payloads[0]), source.admin('POST', '/api/backups', { body: { name: 'contested.zip' } })]);
    assert.deepEqual([uploaded.status, created.status].sort(), [204, 400], `${uploaded.text} ${created.text}`);
    const kept = await download(source, 'contested.zip');
    assert.equal(kept.equals(payloads[0]), uploaded.status === 204, 'the stored file is the request answered 204');
    for (const key of ['same_name.zip', 'contested.zip']) assert.equal((await source.admin('DELETE', `/api/backups/${key}`)).status, 204);
  });

  test('a restore does not wait for a client stalled mid-upload: that connection is closed', async () => {
    const server = await startServer();
    try {
      assert.equal((await server.admin('POST', '/api/backups', { body: { name: 'stalled.zip' } })).status, 204);
      const socket = connect(server.host.port, '127.0.0.1');
      socket.on('error', () => {});
      let closed = false;
      socket.on('close', () => (closed = true));
      await once(socket, 'connect');
      // Headers and the start of a 100 kB form, then nothing more.
      socket.write(
        `POST /api/backups/upload HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: ${server.adminToken}\r\n` +
          'Content-Type: multipart/form-data; boundary=edge\r\nContent-Length: 100000\r\n\r\n' +
          '--edge\r\nContent-Disposition: form-data; name="file"; filename="slow.zip"\r\n\r\nPK',
      );
      await waitFor(() => server.host.pending().requests === 1, { what: 'the stalled upload under way' });
      const restored = await server.admin('POST', '/api/backups/stalled.zip/restore');
      assert.equal(restored.status, 204, restored.text);
      await waitFor(() => closed, { what: 'the stalled connection closed', timeoutMs: 1000 });
      assert.equal(server.host.pending().requests, 0);
      assert.equal((await server.admin('GET', '/api/backups')).body.some((b: { key: string }) => b.key === 'slow.zip'), false, 'nothing of the cut upload is kept');
    } finally {
      await server.close();
    }
  });

  test('scheduled backups: CAIRN_BACKUP_CRON, keeping CAIRN_BACKUP_KEEP of them', async () => {
    const server = await startServer({ env: { CAIRN_BACKUP_CRON: '@every 1s', CAIRN_BACKUP_KEEP: '2' } });
    try {
      const seen = new Set<string>();
      await waitFor(
        async () => {
          const keys = ((await server.admin('GET', '/api/backups')).body as Array<{ key: string }>).map((b) => b.key);
          assert.ok(keys.length <= 2, `kept ${keys.length}`);
          for (const k of keys) seen.add(k);
          return seen.size >= 3;
        },
        { timeoutMs: 20_000, intervalMs: 200, what: 'three scheduled backups' },
      );
      for (const k of seen) assert.match(k, /^auto_cairn_backup_\d{14}\.zip$/);
    } finally {
      await server.close();
    }
  });
});

describe('the swap of a restore', { skip: onPostgres ? 'SQLite files' : false }, () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(path.join(tmpdir(), 'cairn-swap-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  function layout(root: string, tag: string): void {
    mkdirSync(path.join(root, 'databases'), { recursive: true });
    writeFileSync(path.join(root, 'system.db'), `system ${tag}`);
    writeFileSync(path.join(root, 'databases', 'main.db'), `main ${tag}`);
  }

  test('a restore the process died in is undone at the next start', () => {
    const data = path.join(dir, 'data');
    const incoming = path.join(dir, 'incoming');
    layout(data, 'old');
    writeFileSync(path.join(data, 'unrelated.txt'), 'stays');
    layout(incoming, 'new');
    swapIn(data, incoming);
    // The process dies here: neither commit nor rollback.
    assert.equal(recoverInterruptedRestore(data), 'rolled-back');
    assert.equal(readFile(path.join(data, 'system.db')), 'system old');
    assert.equal(readFile(path.join(data, 'databases', 'main.db')), 'main old');
    assert.equal(readFile(path.join(data, 'unrelated.txt')), 'stays');
    assert.equal(existsSync(path.join(data, PREVIOUS_DIR)), false);
    assert.equal(recoverInterruptedRestore(data), 'none');
  });

  test('commit keeps the restored data; rollback puts the previous data back', () => {
    const data = path.join(dir, 'data2');
    layout(data, 'old');
    layout(path.join(dir, 'in2'), 'new');
    swapIn(data, path.join(dir, 'in2')).commit();
    assert.equal(readFile(path.join(data, 'system.db')), 'system new');
    assert.equal(existsSync(path.join(data, PREVIOUS_DIR)), false);
    layout(path.join(dir, 'in3'), 'newer');
    swapIn(data, path.join(dir, 'in3')).rollback();
    assert.equal(readFile(path.join(data, 'system.db')), 'system new');
  });
});

function readFile(file: string): string {
  return readFileSync(file, 'utf8');
}
