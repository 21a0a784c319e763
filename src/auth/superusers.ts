import type { SuperuserIps } from './superuser-ips.ts';
import { SUPERUSERS_COLLECTION, SUPERUSERS_ID, SUPERUSERS_NAME } from '../collections/superusers.ts';
import type { RecordJson } from '../records/serialize.ts';
import type { AuthMethod } from './mfa.ts';
import type { SignInHook } from './record-auth.ts';
import type { RequestContext } from '../context.ts';
import { badRequest, forbidden, notFound, unauthorized } from '../errors.ts';
import { filterProblem, pagination, param } from '../records/query-params.ts';
import { compileFilter, compileSort, FilterError, type ResolvedOperand, type Resolver, type ValueType } from '../rules/index.ts';
import { MAX_FILTER_LENGTH } from '../rules/parser.ts';
import { type Database, join, raw, type Sql, sql } from '../storage/index.ts';
import type { AdminRow, AdminService } from './admins.ts';
import { bearerOf } from './authenticate.ts';
import type { TokenService } from './tokens.ts';
import { bodyOf, impersonationSeconds } from './body.ts';

/** A superuser as PocketBase ≥ 0.23 returns records of `_superusers` (never the hash or token key). */
export function superuserJson(a: AdminRow): Record<string, unknown> {
  return { collectionId: SUPERUSERS_ID, collectionName: SUPERUSERS_NAME, id: a.id, email: a.email, emailVisibility: false, verified: true, created: a.created, updated: a.updated };
}

/** The names a filter or sort on `_superusers` may use, each a fixed column of `_admins` or a constant. */
const COLUMNS = new Map<string, { sql: Sql; type: ValueType }>([
  ['id', { sql: sql`id`, type: 'text' }],
  ['email', { sql: sql`email`, type: 'text' }],
  ['created', { sql: sql`created`, type: 'date' }],
  ['updated', { sql: sql`updated`, type: 'date' }],
  ['verified', { sql: sql`${true}`, type: 'bool' }],
  ['emailVisibility', { sql: sql`${false}`, type: 'bool' }],
]);

const superuserFieldResolver: Resolver = {
  resolve(name: string, position: number): ResolvedOperand {
    const column = COLUMNS.get(name);
    if (!column) throw new FilterError(`unknown field ${JSON.stringify(name)} of _superusers`, position);
    return { kind: 'scalar', sql: column.sql, valueType: column.type };
  },
};

export interface SuperuserAuth {
  token: string;
  record: Record<string, unknown>;
}


/**
 * `_superusers` (PocketBase ≥ 0.23): Cairn's administrators (`AdminService`, system.db `_admins`) as
 * records of a system auth collection, with v0.23's tokens (`type: "auth"`, `collectionId:
 * "pbc_3142635823"`, `refreshable`), which the SDK 0.23+ recognises as a superuser's. `/api/admins`
 * serves the same accounts to SDK 0.21 with v0.22's `admin` tokens; both kinds act as administrators.
 */
export class SuperuserService {
  /** Set by the hooks domain: `onRecordAuthRequest` handlers see superusers' sign-ins too, as in PocketBase. */
  onSignIn?: SignInHook;
  /** The `superuserIPs` setting: a sign-in from another address is refused before a token is made. */
  superuserIps?: SuperuserIps;

  constructor(
    private readonly system: Database,
    private readonly admins: AdminService,
    private readonly tokens: TokenService,
  ) {}

  private async result(
    ctx: RequestContext,
    admin: AdminRow,
    method: AuthMethod,
    options: { ttlSeconds?: number; refreshable?: boolean; token?: string } = {},
  ): Promise<SuperuserAuth> {
    this.superuserIps?.check(ctx.request.ip);
    const token =
      options.token ??
      (await this.tokens.sign({ id: admin.id, type: 'auth', collectionId: SUPERUSERS_ID, refreshable: options.refreshable ?? true, tokenKey: admin.tokenKey }, options.ttlSeconds || this.tokens.ttlSeconds));
    const record = superuserJson(admin);
    if (this.onSignIn) await this.onSignIn(ctx, SUPERUSERS_COLLECTION, record as RecordJson, token, method);
    return { token, record };
  }

  async authWithPassword(ctx: RequestContext, body: unknown): Promise<SuperuserAuth> {
    const input = (body ?? {}) as Record<string, unknown>;
    return this.result(ctx, await this.admins.authenticate(input.identity ?? input.email, input.password), 'password');
  }

  /** A new token for the signed-in superuser; a static (impersonation) token is answered as it is. */
  async refresh(ctx: RequestContext): Promise<SuperuserAuth> {
    if (ctx.auth.type !== 'admin') throw unauthorized();
    const header = ctx.request.headers.authorization;
    const token = ctx.auth.staticToken ? bearerOf(Array.isArray(header) ? header[0] : header) : undefined;
    return this.result(ctx, await this.admins.get(ctx.auth.id), 'refresh', { token });
  }

  /** A static token of another superuser (impersonation), for superusers only. */
  async impersonate(ctx: RequestContext, id: string, body: unknown): Promise<SuperuserAuth> {
    if (ctx.auth.type === 'guest') throw unauthorized();
    if (ctx.auth.type !== 'admin') throw forbidden('Only superusers can impersonate.');
    const duration = impersonationSeconds(body);
    const admin = await this.admins.find(id);
    if (!admin) throw notFound();
    return this.result(ctx, admin, 'impersonate', { ttlSeconds: duration, refreshable: false });
  }

  /** The records list of `_superusers`: page, perPage, sort, filter and skipTotal over its fields. */
  async list(query: Record<string, unknown>) {
    const { page, perPage } = pagination(query);
    let where = sql``;
    const filter = param(query.filter).trim();
    if (filter !== '') {
      if (filter.length > MAX_FILTER_LENGTH) throw badRequest(`Invalid filter: longer than ${MAX_FILTER_LENGTH} characters.`);
      try {
        where = sql` WHERE ${compileFilter(filter, superuserFieldResolver, { dialect: this.system.dialect })}`;
      } catch (err) {
        throw filterProblem(err, 'filter');
      }
    }
    let order: Sql[];
    try {
      order = compileSort(param(query.sort), superuserFieldResolver, this.system.dialect, '_admins');
    } catch (err) {
      throw filterProblem(err, 'sort');
    }
    order.push(sql`created`, sql`${raw(this.system.dialect.insertionOrder('_admins'))}`);
    const q = sql`SELECT id, email, avatar, passwordHash, tokenKey, created, updated FROM _admins${where} ORDER BY ${join(order, ', ')} LIMIT ${perPage} OFFSET ${(page - 1) * perPage}`;
    const rows = await this.system.all<AdminRow>(q.text, q.params);
    let totalItems = -1;
    if (!['1', 'true'].includes(param(query.skipTotal).toLowerCase())) {
      const count = sql`SELECT COUNT(*) AS n FROM _admins${where}`;
      totalItems = Number((await this.system.get<{ n: number }>(count.text, count.params))?.n ?? 0);
    }
    return { page, perPage, totalItems, totalPages: totalItems < 0 ? -1 : Math.ceil(totalItems / perPage), items: rows.map(superuserJson) };
  }

  async view(id: string): Promise<Record<string, unknown>> {
    return superuserJson(await this.admins.get(id));
  }

  /** PocketBase asks for `passwordConfirm` when an auth record is created. */
  async create(body: unknown): Promise<Record<string, unknown>> {
    return superuserJson(await this.admins.create(bodyOf(body ?? {}), { requireConfirm: true }));
  }

  async update(id: string, body: unknown): Promise<Record<string, unknown>> {
    return superuserJson(await this.admins.update(id, bodyOf(body ?? {})));
  }

  /** The last superuser cannot be deleted (409, as `/api/admins` answers). */
  async delete(id: string): Promise<void> {
    await this.admins.delete(id);
  }
}
