import type { AdminService } from '../auth/admins.ts';
import type { Authenticator } from '../auth/authenticate.ts';
import { TokenService } from '../auth/tokens.ts';
import type { CollectionService } from '../collections/service.ts';
import { type AdminAuth, type Auth, GUEST, type RequestContext } from '../context.ts';
import { forbidden, isApiError, unauthorized } from '../errors.ts';
import { quoteIdent } from '../lib/identifiers.ts';
import type { Database } from '../storage/index.ts';

/**
 * Short-lived tokens for protected files (PocketBase's `POST /api/files/token`). They go in URLs
 * (`?token=`), so they are signed with their own key: a file token never works as an auth token, nor
 * an auth token as a file token. Like auth tokens they name the account and its tokenKey, so a
 * password change revokes them too.
 */
export class FileTokens {
  private readonly tokens: TokenService;

  constructor(
    key: Uint8Array,
    ttlSeconds: number,
    private readonly admins: AdminService,
    private readonly collections: CollectionService,
    private readonly authenticator: Authenticator,
  ) {
    this.tokens = new TokenService(key, ttlSeconds);
  }

  /** A file token for the caller: administrators and auth records only. */
  async issue(ctx: RequestContext): Promise<string> {
    const auth = ctx.auth;
    if (auth.type === 'guest') throw unauthorized();
    if (auth.type === 'apikey') throw forbidden('File tokens are issued to administrators and users, not to API keys.');
    if (auth.type === 'admin') {
      const admin = await this.admins.find(auth.id);
      if (!admin) throw unauthorized();
      return this.tokens.sign({ id: admin.id, type: 'admin', tokenKey: admin.tokenKey });
    }
    const collection = await this.collections.get(ctx.db, auth.collectionId);
    const row = await ctx.db.get<{ tokenKey: string }>(`SELECT "tokenKey" FROM ${quoteIdent(collection.name)} WHERE id = ?`, [auth.id]);
    if (!row) throw unauthorized();
    return this.tokens.sign({ id: auth.id, type: 'authRecord', collectionId: collection.id, db: ctx.dbName, tokenKey: row.tokenKey });
  }

  /**
   * The caller a file token names, or a guest for a token that is invalid, expired, revoked or of
   * another database, or an administrator's used from an address `superuserIPs` does not hold.
   */
  async resolve(token: string, dbName: string, db: Database, ip: string): Promise<Auth> {
    const auth = await this.resolveToken(token, dbName, db);
    return auth.type === 'admin' && this.authenticator.superuserIps?.allows(ip) === false ? GUEST : auth;
  }

  private async resolveToken(token: string, dbName: string, db: Database): Promise<Auth> {
    try {
      let claims;
      try {
        claims = await this.tokens.verify(token);
      } catch (err) {
        // A file token PocketBase signed for an account carried by an import.
        const carried = await this.authenticator.pocketbase?.resolve(token, db, 'file');
        if (carried) return carried;
        throw err;
      }
      if (claims.type !== 'admin' && claims.type !== 'authRecord') return GUEST;
      return await this.authenticator.fromClaims(claims, dbName, db);
    } catch (err) {
      if (isApiError(err) && err.status === 401) return GUEST;
      throw err;
    }
  }

  /**
   * The administrator a file token names (PocketBase's admin file token, which backup downloads take),
   * or undefined (also from an address `superuserIPs` does not hold).
   */
  async admin(token: string, ip: string): Promise<AdminAuth | undefined> {
    try {
      const claims = await this.tokens.verify(token);
      if (claims.type !== 'admin') return undefined;
      const auth = await this.authenticator.fromClaims(claims, '', undefined);
      return auth.type === 'admin' && this.authenticator.superuserIps?.allows(ip) !== false ? auth : undefined;
    } catch (err) {
      if (isApiError(err) && err.status === 401) return undefined;
      throw err;
    }
  }
}
