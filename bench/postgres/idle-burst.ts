// A burst after a quiet spell, on PostgreSQL: 10 creates at once (each on a new HTTP connection) once
// the pool's idle timeout (30 s) has passed, on two servers side by side: one opening connections on
// demand (CAIRN_PG_POOL_MIN=0), one keeping its pool (the default). docs/postgres.md#kept-connections.
//   node --import tsx bench/postgres/idle-burst.ts          (BENCH_ROUNDS, 3 by default; ~35 s a round)
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { send } from '../pocketbase/client.ts';
import type { RunningServer } from '../lib/servers.ts';
import { ADMIN, fmt, ROOT, startPgCairn } from './run.ts';

const IDLE_MS = 32_000;
const BURST = 10;

async function burst(url: string): Promise<number> {
  const started = performance.now();
  const answers = await Promise.all(
    Array.from({ length: BURST }, (_, i) => send(url, 'POST', '/api/collections/notes/records', { body: { title: `note ${i}` } })),
  );
  const failed = answers.find((a) => a.status !== 200);
  if (failed) throw new Error(`a create answered ${failed.status}: ${failed.text}`);
  return performance.now() - started;
}

async function main(): Promise<void> {
  const rounds = Number(process.env.BENCH_ROUNDS ?? 3);
  const serverUrl = process.env.BENCH_POSTGRES || 'postgres://postgres@127.0.0.1:5432/postgres';
  const admin = new pg.Client({ connectionString: serverUrl });
  await admin.connect();
  const sides: Array<{ name: string; env: Record<string, string> }> = [
    { name: 'on demand', env: { CAIRN_PG_POOL_MIN: '0' } },
    { name: 'kept', env: {} },
  ];
  const started: Array<{ name: string; server: RunningServer; database: string; dir: string }> = [];
  try {
    for (const side of sides) {
      const database = `cairn_idle_${randomBytes(4).toString('hex')}`;
      await admin.query(`CREATE DATABASE "${database}"`);
      const url = new URL(serverUrl);
      url.pathname = `/${database}`;
      const dir = mkdtempSync(path.join(os.tmpdir(), 'cairn-idle-burst-'));
      const server = await startPgCairn(ROOT, dir, url.toString(), { ...side.env, CAIRN_LOG_LEVEL: 'warn', CAIRN_REQUEST_LOGS: 'off' });
      started.push({ name: side.name, server, database, dir });
      const login = await send(server.url, 'POST', '/api/admins/auth-with-password', { body: ADMIN });
      const token = (JSON.parse(login.text) as { token: string }).token;
      const created = await send(server.url, 'POST', '/api/collections', {
        token,
        body: { name: 'notes', fields: [{ name: 'title', type: 'text' }], createRule: '' },
      });
      if (created.status !== 200) throw new Error(`creating the collection answered ${created.status}: ${created.text}`);
      await burst(server.url); // the code paths are warm before any round
    }
    const times = new Map<string, number[]>(sides.map((s) => [s.name, []]));
    for (let round = 0; round < rounds; round++) {
      await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
      // Alternating which goes first, so neither always meets the other's leftovers.
      const order = round % 2 === 0 ? started : [...started].reverse();
      for (const s of order) times.get(s.name)!.push(await burst(s.server.url));
      process.stderr.write(`round ${round + 1}: ${started.map((s) => `${s.name} ${fmt(times.get(s.name)!.at(-1)!, 1)} ms`).join(', ')}\n`);
    }
    console.log(`${BURST} creates at once after ${IDLE_MS / 1000} s idle, ms per burst:`);
    for (const [name, list] of times) console.log(`  ${name.padEnd(10)} ${list.map((t) => fmt(t, 1)).join(', ')}`);
  } finally {
    for (const s of started) {
      await s.server.stop();
      rmSync(s.dir, { recursive: true, force: true });
      await admin.query(`DROP DATABASE IF EXISTS "${s.database}" WITH (FORCE)`).catch(() => undefined);
    }
    await admin.end();
  }
}

await main();
