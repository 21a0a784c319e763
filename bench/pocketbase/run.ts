// `npm run bench -- pocketbase [--full] [--sqlite|--postgres] [--reseed] [--only=TEXT[,TEXT…]]
// [--pocketbase-bin=PATH]`: PocketBase's own benchmark (bench/pocketbase/scenarios.ts) against Cairn on
// SQLite and on PostgreSQL, beside PocketBase's published times for a 2-vCPU Hetzner CAX11
// (published.ts) and, given a PocketBase binary (or BENCH_POCKETBASE_BIN), beside that PocketBase run
// on this machine in the same run: each scenario runs on every target in turn before the next
// scenario starts, so a change in the machine's load falls on all of them. See docs/performance.md.
//
// The data is seeded once by the create scenarios (through the API, as PocketBase's benchmark does)
// and kept in a cache keyed by Cairn's version and this bench's seed: SQLite's data directory under
// <tmp>/cairn-pbbench-cache/, PostgreSQL's as a template database cloned for each run. Every run works
// on a copy, so deletes and updates never reach the cache; --reseed measures the creates again.
// Default: posts10k only (a few minutes); --full: 10k, 25k, 50k and 100k posts (seeding takes long).
import { createHash } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { ADMIN, ROOT, startPgCairn } from '../postgres/run.ts';
import { type RunningServer, serverNodeFlags, startProcess } from '../lib/servers.ts';
import { burst, type Outcome, send } from './client.ts';
import { pocketbaseVersion, startPocketBase, toPocketBase, upsertSuperuser } from './pocketbase.ts';
import { PUBLISHED_CAX11_MS } from './published.ts';
import { createId, createSteps, DESCRIPTION, indexStatement, listSteps, POSTS_FULL, POSTS_QUICK, schema } from './scenarios.ts';

type Engine = 'sqlite' | 'postgres';
/** Cairn on one engine, or the real PocketBase. */
type Target = Engine | 'pocketbase';

interface Options {
  full: boolean;
  engines: Engine[];
  reseed: boolean;
  only?: string;
  /** A PocketBase executable to run the same scenarios against. */
  pocketbaseBin?: string;
  /**
   * Each read, auth and delete scenario this many times in a row on each target (`--repeat=N`): the
   * later runs (`… #2`, `#3`) show what the scenario costs once the process has served it before,
   * where the first run includes the JIT warm-up of its route.
   */
  repeat: number;
}

export function parseArgs(args: string[]): Options {
  const sqlite = args.includes('--sqlite');
  const postgres = args.includes('--postgres');
  return {
    full: args.includes('--full'),
    engines: sqlite === postgres ? ['sqlite', 'postgres'] : sqlite ? ['sqlite'] : ['postgres'],
    reseed: args.includes('--reseed'),
    only: args.find((a) => a.startsWith('--only='))?.slice('--only='.length),
    pocketbaseBin: args.find((a) => a.startsWith('--pocketbase-bin='))?.slice('--pocketbase-bin='.length) || process.env.BENCH_POCKETBASE_BIN || undefined,
    repeat: repeatOf(args.find((a) => a.startsWith('--repeat='))?.slice('--repeat='.length)),
  };
}

function repeatOf(text: string | undefined): number {
  if (text === undefined) return 1;
  const n = Number(text);
  if (!Number.isInteger(n) || n < 1 || n > 100) throw new Error(`--repeat must be an integer from 1 to 100, got "${text}"`);
  return n;
}

/** A repeated scenario's id (`delete posts10k #2`) without its number: what PocketBase published it as. */
function scenarioOf(id: string): string {
  return id.replace(/ #\d+$/, '');
}

/** Bumped when seed() below changes what it writes (scenarios.ts is hashed into the key as well). */
const SEED_VERSION = '1';

const PG_SERVER = () => process.env.BENCH_POSTGRES || 'postgres://postgres@127.0.0.1:5432/postgres';

function cacheKey(full: boolean, server?: string): string {
  const version = server ?? (JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  const seed = createHash('sha1')
    .update(readFileSync(new URL('./scenarios.ts', import.meta.url)))
    .update(SEED_VERSION)
    .digest('hex')
    .slice(0, 10);
  return `v${version.replace(/\W/g, '_')}_${full ? 'full' : 'quick'}_${seed}`;
}

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

function startSqliteCairn(dir: string): Promise<RunningServer> {
  return startProcess(
    [...serverNodeFlags(), path.join(ROOT, 'bin/cairn.js'), 'serve', '--dir', dir, '--host', '127.0.0.1'],
    { CAIRN_LOG_LEVEL: process.env.BENCH_LOG_LEVEL || 'warn', CAIRN_RATE_LIMIT: 'off', CAIRN_ADMIN_EMAIL: ADMIN.identity, CAIRN_ADMIN_PASSWORD: ADMIN.password, NODE_ENV: 'production' },
    '/api/health',
  );
}

/** A target on a copy of the seeded data. */
interface Instance {
  server: RunningServer;
  admin: string;
  close(): Promise<void>;
}

// Cairn answers both; PocketBase ≥ 0.23 only the second.
const adminLogin = (target: Target) => (target === 'pocketbase' ? '/api/collections/_superusers/auth-with-password' : '/api/admins/auth-with-password');

async function adminToken(url: string, target: Target = 'sqlite'): Promise<string> {
  const res = await send(url, 'POST', adminLogin(target), { body: ADMIN });
  if (res.status !== 200) throw new Error(`admin login answered ${res.status}: ${res.text}`);
  return (JSON.parse(res.text) as { token: string }).token;
}

async function call<T = any>(url: string, token: string, method: string, p: string, body?: unknown): Promise<T> {
  const res = await send(url, method, p, { body, token });
  if (res.status < 200 || res.status >= 300) throw new Error(`${method} ${p} answered ${res.status}: ${res.text.slice(0, 300)}`);
  return (res.text === '' ? undefined : JSON.parse(res.text)) as T;
}

async function randomIds(url: string, token: string, collection: string, count: number): Promise<string[]> {
  const page = await call<{ items: Array<{ id: string }> }>(url, token, 'GET', `/api/collections/${collection}/records?perPage=${count}&sort=@random&fields=id&skipTotal=1`);
  return page.items.map((r) => r.id);
}

async function userToken(url: string): Promise<{ id: string; token: string }> {
  const res = await send(url, 'POST', '/api/collections/users/auth-with-password', { body: { identity: 'users7@example.com', password: '1234567890' } });
  if (res.status !== 200) throw new Error(`user login answered ${res.status}: ${res.text}`);
  const body = JSON.parse(res.text) as { token: string; record: { id: string } };
  return { id: body.record.id, token: body.token };
}

const pick = <T>(list: T[]) => list[Math.floor(Math.random() * list.length)];

/** Creates the schema and runs the create scenarios, which seed the data; returns their outcomes. */
async function seed(server: RunningServer, posts: readonly string[], target: Target): Promise<Record<string, Outcome>> {
  const url = server.url;
  const admin = await adminToken(url, target);
  const s = schema(posts);
  const idOf = async (name: string) => (await call<{ id: string }>(url, admin, 'GET', `/api/collections/${name}`)).id;
  const shape = (c: Record<string, unknown>) => (target === 'pocketbase' ? toPocketBase(c, idOf) : Promise.resolve(c));
  for (const c of s.create.slice(0, 2)) await call(url, admin, 'POST', '/api/collections', await shape(c));
  const users = await call<{ fields: unknown[] }>(url, admin, 'GET', '/api/collections/users');
  await call(url, admin, 'PATCH', '/api/collections/users', await shape(s.users(users)));
  for (const c of s.create.slice(2)) await call(url, admin, 'POST', '/api/collections', await shape(c));
  const out: Record<string, Outcome> = {};
  let user: { token: string } | undefined;
  for (const step of createSteps(posts)) {
    await call(url, admin, 'PATCH', `/api/collections/${step.collection}`, { createRule: step.rule });
    const total = (await call<{ totalItems: number }>(url, admin, 'GET', `/api/collections/${step.collection}/records?perPage=1`)).totalItems;
    const orgs = step.collection === 'users' ? await randomIds(url, admin, 'organizations', 999) : [];
    const perms = step.collection === 'users' ? await randomIds(url, admin, 'permissions', 999) : [];
    const authors = step.collection.startsWith('posts') ? await randomIds(url, admin, 'users', 999) : [];
    if (step.asUser) user ??= await userToken(url);
    process.stderr.write(`  ${createId(step)}: ${step.count} at ${step.concurrency}…\n`);
    const body = (i: number): Record<string, unknown> => {
      const name = `${step.collection}${i + total}`;
      if (step.collection === 'organizations') return { name };
      if (step.collection === 'permissions') return { name, active: i % 2 === 0 };
      if (step.collection === 'users') {
        return { email: `${name}@example.com`, username: name, name, organization: pick(orgs), permissions: [pick(perms), pick(perms), pick(perms)], password: '1234567890', passwordConfirm: '1234567890' };
      }
      return { title: name, description: DESCRIPTION, public: i % 2 !== 0, type: [pick(['a', 'b', 'c', 'd']), pick(['a', 'b', 'c', 'd'])], author: pick(authors) };
    };
    const token = step.asUser ? user!.token : undefined;
    out[createId(step)] = await burst(step.count, step.concurrency, (i) => send(url, 'POST', `/api/collections/${step.collection}/records`, { body: body(i), token }), server.cpuSeconds);
  }
  for (const step of createSteps(posts)) await call(url, admin, 'PATCH', `/api/collections/${step.collection}`, { createRule: '' });
  return out;
}

/** The seeded data for `engine`, from the cache or seeded now; returns an instance on a copy of it. */
async function instance(engine: Target, options: Options, creates: Record<string, Outcome>): Promise<Instance> {
  const posts = options.full ? POSTS_FULL : POSTS_QUICK;
  const cacheRoot = path.join(os.tmpdir(), 'cairn-pbbench-cache');
  mkdirSync(cacheRoot, { recursive: true });
  const work = mkdtempSync(path.join(os.tmpdir(), 'cairn-pbbench-'));
  if (engine === 'pocketbase') return pocketbaseInstance(options, cacheRoot, work, creates);
  const key = cacheKey(options.full);
  const metaFile = path.join(cacheRoot, `${engine}-${key}.json`);
  if (engine === 'sqlite') {
    const cached = path.join(cacheRoot, `sqlite-${key}`);
    if (options.reseed || !existsSync(metaFile) || !existsSync(cached)) {
      rmSync(cached, { recursive: true, force: true });
      process.stderr.write(`seeding SQLite (${posts.join(', ')})…\n`);
      const server = await startSqliteCairn(cached);
      try {
        writeFileSync(metaFile, JSON.stringify({ seeded: new Date().toISOString(), creates: await seed(server, posts, engine) }));
      } finally {
        await server.stop();
      }
    }
    Object.assign(creates, (JSON.parse(readFileSync(metaFile, 'utf8')) as { creates: Record<string, Outcome> }).creates);
    cpSync(cached, path.join(work, 'data'), { recursive: true });
    const server = await startSqliteCairn(path.join(work, 'data'));
    return { server, admin: await adminToken(server.url), close: async () => (await server.stop(), rmSync(work, { recursive: true, force: true })) };
  }
  const serverUrl = PG_SERVER();
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  const template = `cairn_pbbench_${key}`.toLowerCase().slice(0, 60);
  const dbUrl = (name: string) => Object.assign(new URL(serverUrl), { pathname: `/${name}` }).toString();
  try {
    const exists = (await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [template])).rowCount === 1;
    if (options.reseed || !exists || !existsSync(metaFile)) {
      await admin.query(`DROP DATABASE IF EXISTS "${template}" WITH (FORCE)`);
      await admin.query(`CREATE DATABASE "${template}"`);
      process.stderr.write(`seeding PostgreSQL (${posts.join(', ')})…\n`);
      const seedDir = path.join(work, 'seed');
      const server = await startPgCairn(ROOT, seedDir, dbUrl(template), { CAIRN_LOG_LEVEL: 'warn' });
      try {
        writeFileSync(metaFile, JSON.stringify({ seeded: new Date().toISOString(), creates: await seed(server, posts, engine) }));
      } finally {
        await server.stop();
      }
      const data = new pg.Client({ connectionString: dbUrl(template) });
      await data.connect();
      await data.query('VACUUM ANALYZE');
      await data.end();
    }
    Object.assign(creates, (JSON.parse(readFileSync(metaFile, 'utf8')) as { creates: Record<string, Outcome> }).creates);
    const copy = `cairn_pbbench_run_${process.pid}`;
    await admin.query(`DROP DATABASE IF EXISTS "${copy}" WITH (FORCE)`);
    await admin.query(`CREATE DATABASE "${copy}" TEMPLATE "${template}"`);
    const server = await startPgCairn(ROOT, path.join(work, 'data'), dbUrl(copy), { CAIRN_LOG_LEVEL: process.env.BENCH_LOG_LEVEL || 'warn' });
    return {
      server,
      admin: await adminToken(server.url),
      async close() {
        await server.stop();
        rmSync(work, { recursive: true, force: true });
        const a = new pg.Client({ connectionString: serverUrl });
        await a.connect();
        await a.query(`DROP DATABASE IF EXISTS "${copy}" WITH (FORCE)`).catch(() => undefined);
        await a.end();
      },
    };
  } finally {
    await admin.end();
  }
}

/** PocketBase on a copy of its seeded data directory (cached as Cairn's SQLite one is). */
async function pocketbaseInstance(options: Options, cacheRoot: string, work: string, creates: Record<string, Outcome>): Promise<Instance> {
  const bin = path.resolve(options.pocketbaseBin!);
  const posts = options.full ? POSTS_FULL : POSTS_QUICK;
  const key = cacheKey(options.full, pocketbaseVersion(bin));
  const metaFile = path.join(cacheRoot, `pocketbase-${key}.json`);
  const cached = path.join(cacheRoot, `pocketbase-${key}`);
  if (options.reseed || !existsSync(metaFile) || !existsSync(cached)) {
    rmSync(cached, { recursive: true, force: true });
    mkdirSync(cached, { recursive: true });
    process.stderr.write(`seeding PocketBase ${pocketbaseVersion(bin)} (${posts.join(', ')})…\n`);
    upsertSuperuser(bin, cached, ADMIN);
    const server = await startPocketBase(bin, cached);
    try {
      writeFileSync(metaFile, JSON.stringify({ seeded: new Date().toISOString(), creates: await seed(server, posts, 'pocketbase') }));
    } finally {
      await server.stop();
    }
  }
  Object.assign(creates, (JSON.parse(readFileSync(metaFile, 'utf8')) as { creates: Record<string, Outcome> }).creates);
  cpSync(cached, path.join(work, 'data'), { recursive: true });
  const server = await startPocketBase(bin, path.join(work, 'data'));
  return { server, admin: await adminToken(server.url, 'pocketbase'), close: async () => (await server.stop(), rmSync(work, { recursive: true, force: true })) };
}

/** One target while the scenarios run: its instance, a signed-in user, and its outcomes by id. */
interface Running {
  target: Target;
  inst: Instance;
  user: { id: string; token: string };
  out: Record<string, Outcome>;
}

/** What one scenario sends to one target (prepared on it first: rules, indexes, ids). */
interface Requests {
  iterations: number;
  concurrency: number;
  one: (i: number) => ReturnType<typeof send>;
  beside?: () => Promise<unknown>;
}

/**
 * Runs the read, auth and delete scenarios; each one on every target in turn before the next, so the
 * targets share whatever the machine's load does meanwhile.
 */
async function scenarios(targets: Running[], options: Options): Promise<void> {
  const wanted = (id: string) => !options.only || options.only.split(',').some((text) => id.includes(text));
  const cool = () => pause(Number(process.env.BENCH_PB_COOLDOWN_MS ?? 1000));
  const run = async (id: string, prepare: (t: Running, url: string) => Promise<Requests> | Requests) => {
    if (!wanted(id)) return;
    for (const t of targets) {
      for (let round = 1; round <= options.repeat; round++) {
        const r = await prepare(t, t.inst.server.url);
        if (r.iterations === 0) break;
        const name = round === 1 ? id : `${id} #${round}`;
        await cool();
        process.stderr.write(`  ${name} on ${t.target}: ${r.iterations} at ${r.concurrency}…\n`);
        const [outcome] = await Promise.all([burst(r.iterations, r.concurrency, r.one, t.inst.server.cpuSeconds), r.beside?.()]);
        t.out[name] = outcome;
      }
    }
  };
  const patch = (t: Running, collection: string, body: unknown) => call(t.inst.server.url, t.inst.admin, 'PATCH', `/api/collections/${collection}`, body);
  const password = { body: { identity: 'users0@example.com', password: '1234567890' } };

  await run('auth-password high', (t, url) => ({ iterations: 250, concurrency: 250, one: () => send(url, 'POST', '/api/collections/users/auth-with-password', password) }));
  await run('auth-password small', (t, url) => ({ iterations: 250, concurrency: 10, one: () => send(url, 'POST', '/api/collections/users/auth-with-password', password) }));
  await run('auth-refresh high', (t, url) => ({ iterations: 1000, concurrency: 1000, one: () => send(url, 'POST', '/api/collections/users/auth-refresh', { token: t.user.token }) }));
  await run('auth-refresh medium', (t, url) => ({ iterations: 1000, concurrency: 100, one: () => send(url, 'POST', '/api/collections/users/auth-refresh', { token: t.user.token }) }));
  await run('view-user medium', (t, url) => ({ iterations: 1000, concurrency: 100, one: () => send(url, 'GET', `/api/collections/users/records/${t.user.id}`, { token: t.user.token }) }));
  await run('view-user high', (t, url) => ({ iterations: 1000, concurrency: 1000, one: () => send(url, 'GET', `/api/collections/users/records/${t.user.id}`, { token: t.user.token }) }));

  const posts = options.full ? POSTS_FULL : POSTS_QUICK;
  for (const col of posts) {
    for (const step of listSteps()) {
      await run(`${step.id} ${col}`, async (t, url) => {
        await patch(t, col, { listRule: step.rule, indexes: indexStatement(col, step.index) });
        const updates = step.updates ? await randomIds(url, t.inst.admin, col, step.updates) : [];
        return {
          iterations: step.iterations,
          concurrency: step.concurrency,
          one: () => send(url, 'GET', `/api/collections/${col}/records${step.query}`, { token: t.user.token }),
          beside: step.updates
            ? () => Promise.all(updates.map((rid) => send(url, 'PATCH', `/api/collections/${col}/records/${rid}`, { body: { title: `update${rid}` }, token: t.user.token })))
            : undefined,
        };
      });
    }
    for (const t of targets) await patch(t, col, { listRule: '', indexes: [] });
  }

  const deletes: Array<[string, string]> = [...posts.flatMap((c): Array<[string, string]> => [[c, ''], [c, "@request.auth.id != ''"]]), ['users', ''], ['organizations', '']];
  for (const [col, rule] of deletes) {
    await run(`delete ${col}${rule ? ' rule' : ''}`, async (t, url) => {
      await patch(t, col, { deleteRule: rule });
      const ids = await randomIds(url, t.inst.admin, col, 100);
      // A cascade may delete the signed-in user (and with it the token's validity): those run as the
      // superuser, under the same open rule.
      const token = col === 'users' || col === 'organizations' ? t.inst.admin : t.user.token;
      return { iterations: ids.length, concurrency: 10, one: (i) => send(url, 'DELETE', `/api/collections/${col}/records/${ids[i]}`, { token }) };
    });
  }
}

const fmt = (n: number, digits = 0) => n.toLocaleString('en', { maximumFractionDigits: digits, minimumFractionDigits: digits });

function cell(o: Outcome | undefined): string[] {
  if (!o) return ['', '', '', ''];
  const errors = o.errors > 0 ? ` (**${o.errors} failed**: ${Object.entries(o.failures).map(([s, f]) => `${s}×${f.count}`).join(', ')})` : '';
  return [`${fmt(o.completedMs, o.completedMs < 100 ? 1 : 0)}${errors}`, fmt(o.rps), `${fmt(o.p50Ms, 1)} / ${fmt(o.p99Ms, 1)}`, o.cpuUs === undefined ? '?' : fmt(o.cpuUs)];
}

function ratio(o: Outcome | undefined, published: number | undefined): string {
  if (!o || published === undefined) return '';
  const r = o.completedMs / published;
  return `${fmt(r, 2)}×`;
}

export async function runPocketBaseBench(args: string[]): Promise<void> {
  const options = parseArgs(args);
  const started = Date.now();
  const load = os.loadavg()[0];
  const targets: Running[] = [];
  const order: Target[] = [...options.engines, ...(options.pocketbaseBin ? (['pocketbase'] as const) : [])];
  try {
    // Every target is prepared (seeded or copied) before any is measured; they then idle while
    // another one answers.
    for (const target of order) {
      const out: Record<string, Outcome> = {};
      process.stderr.write(`${target}: preparing…\n`);
      const inst = await instance(target, options, out);
      targets.push({ target, inst, out, user: { id: '', token: '' } });
      targets.at(-1)!.user = await userToken(inst.server.url);
    }
    process.stderr.write(`measuring on ${order.join(', ')}…\n`);
    await scenarios(targets, options);
  } finally {
    for (const t of targets) await t.inst.close();
  }
  const results = new Map<Target, Record<string, Outcome>>(targets.map((t) => [t.target, t.out]));
  const pb = results.get('pocketbase');
  const ids = [...new Set([...results.values()].flatMap((r) => Object.keys(r)))];
  const against = pb ? 'PocketBase here' : 'PocketBase CAX11';
  const head = ['scenario', 'reqs / conc'];
  for (const e of options.engines) head.push(`${e} total ms`, `${e} req/s`, `${e} p50 / p99 ms`, `${e} CPU µs/req`, `${e} / ${against}`);
  if (pb) head.push('PocketBase (this machine) total ms', 'req/s', 'p50 / p99 ms', 'CPU µs/req');
  head.push('PocketBase CAX11 ms');
  const lines = [`| ${head.join(' | ')} |`, `| --- | --- |${' ---: |'.repeat(head.length - 2)}`];
  for (const id of ids) {
    const any = [...results.values()].map((r) => r[id]).find(Boolean)!;
    const row = [id, `${any.iterations} / ${any.concurrency}`];
    const published = PUBLISHED_CAX11_MS[scenarioOf(id)];
    const reference = pb ? pb[id]?.completedMs : published;
    for (const e of options.engines) row.push(...cell(results.get(e)![id]), ratio(results.get(e)![id], reference));
    if (pb) row.push(...cell(pb[id]));
    row.push(published === undefined ? '' : fmt(published, published < 100 ? 1 : 0));
    lines.push(`| ${row.join(' | ')} |`);
  }
  const cpus = os.cpus();
  const failed = [...results.values()].reduce((n, r) => n + Object.values(r).reduce((m, o) => m + o.errors, 0), 0);
  lines.push(
    '',
    `Each request on a new connection, as PocketBase's benchmark sends them; "total" is PocketBase's "Completed" (wall time of all the scenario's requests); ` +
      `CPU is the server process's per request (Cairn's or PocketBase's; not PostgreSQL's). Create scenarios were measured when the data was seeded (cached; --reseed measures them again). ` +
      (pb ? `Ratios are Cairn's total over PocketBase's on this machine, the scenario run on each target in turn. ` : `Ratios are against PocketBase's published CAX11 times. `) +
      `Failed requests: ${failed}. Machine: ${cpus.length} × ${cpus[0]?.model.trim() ?? '?'}, load average ${fmt(load, 1)} at the start, ${fmt(os.loadavg()[0], 1)} at the end; ${fmt((Date.now() - started) / 1000)} s.`,
  );
  process.stdout.write(`${lines.join('\n')}\n`);
}
