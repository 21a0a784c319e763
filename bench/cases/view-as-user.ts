import type { BenchCase } from '../case.ts';
import { baselineView, createPosts, post, rememberCollection } from './posts.ts';

const NAME = 'bench_view_user';
const RECORDS = 1000;
const EMAIL = 'bench-user@example.com';
const PASSWORD = 'bench-user-password';

interface State {
  ids: string[];
  token: string;
}

/**
 * GET one record by id as a signed-in user: the view-by-id work plus authentication on every request
 * (bearer token, signature, expiry, database binding and the tokenKey revocation lookup). The
 * baseline serves the same SQL without checking anything, so the gap is what authentication costs.
 */
export const viewAsUserCase: BenchCase<State> = {
  name: 'view-as-user',
  description: `view a record by id with a user's bearer token (${RECORDS} records cycled)`,
  target: 0.5,

  async prepare(ctx) {
    const collection = await createPosts(ctx.cairn, NAME);
    const ids = await ctx.cairn.createRecords(NAME, RECORDS, post);
    ctx.copyToBaseline(NAME);
    rememberCollection(ctx.baseline, NAME, collection.id);
    const json = { 'content-type': 'application/json' };
    const registered = await fetch(`${ctx.cairn.url}/api/auth/register`, { method: 'POST', headers: json, body: JSON.stringify({ email: EMAIL, password: PASSWORD, passwordConfirm: PASSWORD }) });
    if (!registered.ok) throw new Error(`register answered ${registered.status}: ${await registered.text()}`);
    const login = await fetch(`${ctx.cairn.url}/api/auth/login`, { method: 'POST', headers: json, body: JSON.stringify({ email: EMAIL, password: PASSWORD }) });
    if (!login.ok) throw new Error(`login answered ${login.status}: ${await login.text()}`);
    return { ids, token: ((await login.json()) as { token: string }).token };
  },

  baseline(app, db) {
    baselineView(app, db, NAME);
  },

  request: ({ ids, token }) => ({
    method: 'GET',
    paths: ids.map((id) => `/api/collections/${NAME}/records/${id}`),
    headers: { authorization: `Bearer ${token}` },
    expectStatus: 200,
  }),
};
