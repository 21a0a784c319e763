import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { hashPassword } from '../../src/auth/passwords.ts';
import type { SoloCase } from '../case.ts';
import { round } from '../lib/load.ts';
import { createPosts, post } from './posts.ts';

const VIEWS = 'bench_login_view';
const EMAIL = 'bench-login@example.com';
const PASSWORD = 'bench-login-password';
// Cairn's logins per second against the bare verification loop's (issue 22, point 5).
const TARGET = 0.8;
// The view load that runs beside the login storm: a modest fixed rate, so its p99 shows the event
// loop's responsiveness rather than its own queueing.
const VIEW_CONNECTIONS = 10;
const VIEW_RATE = 500;

// The bare loop: @node-rs/argon2's async verify of the same hash (so the same parameters, which the
// hash carries), as many in flight as the bench has connections, for the given seconds; prints
// verifications per second. Its own process with the bench's environment (UV_THREADPOOL_SIZE alike).
const LOOP = `
const { verify } = require('@node-rs/argon2');
const [hash, password, seconds, concurrency] = process.argv.slice(1);
let done = 0;
const end = Date.now() + Number(seconds) * 1000;
const worker = async () => { while (Date.now() < end) { if (!(await verify(hash, password))) throw new Error('wrong'); done++; } };
const started = Date.now();
Promise.all(Array.from({ length: Number(concurrency) }, worker)).then(() => process.stdout.write(String(done / ((Date.now() - started) / 1000))));
`;

async function bareVerifyRate(hash: string, seconds: number, concurrency: number): Promise<number> {
  const child = spawn(process.execPath, ['-e', LOOP, hash, PASSWORD, String(seconds), String(concurrency)], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout!.on('data', (d) => (out += d));
  const [code] = await once(child, 'exit');
  if (code !== 0) throw new Error(`the argon2 loop exited with ${code}`);
  return Number(out);
}

interface State {
  hash: string;
  viewPaths: string[];
}

function fmt(n: number, digits = 0): string {
  return n.toLocaleString('en', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

/**
 * Password sign-in (`POST /api/collections/users/auth-with-password`) at saturation, against a bare
 * loop of argon2 verifications of the same hash on the same machine: the verification is almost all
 * of a login's cost, so Cairn should reach most of that rate. Then view-by-id at a fixed rate, alone
 * and while the login storm runs: argon2 runs on libuv's thread pool, so the event loop should keep
 * answering (its p99 only pays for sharing the CPU). Rate limiting is off in the bench's server.
 */
export const loginCase: SoloCase<State> = {
  name: 'login',
  description: 'password sign-in against a bare argon2 verification loop; view-by-id p99 during a login storm',

  async prepare(ctx) {
    const json = { 'content-type': 'application/json' };
    const registered = await fetch(`${ctx.cairn.url}/api/collections/users/records`, {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ email: EMAIL, password: PASSWORD, passwordConfirm: PASSWORD }),
    });
    if (!registered.ok) throw new Error(`creating the user answered ${registered.status}: ${await registered.text()}`);
    await createPosts(ctx.cairn, VIEWS);
    const ids = await ctx.cairn.createRecords(VIEWS, 1000, post);
    // A hash made by Cairn's own function: the same parameters (and so the same cost) as the user's.
    const passwordHash = await hashPassword(PASSWORD);
    return { hash: passwordHash, viewPaths: ids.map((id) => `/api/collections/${VIEWS}/records/${id}`) };
  },

  async measure(state, { cairn, load }) {
    const seconds = Math.max(2, load.duration);
    const login = { url: cairn.url, request: { method: 'POST' as const, paths: ['/api/collections/users/auth-with-password'], body: { identity: EMAIL, password: PASSWORD }, expectStatus: 200 }, cpuSeconds: cairn.cpuSeconds };
    const view = { url: cairn.url, request: { method: 'GET' as const, paths: state.viewPaths, expectStatus: 200 } };
    // Warm-up, then bare loop and Cairn alternated twice (bare, Cairn, Cairn, bare).
    await round(login, load.connections, 1, 0);
    const half = seconds / 2;
    const bare: number[] = [];
    const logins: number[] = [];
    const loginRound = async () => {
      const r = await round(login, load.connections, half, 0);
      if (r.failures > 0) throw new Error(`login: ${r.failures} unexpected answers (${JSON.stringify(r.statuses)})`);
      logins.push(r.requests / r.seconds);
    };
    bare.push(await bareVerifyRate(state.hash, half, load.connections));
    await loginRound();
    await loginRound();
    bare.push(await bareVerifyRate(state.hash, half, load.connections));
    const bareRate = bare.reduce((a, b) => a + b, 0) / bare.length;
    const loginRate = logins.reduce((a, b) => a + b, 0) / logins.length;

    const alone = await round(view, VIEW_CONNECTIONS, seconds, VIEW_RATE);
    const [during, storm] = await Promise.all([round(view, VIEW_CONNECTIONS, seconds, VIEW_RATE), round(login, load.connections, seconds, 0)]);
    if (alone.failures + during.failures + storm.failures > 0) throw new Error('login: unexpected answers while measuring view-by-id during the storm');
    const ratio = loginRate / bareRate;
    return [
      `login: ${fmt(loginRate, 1)} logins/s (${load.connections} connections) against ${fmt(bareRate, 1)} bare argon2 verifications/s (${load.connections} in flight, same hash) on this machine: ` +
        `${fmt(ratio * 100)}% (target ≥ ${fmt(TARGET * 100)}%: ${ratio >= TARGET ? 'met' : '**below**'}); UV_THREADPOOL_SIZE ${process.env.UV_THREADPOOL_SIZE ?? '4 (default)'}.`,
      `login: view-by-id at ${VIEW_RATE} requests/s over ${VIEW_CONNECTIONS} connections, p99 ${fmt(alone.p99)} ms alone and ${fmt(during.p99)} ms during a login storm (${fmt(storm.requests / storm.seconds, 1)} logins/s meanwhile).`,
    ];
  },
};
