import type { BenchCase } from '../case.ts';
import { collectionIdOf, POST_FIELDS, post, type PostRow, postJson, rememberCollection, signUp } from './posts.ts';

/**
 * What an owner rule costs: pairs of cases answering the same records to the same signed-in user (a
 * bearer token on both sides), one through the rule `owner = @request.auth.id`, one through an open
 * rule. For lists the open side asks for the same records with `filter=owner="<id>"`: one in
 * `LIST_SHARE` records belongs to the caller. Cairn indexes the owner field of the rule with
 * `created` by itself; the open side gets the same index explicitly.
 */
const OWNER_RULE = 'owner = @request.auth.id';
const LIST_RECORDS = 10_000;
const LIST_SHARE = 10;
const LIST_PAGES = 20;
const VIEW_RECORDS = 1000;

interface State {
  ids: string[];
  token: string;
  owner: string;
}

type OwnedRow = PostRow & { owner: string };

function ownedCase(kind: 'list' | 'view', withRule: boolean, ownerRule = OWNER_RULE, variant = 'owner'): BenchCase<State> {
  const name = `bench_${kind}_${withRule ? `${variant.replace(/-/g, '_')}_rule` : 'owned'}`;
  const records = kind === 'list' ? LIST_RECORDS : VIEW_RECORDS;
  const rule = withRule ? ownerRule : '';
  const what =
    kind === 'list'
      ? `list 30 of the caller's ${(LIST_RECORDS / LIST_SHARE).toLocaleString('en')} among ${LIST_RECORDS.toLocaleString('en')} records (sort=-created, totals)`
      : `view a record by id as its owner (${VIEW_RECORDS} records cycled)`;
  return {
    name: `${kind}-${withRule ? `${variant}-rule` : 'as-owner'}`,
    description: `${what}, ${withRule ? `rule \`${ownerRule}\`` : kind === 'list' ? 'open rule, filter on owner' : 'open rule'}`,
    target: 0.45,

    async prepare(ctx) {
      const user = await signUp(ctx.cairn, `${name}@example.com`);
      const collection = await ctx.cairn.admin<{ id: string }>('POST', '/api/collections', {
        name,
        type: 'base',
        fields: [...POST_FIELDS, { name: 'owner', type: 'relation', options: { toCollection: 'users' } }],
        indexes: withRule ? [] : [`CREATE INDEX idx_${name}_owner ON ${name} (owner, created)`],
        listRule: rule,
        viewRule: rule,
      });
      const share = kind === 'list' ? LIST_SHARE : 1;
      const ids = await ctx.cairn.createRecords(name, records, (i) => ({ ...post(i), owner: i % share === 0 ? user.id : '' }));
      ctx.copyToBaseline(name);
      rememberCollection(ctx.baseline, name, collection.id);
      ctx.baseline.prepare('INSERT OR REPLACE INTO bench_collections (name, id) VALUES (?, ?)').run(`${name}:owner`, user.id);
      return { ids, token: user.token, owner: user.id };
    },

    baseline(app, db) {
      const collectionId = collectionIdOf(db, name);
      const owner = collectionIdOf(db, `${name}:owner`);
      const json = (r: OwnedRow) => ({ ...postJson(r, collectionId, name), owner: r.owner });
      // The statements Cairn runs; lists have the owner condition from the rule or from the filter.
      const where = 'WHERE t0.owner = ?';
      const params = [owner];
      if (kind === 'view') {
        const ownerCheck = withRule ? ' AND t0.owner = ?' : '';
        const select = db.prepare(`SELECT id, created, updated, title, body, views, published, owner FROM ${name} t0 WHERE t0.id = ?${ownerCheck}`);
        app.get<{ Params: { id: string } }>(`/api/collections/${name}/records/:id`, async (req, reply) => {
          const row = select.get(req.params.id, ...(withRule ? params : [])) as OwnedRow | undefined;
          if (!row) return reply.status(404).send({ code: 404, message: 'Not found.', data: {} });
          return json(row);
        });
        return;
      }
      const page = db.prepare(`SELECT id, created, updated, title, body, views, published, owner FROM ${name} t0 ${where} ORDER BY t0.created DESC, t0.rowid LIMIT ? OFFSET ?`);
      const count = db.prepare(`SELECT COUNT(*) AS n FROM ${name} t0 ${where}`);
      app.get<{ Querystring: { page?: string; perPage?: string } }>(`/api/collections/${name}/records`, async (req) => {
        const pageNo = Math.max(1, Number(req.query.page) || 1);
        const perPage = Math.min(500, Number(req.query.perPage) || 30);
        const rows = page.all(...params, perPage, (pageNo - 1) * perPage) as OwnedRow[];
        const totalItems = (count.get(...params) as { n: number }).n;
        return { page: pageNo, perPage, totalItems, totalPages: Math.ceil(totalItems / perPage), items: rows.map(json) };
      });
    },

    request: ({ ids, token, owner }) => ({
      method: 'GET',
      paths:
        kind === 'list'
          ? Array.from(
              { length: LIST_PAGES },
              (_, i) => `/api/collections/${name}/records?page=${i + 1}&perPage=30&sort=-created${withRule ? '' : `&filter=${encodeURIComponent(`owner="${owner}"`)}`}`,
            )
          : ids.map((id) => `/api/collections/${name}/records/${id}`),
      headers: { authorization: `Bearer ${token}` },
      expectStatus: 200,
    }),
  };
}

export const viewAsOwnerCase = ownedCase('view', false);
export const viewOwnerRuleCase = ownedCase('view', true);
export const listAsOwnerCase = ownedCase('list', false);
export const listOwnerRuleCase = ownedCase('list', true);
/** The owner rule written through the relation's id (`owner.id = …`, PocketBase's benchmark writes
 * it so): compiled to the same condition on the column, so it must cost what list-owner-rule costs. */
export const listOwnerIdRuleCase = ownedCase('list', true, 'owner.id = @request.auth.id', 'owner-id');
