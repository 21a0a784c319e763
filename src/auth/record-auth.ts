import { authSettingsOf } from '../collections/auth-settings.ts';
import type { Collection } from '../collections/model.ts';
import type { CollectionService } from '../collections/service.ts';
import { isSuperusers } from '../collections/superusers.ts';
import { isPrivileged, type RecordAuth, type RequestContext, withRequest } from '../context.ts';
import { recordMatches } from '../rules/access/record-match.ts';
import { FilterError } from '../rules/errors.ts';
import { badRequest, forbidden, notFound, unauthorized, validationFailed } from '../errors.ts';
import { quoteIdent } from '../lib/identifiers.ts';
import { callerRow } from '../records/caller-row.ts';
import { serializeRecord, type RecordJson } from '../records/serialize.ts';
import type { RecordService } from '../records/service.ts';
import { shapeOf } from '../records/shape.ts';
import { PRIVILEGED_VIEWER } from '../records/viewer.ts';
import { bearerOf } from './authenticate.ts';
import { impersonationSeconds } from './body.ts';
import type { AuthAlerts } from './auth-alert.ts';
import type { AuthMethod, MfaService } from './mfa.ts';
import { hashPassword, needsRehash, verifyDummy, verifyPassword } from './passwords.ts';
import type { TokenService } from './tokens.ts';

export type { AuthMethod } from './mfa.ts';

/** The auth collection `/api/auth/*` works on (the spec's "configured default auth collection"). */
export const DEFAULT_AUTH_COLLECTION = 'users';

export interface AuthResult {
  token: string;
  /** The spec's key. */
  user: RecordJson;
  /** PocketBase's key, for its SDKs; the same record. */
  record: RecordJson;
}

/** How `result` makes the token. */
export interface TokenOptions {
  /** A token to answer as is (a refresh of a static token renews nothing). */
  token?: string;
  /** Lifetime in seconds instead of the collection's `authToken.duration`. */
  ttlSeconds?: number;
  /** false for static tokens (impersonation), which a refresh does not renew. */
  refreshable?: boolean;
}

/**
 * Runs before a sign-in's token is sent (application hooks' `onRecordAuthRequest`); throwing refuses
 * the sign-in. `record` is the record as its owner sees it.
 */
export type SignInHook = (ctx: RequestContext, collection: Collection, record: RecordJson, token: string, method: AuthMethod) => Promise<void>;

/** Keys a registration may set; `role` and `verified` are not among them. */
const REGISTRATION_KEYS = ['email', 'password', 'passwordConfirm', 'name', 'avatar', 'emailVisibility'];

type Row = Record<string, unknown>;

/** Sign-in, refresh, impersonation and registration for records of auth collections. */
export class RecordAuthService {
  /** Set by the hooks domain when application code listens to sign-ins. */
  onSignIn?: SignInHook;
  /** Sign-in origins and login alerts (auth-alert.ts). */
  alerts?: AuthAlerts;

  constructor(
    private readonly tokens: TokenService,
    private readonly collections: CollectionService,
    private readonly records: RecordService,
    private readonly mfa: MfaService,
  ) {}

  async authCollection(ctx: RequestContext, name: string): Promise<Collection> {
    // Superusers sign in with a password only, through their own routes (src/http/routes/superusers.ts).
    if (isSuperusers(name)) throw forbidden('_superusers supports password sign-in, refresh and password reset only.');
    const collection = await this.collections.get(ctx.db, name).catch(() => undefined);
    // PocketBase answers a collection that is missing or not an auth collection alike.
    if (collection?.type !== 'auth') throw notFound('Missing or invalid auth collection context.');
    return collection;
  }

  /**
   * The collection of the path when the caller is signed in as one of its records (PocketBase's
   * same-collection requirement of auth-refresh and request-email-change): a guest gets 401, any other
   * caller (another collection's record, an administrator) 403.
   */
  async ownAuthCollection(ctx: RequestContext, name: string): Promise<Collection> {
    const auth = ctx.auth;
    if (auth.type === 'guest') throw unauthorized('The request requires valid record authorization token.');
    if (isSuperusers(name)) throw forbidden('The request requires an auth record of this collection.');
    const collection = await this.collections.get(ctx.db, name);
    if (auth.type !== 'record' || collection.id !== auth.collectionId) {
      throw forbidden(`The request requires an auth record of the ${collection.name} collection.`);
    }
    return collection;
  }

  /** Refuses a sign-in method the collection has turned off (`passwordAuth`, `oauth2`; OTP: src/auth/otp.ts). */
  requireMethod(collection: Collection, method: 'password' | 'oauth2'): void {
    const settings = authSettingsOf(collection);
    if (method === 'password' && !settings.passwordAuth.enabled) throw forbidden('The collection is not configured to allow password authentication.');
    if (method === 'oauth2' && !settings.oauth2.enabled) throw forbidden('The collection is not configured to allow OAuth2 authentication.');
  }

  /**
   * The answer of every successful sign-in (`method`: password, OAuth2, OTP, the completion of an MFA,
   * refresh, impersonation): a token and the record as its owner sees it. Here the collection's MFA
   * decides first whether this sign-in is only a first factor (a 401 with an `mfaId`, src/auth/mfa.ts):
   * this is the one place a sign-in becomes a session, and where application hooks see it
   * (`onSignIn`: `onRecordAuthRequest`).
   */
  async result(ctx: RequestContext, collection: Collection, row: Row, method: AuthMethod, options: TokenOptions = {}): Promise<AuthResult> {
    await this.checkAuthRule(ctx, collection, row.id as string);
    await this.mfa.check(ctx, collection, row.id as string, method);
    const token =
      options.token ??
      (await this.tokens.sign(
        { id: row.id as string, type: 'authRecord', collectionId: collection.id, db: ctx.dbName, refreshable: options.refreshable ?? true, tokenKey: String(row.tokenKey) },
        options.ttlSeconds || authSettingsOf(collection).authToken.duration || this.tokens.ttlSeconds,
      ));
    const user = await this.ownRecord(ctx, collection, row);
    if (this.onSignIn) await this.onSignIn(ctx, collection, user, token, method);
    // A new session from a device (not a refresh or an administrator's impersonation).
    if (this.alerts && method !== 'refresh' && method !== 'impersonate') await this.alerts.signedIn(ctx, collection, row);
    return { token, user, record: user };
  }

  /**
   * The collection's auth rule (PocketBase ≥ 0.23's `authRule`, such as `verified = true`): checked
   * against the record with every sign-in, refresh and impersonation, with the caller as they are
   * (a guest signing in). null lets nobody sign in; administrators pass, as they pass every rule.
   */
  private async checkAuthRule(ctx: RequestContext, collection: Collection, id: string): Promise<void> {
    const rule = authSettingsOf(collection).authRule;
    if (rule === '' || isPrivileged(ctx.auth)) return;
    const refused = () => forbidden("The request doesn't satisfy the collection requirements to authenticate.");
    if (rule === null) throw refused();
    let ok: boolean;
    try {
      ok = await recordMatches(ctx, collection, await this.collections.all(ctx.db), rule, id);
    } catch (err) {
      // A rule that no longer compiles lets nobody in (the narrower way to fail).
      if (err instanceof FilterError) throw refused();
      throw err;
    }
    if (!ok) throw refused();
  }

  /** The auth result for a record known by id (after OAuth2 sign-in, which found or created it). */
  async resultFor(ctx: RequestContext, collection: Collection, id: string, method: AuthMethod): Promise<AuthResult> {
    const row = await this.loadRow(ctx, collection, 'id', id);
    if (!row) throw unauthorized();
    return this.result(ctx, collection, row, method);
  }

  /**
   * The signed-in record as its owner sees it, as PocketBase returns it whatever the collection's
   * view rule; the request's `expand` is resolved as that record, so related records follow their
   * own collections' view rules.
   */
  private async ownRecord(ctx: RequestContext, collection: Collection, row: Row): Promise<RecordJson> {
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

  private async loadRow(ctx: RequestContext, collection: Collection, column: string, value: string): Promise<Row | undefined> {
    const shape = shapeOf(collection);
    return ctx.db.get(`SELECT ${shape.selectList}, t0."passwordHash", t0."tokenKey" FROM ${shape.table} t0 WHERE t0.${quoteIdent(column)} = ?`, [value]);
  }

  /**
   * The record an identity names: through `identityField` when the body names one of the
   * collection's identity fields, else each identity field in order (`email` only for what looks
   * like an address), as PocketBase ≥ 0.23 looks it up.
   */
  private async findByIdentity(ctx: RequestContext, collection: Collection, identity: string, identityField: unknown): Promise<Row | undefined> {
    const fields = authSettingsOf(collection).passwordAuth.identityFields;
    if (identityField !== undefined && identityField !== '') {
      if (typeof identityField !== 'string' || !fields.includes(identityField)) {
        throw validationFailed({ identityField: { code: 'validation_in_invalid', message: `Must be one of ${fields.map((f) => `"${f}"`).join(', ')}.` } }, 'Failed to authenticate.');
      }
      return this.loadRow(ctx, collection, identityField, identity);
    }
    const looksLikeEmail = identity.includes('@');
    for (const field of fields) {
      if (field === 'email' && !looksLikeEmail && fields.length > 1) continue;
      const row = await this.loadRow(ctx, collection, field, identity);
      if (row) return row;
    }
    return undefined;
  }

  /** Identity and password sign-in. Unknown identities cost the same hashing work as wrong passwords. */
  async authWithPassword(ctx: RequestContext, collection: Collection, identity: unknown, password: unknown, identityField?: unknown): Promise<AuthResult> {
    this.requireMethod(collection, 'password');
    if (typeof identity !== 'string' || identity.trim() === '' || typeof password !== 'string' || password === '') {
      const data: Record<string, { code: string; message: string }> = {};
      if (typeof identity !== 'string' || identity.trim() === '') data.identity = { code: 'validation_required', message: 'Cannot be blank.' };
      if (typeof password !== 'string' || password === '') data.password = { code: 'validation_required', message: 'Cannot be blank.' };
      throw validationFailed(data, 'Failed to authenticate.');
    }
    const row = await this.findByIdentity(ctx, collection, identity.trim(), identityField);
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

  /** The sign-in that follows a checked one-time code (src/auth/otp.ts). */
  async authWithOtp(ctx: RequestContext, collection: Collection, recordId: string): Promise<AuthResult> {
    return this.resultFor(ctx, collection, recordId, 'otp');
  }

  /**
   * A new token for the signed-in record (the old one stays valid until it expires). A static token
   * (impersonation) is answered as it is, with the record: PocketBase does not renew them.
   */
  async refresh(ctx: RequestContext, collection?: Collection): Promise<AuthResult> {
    const auth = ctx.auth;
    if (auth.type !== 'record') throw unauthorized();
    const own = collection ?? (await this.collections.get(ctx.db, auth.collectionId));
    if (own.id !== auth.collectionId) throw forbidden('The token belongs to another collection.');
    const row = callerRow(auth) ?? (await this.loadRow(ctx, own, 'id', auth.id));
    if (!row) throw unauthorized();
    const header = ctx.request.headers.authorization;
    const token = auth.staticToken ? bearerOf(Array.isArray(header) ? header[0] : header) : undefined;
    return this.result(ctx, own, row, 'refresh', { token });
  }

  /**
   * A superuser's token for a record of the collection (PocketBase ≥ 0.23's impersonation): static
   * (never renewed by a refresh), for `duration` seconds or the collection's token lifetime. The
   * request log keeps the request with the superuser's id.
   */
  async impersonate(ctx: RequestContext, collection: Collection, id: string, input: unknown): Promise<AuthResult> {
    if (ctx.auth.type === 'guest') throw unauthorized();
    if (ctx.auth.type !== 'admin') throw forbidden('Only superusers can impersonate.');
    const duration = impersonationSeconds(input);
    const row = await this.loadRow(ctx, collection, 'id', id);
    if (!row) throw notFound();
    return this.result(ctx, collection, row, 'impersonate', { ttlSeconds: duration, refreshable: false });
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
    // The specification registers an avatar URL; PocketBase's `users.avatar` (the default since
    // API contract §23) holds uploaded files, so a URL given to it is not kept.
    const avatar = collection.fields.find((f) => f.name === 'avatar');
    if (!avatar || (avatar.type === 'file' && typeof input.avatar === 'string')) delete input.avatar;
    if (!collection.fields.some((f) => f.name === 'name')) delete input.name;
    const created = (await this.records.create({ ...ctx, auth: { type: 'guest' } }, collection, input)) as RecordJson;
    // The new user sees their own email in the answer.
    const row = await this.loadRow(ctx, collection, 'id', created.id);
    return row ? this.ownRecord(withRequest(ctx, { query: {} }), collection, row) : created;
  }
}
