// CPU per view by id, measured in-process and independent of the load generator: Cairn (or the bare
// baseline) serves in this process, a client in a child process sends the requests over loopback
// with keep-alive connections, and this process's CPU time (every thread: the SQLite background
// thread included) is read around the loop. Meant to compare versions (bisecting, trimming) where
// the HTTP bench's figures move with the machine's load.
//
// Usage: node --import tsx bench/view-cost.ts [--root DIR] [--target cairn|baseline] [--requests N]
//   [--connections C] [--repeat R] [--log-level L] [--hooks DIR] [--token] [--env CAIRN_X=v]… >/dev/null
// --root runs the Cairn of another checkout (a `git worktree add` of an old commit): the script only
// uses what every version since the bench's first commit has (loadConfig, buildApp or Host,
// services.admins, the HTTP API). Results go to stderr (Cairn's info log goes to stdout, as in the
// bench, whose output is discarded). --token views with a user's bearer token (view-as-user).
import { fork } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { post, postsCollection } from './cases/posts.ts';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const { values } = parseArgs({
  options: {
    root: { type: 'string', default: path.resolve(HERE, '..') },
    target: { type: 'string', default: 'cairn' },
    requests: { type: 'string', default: '20000' },
    connections: { type: 'string', default: '50' },
    repeat: { type: 'string', default: '5' },
    'log-level': { type: 'string', default: 'info' },
    hooks: { type: 'string', default: 'off' },
    token: { type: 'boolean', default: false },
    env: { type: 'string', multiple: true, default: [] },
    client: { type: 'boolean', default: false },
  },
});

const RECORDS = 1000;
const NAME = 'bench_view';

// ---- the client (a child process: its CPU is not counted) ----
if (values.client) {
  const http = await import('node:http');
  process.on('message', (msg: { url: string; paths: string[]; requests: number; connections: number; token?: string }) => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: msg.connections });
    const { hostname, port } = new URL(msg.url);
    let sent = 0;
    let done = 0;
    let failed = 0;
    const headers = msg.token ? { authorization: msg.token } : {};
    const one = (): void => {
      if (sent >= msg.requests) return;
      const p = msg.paths[sent++ % msg.paths.length];
      http
        .get({ hostname, port, path: p, agent, headers }, (res) => {
          if (res.statusCode !== 200) failed++;
          res.resume();
          res.on('end', () => {
            if (++done === msg.requests) process.send!({ failed });
            else one();
          });
        })
        .on('error', (err) => {
          console.error(err);
          process.exit(1);
        });
    };
    for (let i = 0; i < msg.connections; i++) one();
  });
} else {
  await main();
}


async function json(url: string, method: string, body?: unknown, token?: string): Promise<any> {
  const headers: Record<string, string> = {};
  if (token) headers.authorization = token;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const res = await fetch(url, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${url}: ${res.status} ${text}`);
  return text === '' ? undefined : JSON.parse(text);
}

interface Server {
  url: string;
  paths: string[];
  token?: string;
  close(): Promise<void>;
}

async function startCairn(root: string, dir: string): Promise<Server> {
  const src = (p: string) => pathToFileURL(path.join(root, 'src', p)).href;
  const { loadConfig } = await import(src('config.ts'));
  const config = loadConfig(
    { dir, port: 0, host: '127.0.0.1' },
    { CAIRN_LOG_LEVEL: values['log-level'], CAIRN_RATE_LIMIT: 'off', CAIRN_HOOKS_DIR: values.hooks, NODE_ENV: 'production', ...Object.fromEntries(values.env.map((kv) => kv.split('='))) },
  );
  let services: any;
  let port: number;
  let close: () => Promise<void>;
  if (existsSync(path.join(root, 'src/http/host.ts'))) {
    const { Host } = await import(src('http/host.ts'));
    const host = await Host.start(config);
    services = host.services;
    port = host.port;
    close = () => host.close();
  } else {
    const { buildApp } = await import(src('app.ts'));
    const built = await buildApp(config);
    await built.app.listen({ host: '127.0.0.1', port: 0 });
    services = built.services;
    port = (built.app.server.address() as { port: number }).port;
    close = () => built.app.close();
  }
  const url = `http://127.0.0.1:${port}`;
  await services.admins.create({ email: 'bench@example.com', password: 'bench-admin-password' });
  const admin = (await json(`${url}/api/admins/auth-with-password`, 'POST', { identity: 'bench@example.com', password: 'bench-admin-password' })).token;
  await json(`${url}/api/collections`, 'POST', postsCollection(NAME), admin);
  const ids: string[] = [];
  for (let i = 0; i < RECORDS; i++) ids.push((await json(`${url}/api/collections/${NAME}/records`, 'POST', post(i), admin)).id);
  let token: string | undefined;
  if (values.token) {
    // A user of the default `users` collection, signed in: view-as-user's caller.
    await json(`${url}/api/collections/users/records`, 'POST', { email: 'reader@example.com', password: 'reader-password-1', passwordConfirm: 'reader-password-1' }, admin);
    token = (await json(`${url}/api/collections/users/auth-with-password`, 'POST', { identity: 'reader@example.com', password: 'reader-password-1' })).token;
  }
  return { url, paths: ids.map((id) => `/api/collections/${NAME}/records/${id}`), token, close };
}

/** The bare baseline of bench/baseline.ts: Fastify and better-sqlite3, the same SELECT, JSON by hand. */
async function startBaseline(dir: string): Promise<Server> {
  const { default: BetterSqlite3 } = await import('better-sqlite3');
  const { default: Fastify } = await import('fastify');
  const { PRAGMAS } = await import('../src/storage/sqlite/driver.ts');
  const db = new BetterSqlite3(path.join(dir, 'baseline.db'));
  for (const pragma of PRAGMAS) db.pragma(pragma);
  db.exec(`CREATE TABLE ${NAME} (id TEXT PRIMARY KEY NOT NULL, created TEXT NOT NULL, updated TEXT NOT NULL, title TEXT NOT NULL DEFAULT '', body TEXT NOT NULL DEFAULT '', views REAL NOT NULL DEFAULT 0, published INTEGER NOT NULL DEFAULT 0)`);
  const insert = db.prepare(`INSERT INTO ${NAME} VALUES (?, ?, ?, ?, ?, ?, ?)`);
  const ids: string[] = [];
  db.transaction(() => {
    for (let i = 0; i < RECORDS; i++) {
      const id = `r${String(i).padStart(14, '0')}`;
      const p = post(i);
      const now = new Date().toISOString().replace('T', ' ');
      insert.run(id, now, now, p.title, p.body, p.views, p.published ? 1 : 0);
      ids.push(id);
    }
  })();
  const select = db.prepare(`SELECT id, created, updated, title, body, views, published FROM ${NAME} WHERE id = ?`);
  const app = Fastify({ logger: false });
  app.get<{ Params: { id: string } }>(`/api/collections/${NAME}/records/:id`, async (req, reply) => {
    const row = select.get(req.params.id) as any;
    if (!row) return reply.status(404).send({ code: 404, message: 'Not found.', data: {} });
    return { id: row.id, collectionId: 'pbc_0000000000', collectionName: NAME, created: row.created, updated: row.updated, title: row.title, body: row.body, views: row.views, published: row.published === 1 };
  });
  await app.listen({ host: '127.0.0.1', port: 0 });
  const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  return { url, paths: ids.map((id) => `/api/collections/${NAME}/records/${id}`), close: async () => {
    await app.close();
    db.close();
  } };
}

/** CPU ticks (1/100 s) by thread name, on Linux: the main thread against the SQLite background thread, libuv's pool, GC helpers. */
function threadTicks(): Map<string, number> {
  const ticks = new Map<string, number>();
  try {
    for (const tid of readdirSync('/proc/self/task')) {
      const stat = readFileSync(`/proc/self/task/${tid}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const name = tid === String(process.pid) ? 'main' : readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim();
      ticks.set(name, (ticks.get(name) ?? 0) + Number(fields[11]) + Number(fields[12]));
    }
  } catch {
    // Not Linux: no breakdown.
  }
  return ticks;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), 'view-cost-'));
  const server = values.target === 'baseline' ? await startBaseline(dir) : await startCairn(path.resolve(values.root), dir);
  const client = fork(fileURLToPath(import.meta.url), ['--client'], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const run = (requests: number) =>
    new Promise<void>((resolve, reject) => {
      client.once('message', (m: { failed: number }) => (m.failed ? reject(new Error(`${m.failed} requests failed`)) : resolve()));
      client.send({ url: server.url, paths: server.paths, requests, connections: Number(values.connections), token: server.token });
    });
  const requests = Number(values.requests);
  await run(requests); // warm-up: JIT, caches, connections
  const perRequest: number[] = [];
  const ticksBefore = threadTicks();
  for (let i = 0; i < Number(values.repeat); i++) {
    global.gc?.();
    const before = process.cpuUsage();
    await run(requests);
    const used = process.cpuUsage(before);
    perRequest.push((used.user + used.system) / requests);
  }
  const ticksAfter = threadTicks();
  const measured = requests * Number(values.repeat);
  const byThread = [...ticksAfter]
    .map(([name, t]) => [name, ((t - (ticksBefore.get(name) ?? 0)) * 10_000) / measured] as const)
    .filter(([, us]) => us >= 0.1)
    .sort((a, b) => b[1] - a[1])
    .map(([name, us]) => `${name} ${us.toFixed(1)}`)
    .join(', ');
  client.kill();
  await server.close();
  rmSync(dir, { recursive: true, force: true });
  const sorted = [...perRequest].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)];
  process.stderr.write(
    `${values.target}${values.target === 'cairn' ? ` ${values.root}` : ''}: CPU µs/view median ${median.toFixed(1)}, min ${sorted[0].toFixed(1)} (${perRequest.map((x) => x.toFixed(1)).join(', ')}); by thread: ${byThread}\n`,
  );
  process.exit(0);
}
