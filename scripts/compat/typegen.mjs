#!/usr/bin/env node
// pocketbase-typegen on both sides: its `--db` output on PocketBase's own data.db against its `--url`
// output on Cairn holding the same data (`cairn import pocketbase`), signing in with email and
// password as its users do. Prints a unified diff per source and a summary line.
//
//   node scripts/compat/typegen.mjs --typegen <dir with node_modules/pocketbase-typegen>
//     --out <dir for outputs> [--cairn <cairn checkout, default .>] <data.db or pb_data dir>...
//
// The typegen install and the data files are given on the command line; nothing of theirs lives here.

import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { cairnCli, startCairn } from './cairn-server.mjs';

const { values: opts, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    typegen: { type: 'string' },
    out: { type: 'string' },
    cairn: { type: 'string', default: '.' },
    email: { type: 'string', default: 'compat-typegen@example.com' },
    password: { type: 'string', default: 'compat-typegen-1' },
  },
});
if (!opts.typegen || !opts.out || !positionals.length) {
  console.error('usage: typegen.mjs --typegen <dir> --out <dir> [--cairn <dir>] <data.db or pb_data>...');
  process.exit(2);
}
const cairnRoot = resolve(opts.cairn);
const cli = join(resolve(opts.typegen), 'node_modules/pocketbase-typegen/dist/cli.js');
const out = resolve(opts.out);
mkdirSync(out, { recursive: true });

function typegen(args) {
  return spawnSync(process.execPath, [cli, ...args], { encoding: 'utf8', timeout: 120000 });
}

const summary = [];
for (const source of positionals.map((p) => resolve(p))) {
  const name = basename(source).replace(/\.db$/, '') === 'data' ? basename(resolve(source, '..')) : basename(source).replace(/\.db$/, '');
  const work = join(out, name);
  rmSync(work, { recursive: true, force: true });
  mkdirSync(work, { recursive: true });
  // PocketBase's side reads a private copy (a SQLite open may write -shm/-wal beside the file)
  const pbData = join(work, 'pb_data');
  if (statSync(source).isDirectory()) cpSync(source, pbData, { recursive: true });
  else {
    mkdirSync(pbData);
    cpSync(source, join(pbData, 'data.db'));
  }
  const dbCopy = join(work, 'pb-copy.db');
  cpSync(join(pbData, 'data.db'), dbCopy);
  const fromDb = typegen(['--db', dbCopy, '--out', join(work, 'db.ts')]);

  cairnCli(cairnRoot, ['import', 'pocketbase', pbData, '--dir', join(work, 'cairn')]);
  try {
    cairnCli(cairnRoot, ['admin', 'create', opts.email, opts.password, '--dir', join(work, 'cairn')]);
  } catch (err) {
    // the source's own superuser, imported with its password, is signed in with as it is
    if (!/exist/i.test(String(err))) throw err;
  }
  const server = await startCairn({ cairnRoot, dir: join(work, 'cairn'), logFile: join(work, 'cairn.log') });
  let fromUrl;
  let fromToken;
  try {
    fromUrl = typegen(['--url', server.url, '--email', opts.email, '--password', opts.password, '--out', join(work, 'url.ts')]);
    // past the sign-in: the same with a token signed in by JSON, to see what the schema lacks
    const auth = await fetch(`${server.url}/api/collections/_superusers/auth-with-password`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ identity: opts.email, password: opts.password }),
    }).then((r) => r.json());
    fromToken = typegen(['--url', server.url, '--token', auth.token, '--out', join(work, 'url-token.ts')]);
  } finally {
    await server.stop();
  }
  const dbOk = fromDb.status === 0 && existsSync(join(work, 'db.ts'));
  const urlOk = fromUrl.status === 0 && existsSync(join(work, 'url.ts'));
  writeFileSync(join(work, 'typegen-db.log'), `${fromDb.stdout}\n${fromDb.stderr}`);
  writeFileSync(join(work, 'typegen-url.log'), `${fromUrl.stdout}\n${fromUrl.stderr}`);
  writeFileSync(join(work, 'typegen-url-token.log'), `${fromToken.stdout}\n${fromToken.stderr}`);
  let diff = '';
  if (dbOk && urlOk) {
    diff = spawnSync('diff', ['-u', join(work, 'db.ts'), join(work, 'url.ts')], { encoding: 'utf8' }).stdout;
    writeFileSync(join(work, 'db-vs-url.diff'), diff);
  }
  let tokenDiff = '';
  const tokenOk = fromToken.status === 0 && existsSync(join(work, 'url-token.ts'));
  if (dbOk && tokenOk) {
    tokenDiff = spawnSync('diff', ['-u', join(work, 'db.ts'), join(work, 'url-token.ts')], { encoding: 'utf8' }).stdout;
    writeFileSync(join(work, 'db-vs-url-token.diff'), tokenDiff);
  }
  const tokenChanged = tokenDiff.split('\n').filter((l) => /^[-+][^-+]/.test(l) || /^[-+]$/.test(l));
  const changed = diff.split('\n').filter((l) => /^[-+][^-+]/.test(l) || /^[-+]$/.test(l));
  summary.push({
    name,
    db: dbOk ? 'ok' : `failed: ${(fromDb.stderr || fromDb.stdout).trim().split('\n').slice(-1)[0]}`,
    url: urlOk ? 'ok' : `failed: ${(fromUrl.stderr || fromUrl.stdout).trim().split('\n').slice(-1)[0]}`,
    identical: dbOk && urlOk && diff === '',
    linesOnlyInDb: changed.filter((l) => l.startsWith('-')).length,
    linesOnlyInUrl: changed.filter((l) => l.startsWith('+')).length,
    withToken: tokenOk ? (tokenDiff === '' ? 'identical' : `-${tokenChanged.filter((l) => l.startsWith('-')).length} +${tokenChanged.filter((l) => l.startsWith('+')).length} lines`) : 'failed',
  });
}
writeFileSync(join(out, 'summary.json'), JSON.stringify(summary, null, 2));
console.table(summary);
