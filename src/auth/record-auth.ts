import type { Collection } from '../collections/model.ts';
import type { CollectionService } from '../collections/service.ts';
import type { RecordAuth, RequestContext } from '../context.ts';
import { badRequest, forbidden, unauthorized, validationFailed } from '../errors.ts';
import { serializeRecord, type RecordJson } from '../records/serialize.ts';
import type { RecordService } from '../records/service.ts';
import { shapeOf } from '../records/shape.ts';
import { PRIVILEGED_VIEWER } from '../records/viewer.ts';
import { hashPassword, needsRehash, verifyDummy, verifyPassword } from './passwords.ts';
import type { TokenService } from './tokens.ts';

/** The auth collection `/api/auth/*` works on (the spec's "configured default auth collection"). */
export const DEFAULT_AUTH_COLLECTION = 'users';

export interface AuthResult {
  token: string;
  /** The spec's key. */
  user: RecordJson;
  /** PocketBase's key, for its SDKs; the same record. */
  record: RecordJson;
}

/** How a record signed in: `password`, `oauth2`, `otp`, `refresh`, … (PocketBase's names). */
export type SignInMethod = string;

/**
 * Runs before a sign-in's token is sent (application hooks' `onRecordAuthRequest`); throwing refuses
 * the sign-in. `record` is the record as its owner sees it.
 */
export type SignInHook = (ctx: RequestContext, collection: Collection, record: RecordJson, token: string, method: SignInMethod) => Promise<void>;

/** Keys a registration may set; `role` and `verified` are not among them. */
const REGISTRATION_KEYS = ['email', 'password', 'passwordConfirm', 'name', 'avatar', 'emailVisibility'];

/** Sign-in, refresh and registration for records of auth collections. */
export class RecordAuthService {
  /** Set by the hooks domain when application code listens to sign-ins. */
  onSignIn?: SignInHook;

  constructor(
    private readonly tokens: TokenService,
    private readonly collections: CollectionService,
    private readonly records: RecordService,
  ) {}

  async authCollection(ctx: RequestContext, name: string): Promise<Collection> {
    const collection = await this.collections.get(ctx.db, name);
    if (collection.type !== 'auth') throw badRequest(`"${collection.name}" is not an auth collection.`);
    return collection;
  }

  /**
   * The auth result for a record row: a fresh token and the record as its owner sees it. Every
   * sign-in of a record ends here, whatever its method, so what applies to all of them is decided
   * in this one place (the `onRecordAuthRequest` hooks).
   */
  async result(ctx: RequestContext, collection: Collection, row: Record<string, unknown>, method: SignInMethod): Promise<AuthResult> {
    const token = await this.tokens.sign({ id: row.id as string, type: 'authRecord', collectionId: collection.id, db: ctx.dbName, tokenKey: String(row.tokenKey) });
    const user = await this.ownRecord(ctx, collection, row);
    if (this.onSignIn) await this.onSignIn(ctx, collection, user, token, method);
    return { token, user, record: user };
  }

  /** The auth result for a record known by id (after OAuth2 sign-in, which found or created it). */
  async resultFor(ctx: RequestContext, collection: Collection, id: string, method: SignInMethod): Promise<AuthResult> {
    const row = await this.loadRow(ctx, collection, 'id', id);
    if (!row) throw unauthorized();
    return this.result(ctx, collection, row, method);
  }

  /**
   * The signed-in record as its owner sees it, as PocketBase returns it whatever the collection's
   * view rule; the request's `expand` is resolved as that record, so related records follow their
   * own collections' view rules.
   */
  private async ownRecord(ctx: RequestContext, collection: Collection, row: Record<string, unknown>): Promise<RecordJson> {
    const shape = shapeOf(collection);
    const id = row.id as string;
    const user = serializeRecord(row, shape, { privileged: false, authRecordId: id, authCollectionId: collection.id });
    const expand = ctx.request.query.expand;
    if ((expand === undefined || expand === '') && this.records.deps.events?.enriches(collection) !== true) return user;
    // Expanded, and enriched by hooks, as that record: it is the receiver.
    const auth: RecordAuth = { type: 'record', id, collectionId: collection.id, collectionName: collection.name, record: serializeRecord(row, shape, PRIVILEGED_VIEWER) };
    const [out] = await this.records.output({ ...ctx, auth }, collection, [user], { expand });
    return out as RecordJson;
  }

  private async loadRow(ctx: RequestContext, collection: Collection, where: string, value: string): Promise<Record<string, unknown> | undefined> {
    const shape = shapeOf(collection);
    return ctx.db.get(`SELECT ${shape.selectList}, t0."passwordHash", t0."tokenKey" FROM ${shape.table} t0 WHERE t0.${where} = ?`, [value]);
  }

  /** Email and password sign-in. Unknown emails cost the same hashing work as wrong passwords. */
  async authWithPassword(ctx: RequestContext, collection: Collection, identity: unknown, password: unknown): Promise<AuthResult> {
    if (typeof identity !== 'string' || identity.trim() === '' || typeof password !== 'string' || password === '') {
      const data: Record<string, { code: string; message: string }> = {};
      if (typeof identity !== 'string' || identity.trim() === '') data.identity = { code: 'validation_required', message: 'Cannot be blank.' };
      if (typeof password !== 'string' || password === '') data.password = { code: 'validation_required', message: 'Cannot be blank.' };
      throw validationFailed(data, 'Failed to authenticate.');
    }
    const row = await this.loadRow(ctx, collection, 'email', identity.trim());
    if (!row) {
      await verifyDummy(password);
      throw unauthorized('Invalid credentials.');
    }
    if (!(await verifyPassword(String(row.passwordHash), password))) throw unauthorized('Invalid credentials.');
    if (needsRehash(String(row.passwordHash))) await this.rehash(ctx, collection, row, password);
    return this.result(ctx, collection, row, 'password');
  }

  /**
   * Replaces an imported (bcrypt) hash with Cairn's own once the password is known to match. Only if
   * the hash is still the one checked: a password changed meanwhile is not overwritten. Tokens stay
   * valid (the password did not change).
   */
  private async rehash(ctx: RequestContext, collection: Collection, row: Record<string, unknown>, password: string): Promise<void> {
    const hash = await hashPassword(password);
    await ctx.db.run(`UPDATE ${shapeOf(collection).table} SET "passwordHash" = ? WHERE id = ? AND "passwordHash" = ?`, [hash, row.id, row.passwordHash]);
  }

  /** A new token for the signed-in record (the old one stays valid until it expires). */
  async refresh(ctx: RequestContext, collection?: Collection): Promise<AuthResult> {
    const auth = ctx.auth;
    if (auth.type !== 'record') throw unauthorized();
    const own = collection ?? (await this.collections.get(ctx.db, auth.collectionId));
    if (own.id !== auth.collectionId) throw forbidden('The token belongs to another collection.');
    const row = await this.loadRow(ctx, own, 'id', auth.id);
    if (!row) throw unauthorized();
    return this.result(ctx, own, row, 'refresh');
  }

  /** The signed-in record, as its owner sees it. */
  async me(ctx: RequestContext): Promise<RecordJson> {
    const auth = ctx.auth;
    if (auth.type !== 'record') throw unauthorized();
    const collection = await this.collections.get(ctx.db, auth.collectionId);
    const row = await this.loadRow(ctx, collection, 'id', auth.id);
    if (!row) throw unauthorized();
    return this.ownRecord(ctx, collection, row);
  }

  /** Creates a user in the default auth collection from the registration keys only. */
  async register(ctx: RequestContext, body: unknown): Promise<unknown> {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('The request body must be a JSON object.');
    const collection = await this.authCollection(ctx, DEFAULT_AUTH_COLLECTION);
    const input: Record<string, unknown> = {};
    for (const key of REGISTRATION_KEYS) if ((body as Record<string, unknown>)[key] !== undefined) input[key] = (body as Record<string, unknown>)[key];
    if (!collection.fields.some((f) => f.name === 'avatar')) delete input.avatar;
    if (!collection.fields.some((f) => f.name === 'name')) delete input.name;
    const created = (await this.records.create({ ...ctx, auth: { type: 'guest' } }, collection, input)) as RecordJson;
    // The new user sees their own email in the answer.
    const row = await this.loadRow(ctx, collection, 'id', created.id);
    return row ? this.ownRecord({ ...ctx, request: { ...ctx.request, query: {} } }, collection, row) : created;
  }
}
