// `node --import tsx bench/import.ts [records]`: how fast `cairn import pocketbase` copies records.
// Makes a synthetic PocketBase 0.23+ instance (default 100,000 records: 1,000 users and the rest
// posts with text, editor, number, bool, multiple select, JSON, date and relation fields, plus an
// index), imports it into a fresh SQLite data directory, then into a PostgreSQL database of its own
// (BENCH_POSTGRES, by default the local server; dropped at the end; BENCH_POSTGRES=off skips it), and
// prints the time and records per second of each import, measured as the command measures it (from
// opening the PocketBase file to the commit), with the services already started.
import Sqlite from 'better-sqlite3';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import pg from 'pg';
import { buildServices } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { importPocketBase } from '../src/import/service.ts';
import { importDeps } from '../src/cli/import.ts';

const TOTAL = Number(process.argv[2] ?? 100_000);
const ALNUM = 'abcdefghijklmnopqrstuvwxyz0123456789';
const id = () => Array.from(randomBytes(15), (b) => ALNUM[b % 36]).join('');
const pbDate = (ms: number) => new Date(ms).toISOString().replace('T', ' ');

/** A PocketBase 0.23+ data.db with `total` records (also the bench's `import` case). */
export function makeInstance(dir: string, total = TOTAL): void {
  const USERS = Math.min(1_000, Math.floor(total / 10));
  const db = new Sqlite(path.join(dir, 'data.db'));
  db.pragma('journal_mode = OFF');
  db.pragma('synchronous = OFF');
  db.exec(`CREATE TABLE _collections (id TEXT PRIMARY KEY NOT NULL, system BOOLEAN DEFAULT FALSE NOT NULL, type TEXT DEFAULT 'base' NOT NULL,
    name TEXT UNIQUE NOT NULL, fields JSON DEFAULT '[]' NOT NULL, indexes JSON DEFAULT '[]' NOT NULL, listRule TEXT DEFAULT NULL, viewRule TEXT DEFAULT NULL,
    createRule TEXT DEFAULT NULL, updateRule TEXT DEFAULT NULL, deleteRule TEXT DEFAULT NULL, options JSON DEFAULT '{}' NOT NULL, created TEXT NOT NULL, updated TEXT NOT NULL);
  CREATE TABLE _superusers (id TEXT PRIMARY KEY, email TEXT, emailVisibility BOOLEAN, verified BOOLEAN, password TEXT, tokenKey TEXT, created TEXT, updated TEXT);
  CREATE TABLE users (id TEXT PRIMARY KEY, email TEXT, emailVisibility BOOLEAN, verified BOOLEAN, password TEXT, tokenKey TEXT, name TEXT, created TEXT, updated TEXT);
  CREATE TABLE posts (id TEXT PRIMARY KEY, title TEXT, body TEXT, views NUMERIC, published BOOLEAN, tags JSON, meta JSON, published_at TEXT, author TEXT, created TEXT, updated TEXT);`);
  const autodate = (name: string) => ({ id: `autodate_${name}`, name, type: 'autodate', system: false, onCreate: true, onUpdate: name === 'updated' });
  const auth = ['id', 'password', 'tokenKey', 'email', 'emailVisibility', 'verified'].map((name) => ({ id: name, name, type: name === 'email' ? 'email' : name === 'password' ? 'password' : name.endsWith('y') || name === 'verified' ? 'bool' : 'text', system: true }));
  const insertCollection = db.prepare('INSERT INTO _collections (id, system, type, name, fields, indexes, listRule, viewRule, options, created, updated) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
  const now = pbDate(Date.now());
  insertCollection.run('pbc_3142635823', 1, 'auth', '_superusers', JSON.stringify([...auth, autodate('created'), autodate('updated')]), '[]', null, null, '{}', now, now);
  insertCollection.run('_pb_users_auth_', 0, 'auth', 'users', JSON.stringify([...auth, { id: 'name', name: 'name', type: 'text', max: 255 }, autodate('created'), autodate('updated')]), '[]', 'id = @request.auth.id', 'id = @request.auth.id', '{}', now, now);
  insertCollection.run(
    'pbc_posts00001',
    0,
    'base',
    'posts',
    JSON.stringify([
      { id: 'id', name: 'id', type: 'text', system: true, primaryKey: true },
      { id: 't1', name: 'title', type: 'text', max: 200 },
      { id: 'e1', name: 'body', type: 'editor' },
      { id: 'n1', name: 'views', type: 'number', onlyInt: true },
      { id: 'b1', name: 'published', type: 'bool' },
      { id: 's1', name: 'tags', type: 'select', maxSelect: 3, values: ['news', 'tech', 'life', 'misc'] },
      { id: 'j1', name: 'meta', type: 'json' },
      { id: 'd1', name: 'published_at', type: 'date' },
      { id: 'r1', name: 'author', type: 'relation', collectionId: '_pb_users_auth_', maxSelect: 1 },
      autodate('created'),
      autodate('updated'),
    ]),
    JSON.stringify(['CREATE INDEX `idx_posts_author` ON `posts` (`author`)']),
    '@request.auth.id != ""',
    '@request.auth.id != ""',
    '{}',
    now,
    now,
  );
  // One real bcrypt hash (cost 10) for every account: hashing 1,000 would only slow the set-up.
  const hash = '$2a$10$N9qo8uLOickgx2ZMRZoMyeIjZAgcfl7p92ldGxad68LJZdL17lhWy';
  const users: string[] = [];
  const insertUser = db.prepare('INSERT INTO users VALUES (?, ?, 0, 1, ?, ?, ?, ?, ?)');
  const insertPost = db.prepare('INSERT INTO posts VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)');
  const start = Date.UTC(2024, 0, 1);
  db.transaction(() => {
    for (let i = 0; i < USERS; i++) {
      const uid = id();
      users.push(uid);
      insertUser.run(uid, `user${i}@example.com`, hash, randomBytes(25).toString('hex'), `User ${i}`, pbDate(start + i * 1000), pbDate(start + i * 1000));
    }
    for (let i = 0; i < total - USERS; i++) {
      const at = pbDate(start + i * 60_000);
      insertPost.run(id(), `Post number ${i}`, `<p>Body of post ${i}, with a little text to copy.</p>`, i % 1000, i % 2, JSON.stringify(['news', 'tech'].slice(0, 1 + (i % 2))), JSON.stringify({ words: i % 500, lang: 'en' }), at, users[i % users.length], at, at);
    }
  })();
  db.close();
}

async function importInto(label: string, source: string, dir: string, databaseUrl?: string): Promise<void> {
  const config = loadConfig({ dir, databaseUrl }, { CAIRN_LOG_LEVEL: 'silent' });
  const services = await buildServices(config);
  try {
    const report = await importPocketBase(importDeps(services, dir), { path: source, database: 'main', dryRun: false });
    const records = report.collections.reduce((n, c) => n + c.records, 0);
    const seconds = report.ms! / 1000;
    process.stdout.write(`${label.padEnd(11)} ${records.toLocaleString('en-US')} records in ${seconds.toFixed(2)} s: ${Math.round(records / seconds).toLocaleString('en-US')} records/s\n`);
  } finally {
    await services.registry.close();
  }
}

async function main(): Promise<void> {
  const work = mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-import-'));
  try {
    const source = path.join(work, 'pb_data');
    mkdirSync(source);
    const made = Date.now();
    makeInstance(source);
    process.stdout.write(`synthetic PocketBase instance: ${TOTAL.toLocaleString('en-US')} records (${Math.min(1_000, Math.floor(TOTAL / 10))} users), made in ${((Date.now() - made) / 1000).toFixed(1)} s\n`);
    await importInto('SQLite', source, path.join(work, 'sqlite'));
    const server = process.env.BENCH_POSTGRES ?? 'postgres://postgres@127.0.0.1:5432/postgres';
    if (server === 'off') return;
    const database = `cairn_bench_import_${randomBytes(4).toString('hex')}`;
    const admin = new pg.Client({ connectionString: server });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${database}"`);
    try {
      const url = new URL(server);
      url.pathname = `/${database}`;
      await importInto('PostgreSQL', source, path.join(work, 'postgres'), url.toString());
    } finally {
      await admin.query(`DROP DATABASE IF EXISTS "${database}" WITH (FORCE)`);
      await admin.end();
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

// Run as a script (not when the bench's import case takes makeInstance from here).
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) await main();
