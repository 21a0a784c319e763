import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { Pool } from 'undici';
import { dropDatabaseFor, onPostgres } from '../helpers/postgres.ts';
import { spawnServer, type SpawnedServer } from '../helpers/process.ts';
import { startReceiver } from '../helpers/receiver.ts';
import { ADMIN_EMAIL, ADMIN_PASSWORD, request } from '../helpers/server.ts';
import { SseStream, subscribeRaw } from '../helpers/sse.ts';
import { waitFor } from '../helpers/wait.ts';

/**
 * Issue 22: a SIGTERM while keep-alive connections stream creates left `cairn serve` running (a
 * connection busy at the signal stayed open after its answer). Real processes, stopped at random
 * moments, again and again: every stop must end in exit 0 well within its bound, and every create
 * answered before must be there after the restart. Variants: a trigger whose receiver never answers
 * (attempts in flight at the signal), open realtime streams, and a SIGKILL now and then (the next
 * server starts on what a crash left; its own stop is checked like the others).
 *
 * Two lanes (data directories) run side by side, each a chain of servers: the server of one round
 * checks the previous round's writes, then takes the next signal. CAIRN_SHUTDOWN_STRESS_ROUNDS sets
 * the rounds per lane (default 10, 20 stops in all, to keep CI under 30 minutes; the issue's 50 iterations: 25).
 */
const ROUNDS = Number(process.env.CAIRN_SHUTDOWN_STRESS_ROUNDS ?? 10);
const LANES = 2;
const CONNECTIONS = 6;
// Generous, so that a machine busy with other work does not make a slow stop look like a hang: the
// grace is rarely used up here (test/http/shutdown.test.ts covers the forced close).
const SHUTDOWN_TIMEOUT_MS = 5000;
// The server's backstop exits 1 this long after the signal (src/cli/serve.ts): an exit 0 is a stop
// that finished within the bound.
const BOUND_MS = SHUTDOWN_TIMEOUT_MS + 5000;
// Only for a server that never exits: how long past the bound the test waits before it kills it.
const SLACK_MS = 10_000;

const ENV = {
  CAIRN_ADMIN_EMAIL: ADMIN_EMAIL,
  CAIRN_ADMIN_PASSWORD: ADMIN_PASSWORD,
  CAIRN_SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS),
  // Attempts held by the hanging receiver get half of it at shutdown (500 ms), then are interrupted.
  CAIRN_WEBHOOK_TIMEOUT_MS: '1000',
  // Attempts start at once, also while the creates saturate the server: in flight at the signal.
  CAIRN_WEBHOOK_MAX_DEFER_MS: '0',
  CAIRN_LOG_LEVEL: 'warn',
};

type Variant = 'plain' | 'webhook' | 'realtime';
const VARIANTS: Variant[] = ['plain', 'webhook', 'realtime'];
const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function adminToken(url: string): Promise<string> {
  const res = await request(url, 'POST', '/api/admins/auth-with-password', { body: { identity: ADMIN_EMAIL, password: ADMIN_PASSWORD } });
  assert.equal(res.status, 200, res.text);
  return res.body.token;
}

/** Ids of the records a round wrote, read back page by page. */
async function idsOfRound(url: string, token: string, collection: string, round: number): Promise<Set<string>> {
  const ids = new Set<string>();
  for (let page = 1; ; page++) {
    const res = await request(url, 'GET', `/api/collections/${collection}/records?filter=${encodeURIComponent(`round=${round}`)}&fields=id&perPage=500&page=${page}&skipTotal=1`, { token });
    assert.equal(res.status, 200, res.text);
    for (const item of res.body.items) ids.add(item.id);
    if (res.body.items.length < 500) return ids;
  }
}

/** Keep-alive connections creating records back to back until `stop`; the ids of those answered 200. */
function streamCreates(url: string, collection: string, round: number) {
  const pool = new Pool(url, { connections: CONNECTIONS, pipelining: 1 });
  const acknowledged: string[] = [];
  let stopped = false;
  const loops = Array.from({ length: CONNECTIONS }, async (_, lane) => {
    for (let n = 0; !stopped; n++) {
      try {
        const res = await pool.request({
          method: 'POST',
          path: `/api/collections/${collection}/records`,
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ text: `${lane}-${n}`, round }),
        });
        const text = await res.body.text();
        if (res.statusCode === 200) acknowledged.push(JSON.parse(text).id);
      } catch {
        // Refused or cut off by the stop: never acknowledged, so not looked for. Tried again a
        // little later (the connection is gone; a new one is refused once the server has stopped).
        await delay(5);
      }
    }
  });
  return {
    acknowledged,
    async stop() {
      stopped = true;
      await Promise.all(loops);
      await pool.destroy();
    },
  };
}

/** Waits for the exit, at most the bound and the slack (then kills, and the test fails). */
async function exitOf(server: SpawnedServer): Promise<{ code: number | null; ms: number }> {
  const started = Date.now();
  let timer: NodeJS.Timeout | undefined;
  const code = await Promise.race([server.exited, new Promise<'hung'>((resolve) => (timer = setTimeout(() => resolve('hung'), BOUND_MS + SLACK_MS)))]);
  clearTimeout(timer);
  if (code === 'hung') {
    await server.kill('SIGKILL');
    assert.fail(`cairn serve did not exit within ${BOUND_MS + SLACK_MS} ms of SIGTERM:\n${server.output().slice(-4000)}`);
  }
  return { code, ms: Date.now() - started };
}

interface Stats {
  stops: number;
  kills: number;
  acknowledged: number;
  slowestMs: number;
  /** Stops of the webhook variant with attempts in flight at the signal. */
  heldAttempts: number;
}

async function lane(index: number, stats: Stats): Promise<void> {
  const dir = mkdtempSync(path.join(tmpdir(), `cairn-stress-${index}-`));
  // Its own receiver, so that what it holds at a signal is this lane's.
  const receiver = await startReceiver();
  receiver.respond(() => 'hang');
  let server: SpawnedServer | undefined;
  try {
    server = await spawnServer(dir, ENV);
    let token = await adminToken(server.url);
    const fields = [
      { name: 'text', type: 'text' },
      { name: 'round', type: 'number' },
    ];
    const open = { createRule: '', listRule: '', viewRule: '' };
    for (const body of [
      { name: 'notes', fields, ...open },
      { name: 'hooked', fields, ...open, options: { triggers: [{ action: 'create', url: `${receiver.url}/hooked`, method: 'POST' }] } },
    ]) {
      const res: { status: number; text: string } = await request(server.url, 'POST', '/api/collections', { token, body });
      assert.equal(res.status, 200, res.text);
    }

    let previous: { round: number; collection: string; acknowledged: string[] } | undefined;
    for (let round = 0; round <= ROUNDS; round++) {
      if (round > 0) {
        server = await spawnServer(dir, ENV);
        token = await adminToken(server.url);
      }
      if (previous) {
        const stored = await idsOfRound(server.url, token, previous.collection, previous.round);
        const missing = previous.acknowledged.filter((id) => !stored.has(id));
        assert.deepEqual(missing, [], `lane ${index}, round ${previous.round}: creates answered 200 are missing after the restart`);
      }
      if (round === ROUNDS) break;

      const variant = VARIANTS[(round + index) % VARIANTS.length];
      // Every fifth round ends in a crash instead: the next server starts on what it left.
      const crash = round % 5 === 4;
      const collection = variant === 'webhook' ? 'hooked' : 'notes';
      const streams: SseStream[] = [];
      if (variant === 'realtime') {
        for (let i = 0; i < 3; i++) {
          const s = await SseStream.open(server.url);
          assert.equal((await subscribeRaw(server.url, s.clientId, ['notes'])).status, 204);
          streams.push(s);
        }
      }
      const load = streamCreates(server.url, collection, round);
      // A random moment of the stream: the signal finds requests at every stage.
      await delay(50 + Math.floor(Math.random() * 350));
      if (crash) {
        server.child.kill('SIGKILL');
        await server.exited;
        stats.kills++;
      } else {
        if (variant === 'webhook' && receiver.hanging > 0) stats.heldAttempts++;
        server.child.kill('SIGTERM');
        const { code, ms } = await exitOf(server);
        assert.equal(code, 0, `lane ${index}, round ${round} (${variant}): exit code ${code}\n${server.output().slice(-4000)}`);
        stats.stops++;
        stats.slowestMs = Math.max(stats.slowestMs, ms);
        // Realtime streams are ended by the stop (their last chunk sent), not cut by the process's death.
        await waitFor(() => streams.every((s) => s.ended), { what: 'the realtime streams to close' });
        for (const s of streams) assert.ok(s.completed, `lane ${index}, round ${round}: a realtime stream was not ended`);
      }
      await load.stop();
      for (const s of streams) s.close();
      stats.acknowledged += load.acknowledged.length;
      previous = { round, collection, acknowledged: load.acknowledged };
    }
    assert.equal(await server.kill('SIGTERM'), 0);
    server = undefined;
  } finally {
    await server?.kill('SIGKILL');
    await receiver.close();
    rmSync(dir, { recursive: true, force: true });
    if (onPostgres) await dropDatabaseFor(dir);
  }
}

test(`SIGTERM under keep-alive load, ${ROUNDS * LANES} times: every exit is 0 and bounded, every acknowledged create survives`, async () => {
  const stats: Stats = { stops: 0, kills: 0, acknowledged: 0, slowestMs: 0, heldAttempts: 0 };
  await Promise.all(Array.from({ length: LANES }, (_, i) => lane(i, stats)));
  // The figures, for whoever reads the run (no assertion on times: the machine may be busy).
  console.log(
    `# ${stats.stops} stops (slowest ${stats.slowestMs} ms; ${stats.heldAttempts} with webhook attempts in flight), ${stats.kills} crashes, ${stats.acknowledged} acknowledged creates checked`,
  );
  assert.ok(stats.acknowledged > 0, 'the load acknowledged creates');
  assert.ok(stats.heldAttempts > 0, 'some stops found webhook attempts in flight');
});
