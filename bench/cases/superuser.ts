import { verify } from '@node-rs/argon2';
import { hashPassword } from '../../src/auth/passwords.ts';
import type { BenchCase, CairnClient } from '../case.ts';
import { collectionIdOf, createPosts, post, type PostRow, postJson, rememberCollection } from './posts.ts';

/**
 * The administrator's two roads (API contract §17): PocketBase v0.22's `/api/admins` with `admin`
 * tokens (SDK 0.21) and v0.23's `_superusers` with `auth` tokens (SDK 0.23+). Both end in the same
 * account check, so the 0.23 road should cost what the 0.22 one does: its sign-in within 5 %, a view
 * with its token within 3 %. Each 0.23 case is measured relative to its 0.22 twin, in shared rounds.
 */

const VIEWS = 'bench_view_admin';
const RECORDS = 1000;
const EMAIL = 'bench-superuser@example.com';
const PASSWORD = 'bench-superuser-password';

/** A second administrator the login cases sign in as; made once, for whichever case prepares first. */
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
      const collectionId = collectionIdOf(db, VIEWS);
      const select = db.prepare(`SELECT id, created, updated, title, body, views, published FROM ${VIEWS} WHERE id = ?`);
      app.get<{ Params: { id: string } }>(`/api/collections/${VIEWS}/records/:id`, async (req, reply) => {
        const row = select.get(req.params.id) as PostRow | undefined;
        if (!row) return reply.status(404).send({ code: 404, message: 'Not found.', data: {} });
        return postJson(row, collectionId, VIEWS);
      });
    },

    request: ({ ids, token }) => ({ method: 'GET', paths: ids.map((id) => `/api/collections/${VIEWS}/records/${id}`), headers: { authorization: token }, expectStatus: 200 }),
  };
}

export const viewAsAdminCase = viewCase('view-as-admin', 'admin', `view a record by id with a 0.22 administrator token (${RECORDS} records cycled)`);
export const viewAsSuperuserCase = viewCase('view-as-superuser', 'superuser', `view a record by id with a 0.23 superuser token (${RECORDS} records cycled)`);

interface LoginState {
  hash: string;
}

function loginCase(name: string, path: string, description: string, relativeTo?: BenchCase['relativeTo']): BenchCase<LoginState> {
  return {
    name,
    description,
    ...(relativeTo ? { relativeTo } : { target: 0.8 }),

    async prepare(ctx) {
      await ensureAccount(ctx.cairn);
      // A hash made by Cairn's own function: the same argon2 parameters (so the same cost) as the account's.
      const hash = await hashPassword(PASSWORD);
      ctx.baseline.exec('CREATE TABLE IF NOT EXISTS bench_login (hash TEXT NOT NULL)');
      ctx.baseline.prepare('DELETE FROM bench_login').run();
      ctx.baseline.prepare('INSERT INTO bench_login (hash) VALUES (?)').run(hash);
      return { hash };
    },

    // A bare sign-in: read the hash, verify the password with @node-rs/argon2 (off the event loop, as
    // Cairn does), answer a token-shaped string.
    baseline(app, db) {
      const select = db.prepare('SELECT hash FROM bench_login');
      app.post(path, async (req, reply) => {
        const { password } = req.body as { password: string };
        const row = select.get() as { hash: string } | undefined;
        if (!row || !(await verify(row.hash, password))) return reply.status(401).send({ code: 401, message: 'Invalid credentials.', data: {} });
        return { token: 'x.y.z', record: { id: 'x', email: EMAIL } };
      });
    },

    request: () => ({ method: 'POST', paths: [path], body: { identity: EMAIL, password: PASSWORD }, expectStatus: 200 }),
  };
}

export const loginAdminCase = loginCase('login-admin', '/api/admins/auth-with-password', 'administrator sign-in through PocketBase 0.22 (/api/admins/auth-with-password)');
export const loginSuperuserCase = loginCase('login-superuser', '/api/collections/_superusers/auth-with-password', 'superuser sign-in through PocketBase 0.23 (_superusers/auth-with-password)', {
  name: 'login-admin',
  target: 0.95,
});
