import { createHmac, randomUUID, timingSafeEqual } from 'node:crypto';
import type { BenchCase, Target } from '../case.ts';
import { baselineView, collectionIdOf, createPosts, post, rememberCollection, signUp } from './posts.ts';

// Cases for what PocketBase's benchmark found Cairn slow at (issue 48), guarded in CI: a view on a
// fresh connection per request, a delete, an auth-refresh.

const FRESH = 'bench_view_fresh';

/** view-by-id with a new TCP connection for every request, as PocketBase's benchmark sends them:
 * the connection's set-up on the server is part of each request. */
export const viewFreshCase: BenchCase<string[]> = {
  name: 'view-fresh-connection',
  description: 'view a record by id, a new connection per request (1000 records cycled)',
  async prepare(ctx) {
    const collection = await createPosts(ctx.cairn, FRESH);
    const ids = await ctx.cairn.createRecords(FRESH, 1000, post);
    ctx.copyToBaseline(FRESH);
    rememberCollection(ctx.baseline, FRESH, collection.id);
    return ids;
  },
  baseline(app, db) {
    baselineView(app, db, FRESH);
  },
  request: (ids) => ({ method: 'GET', paths: ids.map((id) => `/api/collections/${FRESH}/records/${id}`), freshConnections: true, expectStatus: 200 }),
};

const DELETE = 'bench_delete';
// Each target uses up its own copy, one record per request, and must not run out within its warm-up
// and measured seconds: sized for 50,000 deletes a second (a fast CI machine's bare baseline did
// 28,000), at least 60,000. Written in one statement through the SQL console (through the API it
// would take minutes).
const DELETES_PER_SECOND_AT_MOST = 50_000;
const DELETE_RECORDS = Math.max(
  60_000,
  DELETES_PER_SECOND_AT_MOST * (Number(process.env.BENCH_WARMUP || 1) + Number(process.env.BENCH_DURATION || 5) + 1),
);

/** DELETE one record by id, each request another record (the ids are used up, never repeated). */
export const deleteCase: BenchCase<null> = {
  name: 'delete',
  description: `delete a record by id (DELETE, ${DELETE_RECORDS.toLocaleString('en')} records used up in order)`,
  async prepare(ctx) {
    const collection = await createPosts(ctx.cairn, DELETE);
    await ctx.cairn.admin('POST', '/api/sql', {
      query: `INSERT INTO ${DELETE} (id, created, updated, title, body, views, published)
        WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${DELETE_RECORDS})
        SELECT printf('d%014d', i), strftime('%Y-%m-%d %H:%M:%fZ', 'now'), strftime('%Y-%m-%d %H:%M:%fZ', 'now'), 'Post ' || i, '<p>Body</p>', i % 1000, i % 2 FROM n`,
    });
    ctx.copyToBaseline(DELETE);
    rememberCollection(ctx.baseline, DELETE, collection.id);
    return null;
  },
  baseline(app, db) {
    const remove = db.prepare(`DELETE FROM ${DELETE} WHERE id = ?`);
    app.delete<{ Params: { id: string } }>(`/api/collections/${DELETE}/records/:id`, async (req, reply) => {
      if (remove.run(req.params.id).changes === 0) return reply.status(404).send({ code: 404, message: 'Not found.', data: {} });
      return reply.status(204).send();
    });
  },
  request: (_state: null, _target: Target) => {
    let next = 0;
    return {
      method: 'DELETE',
      paths: [],
      nextPath: () => `/api/collections/${DELETE}/records/d${String((next++ % DELETE_RECORDS) + 1).padStart(14, '0')}`,
      expectStatus: 204,
    };
  },
};

const REFRESH_EMAIL = 'bench-refresh@example.com';

interface RefreshState {
  token: string;
}

interface UserRow {
  id: string;
  created: string;
  updated: string;
  email: string;
  emailVisibility: number;
  verified: number;
  name: string;
  avatar: string;
  role: string;
}

/**
 * POST /api/collections/users/auth-refresh with a user's token: what the issue bounds by a view as
 * that user plus signing. The baseline checks an HS256 signature (with a secret of its own, so the
 * outcome is ignored: the same work), reads the user's row, signs a new token and answers both.
 */
export const authRefreshCase: BenchCase<RefreshState> = {
  name: 'auth-refresh',
  description: "refresh a user's token (POST /api/collections/users/auth-refresh)",
  async prepare(ctx) {
    const user = await signUp(ctx.cairn, REFRESH_EMAIL);
    const users = await ctx.cairn.admin<{ id: string }>('GET', '/api/collections/users');
    ctx.copyToBaseline('users');
    rememberCollection(ctx.baseline, 'users', users.id);
    return { token: user.token };
  },
  baseline(app, db) {
    const collectionId = collectionIdOf(db, 'users');
    const secret = Buffer.from(randomUUID());
    const select = db.prepare('SELECT id, created, updated, email, emailVisibility, verified, name, avatar, role FROM users WHERE id = ?');
    const b64 = (v: object) => Buffer.from(JSON.stringify(v)).toString('base64url');
    app.post('/api/collections/users/auth-refresh', async (req, reply) => {
      const token = (req.headers.authorization ?? '').replace(/^Bearer\s+/i, '');
      const [head, payload, signature] = token.split('.');
      const expected = createHmac('sha256', secret).update(`${head}.${payload}`).digest();
      const given = Buffer.from(signature ?? '', 'base64url');
      void (given.length === expected.length && timingSafeEqual(given, expected));
      const claims = JSON.parse(Buffer.from(payload ?? '', 'base64url').toString('utf8')) as { sub?: string; id?: string };
      const row = select.get(claims.sub ?? claims.id) as UserRow | undefined;
      if (!row) return reply.status(401).send({ code: 401, message: 'Unauthorized.', data: {} });
      const now = Math.floor(Date.now() / 1000);
      const body = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64({ ...claims, iat: now, exp: now + 86400, jti: randomUUID() })}`;
      const fresh = `${body}.${createHmac('sha256', secret).update(body).digest('base64url')}`;
      return {
        token: fresh,
        record: {
          id: row.id,
          collectionId,
          collectionName: 'users',
          created: row.created,
          updated: row.updated,
          email: row.email,
          emailVisibility: row.emailVisibility === 1,
          verified: row.verified === 1,
          name: row.name,
          avatar: row.avatar,
          role: row.role,
        },
      };
    });
  },
  request: ({ token }) => ({ method: 'POST', paths: ['/api/collections/users/auth-refresh'], headers: { authorization: `Bearer ${token}` }, expectStatus: 200 }),
};
