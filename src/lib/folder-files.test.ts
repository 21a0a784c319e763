// storage-independent: reads a temporary folder on disk, opens no database
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { folderFiles } from './folder-files.ts';

const dir = mkdtempSync(path.join(tmpdir(), 'cairn-folder-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('files the filter takes, in byte order of their names; folders are not files', () => {
  for (const name of ['b.js', 'B.js', 'a.js', 'é.js', 'z.txt']) writeFileSync(path.join(dir, name), '');
  mkdirSync(path.join(dir, 'sub.js'));
  assert.deepEqual(folderFiles(dir, (n) => n.endsWith('.js'), (e) => e), ['B.js', 'a.js', 'b.js', 'é.js']);
});

test('a missing folder has no files; another failure is thrown as the caller words it', () => {
  assert.deepEqual(folderFiles(path.join(dir, 'missing'), () => true, (e) => e), []);
  assert.throws(
    () => folderFiles(path.join(dir, 'z.txt'), () => true, (e) => new Error(`unreadable: ${(e as NodeJS.ErrnoException).code}`)),
    /unreadable: ENOTDIR/,
  );
});
