import type { FastifyRequest } from 'fastify';
import type { CollectionService } from '../collections/service.ts';
import { SUPERUSERS_ID } from '../collections/superusers.ts';
import { type AdminAuth, type Auth, GUEST, type RecordAuth } from '../context.ts';
import { unauthorized } from '../errors.ts';
import { keepCallerRow } from '../records/caller-row.ts';
import { serializeRecord } from '../records/serialize.ts';
import { shapeOf } from '../records/shape.ts';
import { PRIVILEGED_VIEWER } from '../records/viewer.ts';
import type { Database, DatabaseRegistry } from '../storage/index.ts';
import type { AdminService } from './admins.ts';
import type { PocketBaseTokens } from './pocketbase-tokens.ts';
import type { SuperuserIps } from './superuser-ips.ts';
import { type AuthClaims, tokenKeyFingerprint, type TokenService } from './tokens.ts';

/** Resolves API keys (opaque keys, or tokens of `type: "apikey"`); provided by the API-key domain. */
export type ApiKeyResolver = (db: Database, dbName: string, bearer: string, claims: AuthClaims | undefined) => Promise<Auth>;

const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

export function bearerOf(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const value = header.trim();
  // Accepted with or without the scheme, as PocketBase's SDK sends the bare token.
  const token = /^bearer\s+/i.test(value) ? value.replace(/^bearer\s+/i, '') : value;
  return token === '' ? undefined : token;
}

/**
 * Turns the Authorization header into the caller's identity. No header is a guest; a header that is
 * present but not valid (malformed, forged, expired, revoked, from another database) is a 401, never a
 * silent guest.
 */
export class Authenticator {
  apiKeys?: ApiKeyResolver;
  /** Tokens PocketBase signed for imported accounts (src/auth/pocketbase-tokens.ts). */
  pocketbase?: PocketBaseTokens;

  constructor(
    private readonly tokens: TokenService,
    private readonly admins: AdminService,
    private readonly collections: CollectionService,
    private readonly registry: DatabaseRegistry,
  ) {}

  /** The `superuserIPs` setting: administrators from other addresses are refused (403). */
  superuserIps?: SuperuserIps;

  authenticate = async (req: FastifyRequest, dbName: string, db: Database | undefined): Promise<Auth> => {
    const header = req.headers.authorization;
    const auth = await this.authenticateBearer(bearerOf(Array.isArray(header) ? header[0] : header), dbName, db);
    if (auth.type === 'admin') this.superuserIps?.check(req.ip);
    return auth;
  };

  /**
   * The caller a bearer (a token or an API key, without the scheme) stands for in `dbName`; none is a
   * guest. Also how realtime re-checks, before sending, that a subscriber's token still holds: the
   * verified-token cache makes that a row lookup.
   */
  async authenticateBearer(bearer: string | undefined, dbName: string, db: Database | undefined): Promise<Auth> {
    if (bearer === undefined) return GUEST;
    if (!JWT_SHAPE.test(bearer)) {
      if (!this.apiKeys) throw unauthorized();
      return this.apiKeys(db ?? (await this.registry.served(dbName)), dbName, bearer, undefined);
    }
    let claims: AuthClaims;
    try {
      claims = await this.tokens.verify(bearer);
    } catch (err) {
      // Not Cairn's: one PocketBase signed for an account carried by an import stays valid.
      const carried = this.pocketbase && (await this.pocketbase.resolve(bearer, db ?? (await this.registry.served(dbName)), 'auth'));
      if (carried) return carried;
      throw err;
    }
    return this.fromClaims(claims, dbName, db, bearer);
  }

  /**
   * The caller named by verified claims (of an auth token, or of a file token signed with another
   * key): the account must still exist with the same tokenKey, and user tokens must be used in their
   * own database. 401 otherwise.
   */
  async fromClaims(claims: AuthClaims, dbName: string, db: Database | undefined, bearer = ''): Promise<Auth> {
    // Administrators carry v0.22's `admin` tokens or v0.23's `auth` tokens of `_superusers`: either
    // kind acts as an administrator on every database.
    if (claims.type === 'admin' || (claims.type === 'auth' && claims.collectionId === SUPERUSERS_ID)) {
      const admin = await this.admins.find(claims.id);
      if (!admin || tokenKeyFingerprint(admin.tokenKey) !== claims.ver) throw unauthorized();
      const auth: AdminAuth = { type: 'admin', id: admin.id, email: admin.email };
      if (claims.refreshable === false) auth.staticToken = true;
      if (claims.type === 'auth') auth.superuser = true;
      return auth;
    }
    // User tokens and API-key tokens belong to the database they were issued in.
    if (claims.db !== dbName) throw unauthorized();
    const database = db ?? (await this.registry.served(dbName));
    if (claims.type === 'apikey') {
      if (!this.apiKeys) throw unauthorized();
      return this.apiKeys(database, dbName, bearer, claims);
    }
    return this.recordAuth(database, claims);
  }

  private async recordAuth(db: Database, claims: AuthClaims): Promise<Auth> {
    const collection = claims.collectionId ? await this.collections.find(db, claims.collectionId) : undefined;
    if (!collection || collection.type !== 'auth') throw unauthorized();
    const shape = shapeOf(collection);
    const row = await db.lookup<Record<string, unknown>>(`SELECT ${shape.selectList}, t0."tokenKey" FROM ${shape.table} t0 WHERE t0.id = ?`, [claims.id]);
    if (!row || tokenKeyFingerprint(String(row.tokenKey)) !== claims.ver) throw unauthorized();
    const auth: RecordAuth = {
      type: 'record',
      id: claims.id,
      collectionId: collection.id,
      collectionName: collection.name,
      record: serializeRecord(row, shape, PRIVILEGED_VIEWER),
    };
    if (claims.refreshable === false) auth.staticToken = true;
    keepCallerRow(auth, shape, row);
    return auth;
  }
}
