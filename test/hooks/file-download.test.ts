// through-tsx: a TypeScript hook it loads imports `cairn`, which must be this process's own src/index.ts (a bundle holds a copy)
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { form } from '../helpers/files.ts';
import { createCollection, startServer, type TestServer } from '../helpers/server.ts';
import { type AppDir, appDir } from './app-dir.ts';

// A record's file about to be downloaded reaches onFileDownloadRequest: TypeScript hooks and
// pb_hooks (≥ 0.23 with e.next(), v0.22 going on by itself) may rename it, refuse it, or hold it back.
const TS_HOOKS = `
import { defineHooks, ForbiddenError } from 'cairn';
export default defineHooks((app) => {
  app.onFileDownloadRequest(async (e) => {
    if (e.record.title === 'secret') throw new ForbiddenError('Not this one.');
    if (e.record.title === 'hidden') return;
    await e.next();
  }, 'docs');
});
`;

const PB_NEW = `
onFileDownloadRequest((e) => {
  e.servedName = e.record.getString("title") + "-" + e.fileField.name + ".txt";
  e.next();
}, "docs");
`;

const PB_OLD = `
onFileDownloadRequest((e) => {
  const paper = $app.dao().findRecordById("papers", e.record.id);
  if (paper.getString("title") === "old-style") e.servedName = "renamed by v0.22 \\"quoted\\".txt";
}, "papers");
`;

describe('hooks: onFileDownloadRequest', () => {
  let app: AppDir;
  let server: TestServer;
  const files: Record<string, { id: string; name: string; collection: string }> = {};

  before(async () => {
    app = appDir({ 'files.ts': TS_HOOKS });
    const pbNew = path.join(app.root, 'pb_new');
    mkdirSync(pbNew, { recursive: true });
    writeFileSync(path.join(pbNew, 'a_new.pb.js'), PB_NEW);
    writeFileSync(path.join(pbNew, 'b_old.pb.js'), PB_OLD);
    server = await startServer({ env: { CAIRN_HOOKS_DIR: app.hooks, CAIRN_PB_HOOKS_DIR: pbNew } });
    for (const name of ['docs', 'papers']) {
      await createCollection(server, { name, fields: [{ name: 'title', type: 'text' }, { name: 'attachment', type: 'file', maxSelect: 1, maxSize: 1000 }] });
    }
    for (const [collection, title] of [['docs', 'plain'], ['docs', 'secret'], ['docs', 'hidden'], ['papers', 'old-style']]) {
      const res = await server.admin('POST', `/api/collections/${collection}/records`, { raw: form([['title', title], ['attachment', { name: 'note.txt', data: `content of ${title}` }]]) });
      assert.equal(res.status, 200, res.text);
      files[title] = { id: res.body.id, name: res.body.attachment, collection };
    }
  });
  after(async () => {
    await server?.close();
    app?.remove();
  });

  const download = (title: string) => fetch(`${server.url}/api/files/${files[title].collection}/${files[title].id}/${files[title].name}`);

  test('a ≥ 0.23 pb_hooks handler renames the file it sends', async () => {
    const res = await download('plain');
    assert.equal(res.status, 200);
    assert.equal(await res.text(), 'content of plain');
    assert.match(res.headers.get('content-disposition') ?? '', /filename="plain-attachment\.txt"/);
  });

  test('a TypeScript handler refuses with its error, or holds the file back (404)', async () => {
    const secret = await download('secret');
    assert.equal(secret.status, 403);
    assert.equal(((await secret.json()) as { message: string }).message, 'Not this one.');
    const hidden = await download('hidden');
    assert.equal(hidden.status, 404);
  });

  test('a v0.22 handler renames and goes on by itself; the name is made safe for the header', async () => {
    const res = await download('old-style');
    assert.equal(res.status, 200);
    assert.equal(await res.text(), 'content of old-style');
    assert.match(res.headers.get('content-disposition') ?? '', /filename="renamed by v0\.22 _quoted_\.txt"/);
  });
});
