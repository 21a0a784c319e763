import type { BenchCase, CairnClient, SoloCase } from '../case.ts';
import { round } from '../lib/load.ts';
import { baselineView, createPosts, post, rememberCollection } from './posts.ts';

/**
 * The administrator's two roads (API contract §17): PocketBase v0.22's `/api/admins` with `admin`
 * tokens (SDK 0.21) and v0.23's `_superusers` with `auth` tokens (SDK 0.23+). Both end in the same
 * account check, so the 0.23 road should cost what the 0.22 one does: its sign-in within 5 %, a view
 * with its token within 3 %. Each 0.23 case is measured against its 0.22 twin in shared rounds.
 */

const VIEWS = 'bench_view_admin';
const RECORDS = 1000;
const EMAIL = 'bench-superuser@example.com';
const PASSWORD = 'bench-superuser-password';

/** The administrator the cases sign in as; made once, by whichever case prepares first. */
let account: Promise<void> | undefined;
function ensureAccount(cairn: CairnClient): Promise<void> {
  account ??= cairn.admin('POST', '/api/admins', { email: EMAIL, password: PASSWORD, passwordConfirm: PASSWORD }).then(() => undefined);
  return account;
}

async function signIn(url: string, path: string): Promise<string> {
  const res = await fetch(url + path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ identity: EMAIL, password: PASSWORD }) });
  if (!res.ok) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
  return ((await res.json()) as { token: string }).token;
}

let records: Promise<string[]> | undefined;

interface ViewState {
  ids: string[];
  token: string;
}

function viewCase(name: string, token: 'admin' | 'superuser', description: string): BenchCase<ViewState> {
  return {
    name,
    description,
    ...(token === 'superuser' ? { relativeTo: { name: 'view-as-admin', target: 0.97 } } : { target: 0.5 }),

    async prepare(ctx) {
      await ensureAccount(ctx.cairn);
      // Both cases read the same thousand records, made by whichever prepares first.
      records ??= (async () => {
        const collection = await createPosts(ctx.cairn, VIEWS);
        const ids = await ctx.cairn.createRecords(VIEWS, RECORDS, post);
        ctx.copyToBaseline(VIEWS);
        rememberCollection(ctx.baseline, VIEWS, collection.id);
        return ids;
      })();
      const ids = await records;
      const path = token === 'admin' ? '/api/admins/auth-with-password' : '/api/collections/_superusers/auth-with-password';
      return { ids, token: await signIn(ctx.cairn.url, path) };
    },

    baseline(app, db) {
      if (app.hasRoute({ method: 'GET', url: `/api/collections/${VIEWS}/records/:id` })) return;
      baselineView(app, db, VIEWS);
    },

    request: ({ ids, token }) => ({ method: 'GET', paths: ids.map((id) => `/api/collections/${VIEWS}/records/${id}`), headers: { authorization: token }, expectStatus: 200 }),
  };
}

export const viewAsAdminCase = viewCase('view-as-admin', 'admin', `view a record by id with a 0.22 administrator token (${RECORDS} records cycled)`);
export const viewAsSuperuserCase = viewCase('view-as-superuser', 'superuser', `view a record by id with a 0.23 superuser token (${RECORDS} records cycled)`);

interface LoginRounds {
  requests: number;
  seconds: number;
  cpuSeconds: number;
}

function fmt(n: number, digits = 0): string {
  return n.toLocaleString('en', { maximumFractionDigits: digits, minimumFractionDigits: digits });
}

/**
 * Superuser sign-in through PocketBase 0.23 (`_superusers/auth-with-password`) against the
 * administrator sign-in through 0.22 (`/api/admins/auth-with-password`), on Cairn alone, in
 * alternating rounds (A B B A …) so that load from elsewhere on the machine hits both alike. A
 * sign-in is almost all argon2 verification on libuv's pool: rounds of a few seconds, since at 50
 * connections a busy machine answers the first sign-ins of a round only after a second or more.
 */
export const loginSuperuserCase: SoloCase<undefined> = {
  name: 'login-superuser',
  description: 'superuser sign-in (0.23, _superusers) against administrator sign-in (0.22, /api/admins), alternating rounds',

  async prepare(ctx) {
    await ensureAccount(ctx.cairn);
    return undefined;
  },

  async measure(_state, { cairn, load }) {
    const seconds = Math.max(3, load.duration / 2);
    const target = (path: string) => ({
      url: cairn.url,
      request: { method: 'POST' as const, paths: [path], body: { identity: EMAIL, password: PASSWORD }, expectStatus: 200 },
      cpuSeconds: cairn.cpuSeconds,
    });
    const targets = { v022: target('/api/admins/auth-with-password'), v023: target('/api/collections/_superusers/auth-with-password') };
    const totals: Record<keyof typeof targets, LoginRounds> = { v022: { requests: 0, seconds: 0, cpuSeconds: 0 }, v023: { requests: 0, seconds: 0, cpuSeconds: 0 } };
    for (const t of Object.values(targets)) await round(t, load.connections, 1, 0);
    for (let i = 0; i < 4; i++) {
      for (const key of i % 2 === 0 ? (['v022', 'v023'] as const) : (['v023', 'v022'] as const)) {
        const r = await round(targets[key], load.connections, seconds, 0);
        if (r.failures > 0) throw new Error(`login-superuser: ${r.failures} unexpected answers (${JSON.stringify(r.statuses)})`);
        totals[key].requests += r.requests;
        totals[key].seconds += r.seconds;
        totals[key].cpuSeconds += r.cpuSeconds ?? NaN;
      }
    }
    const rate = (t: LoginRounds) => t.requests / t.seconds;
    const cpuUs = (t: LoginRounds) => (t.cpuSeconds / t.requests) * 1e6;
    const ratio = rate(totals.v023) / rate(totals.v022);
    return [
      `login-superuser: ${fmt(rate(totals.v023), 1)} superuser sign-ins/s (0.23) against ${fmt(rate(totals.v022), 1)} administrator sign-ins/s (0.22), ${load.connections} connections, ` +
        `4 alternating rounds of ${fmt(seconds, 1)} s each: ${fmt(ratio * 100)}% (target ≥ 95%: ${ratio >= 0.95 ? 'met' : '**below**'}); ` +
        `CPU µs/sign-in ${fmt(cpuUs(totals.v022))} (0.22) → ${fmt(cpuUs(totals.v023))} (0.23).`,
    ];
  },
};
