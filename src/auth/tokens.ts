import { createHash, randomUUID } from 'node:crypto';
import { type JWTPayload, jwtVerify } from 'jose';
import { unauthorized } from '../errors.ts';
import { signHs256 } from '../lib/jwt.ts';

/**
 * `admin` and `authRecord` are PocketBase v0.22's kinds (SDK 0.21 tells administrators by `admin`);
 * `auth` is v0.23's single kind, which Cairn issues to `_superusers` (the SDK 0.23+ tells superusers
 * by it and `collectionId`); `apikey` is Cairn's own.
 */
export type TokenType = 'admin' | 'authRecord' | 'auth' | 'apikey';

const TOKEN_TYPES = new Set<string>(['admin', 'authRecord', 'auth', 'apikey']);

/** API-key tokens live as long as their key: they are refused once it is disabled, rotated or deleted. */
export const API_KEY_TOKEN_TTL = 10 * 365 * 86400;

/** Claims of Cairn's auth tokens: PocketBase's (`id`, `type`, `collectionId`, `exp`, v0.23's
 * `refreshable`) plus `db` and `ver`, a fingerprint of the account's tokenKey that revokes the token
 * when the key rotates. */
export interface AuthClaims extends JWTPayload {
  id: string;
  type: TokenType;
  collectionId?: string;
  db?: string;
  /** false for impersonation tokens, which a refresh answers unchanged; absent (v0.22) means true. */
  refreshable?: boolean;
  ver: string;
  exp: number;
}

export interface SignClaims {
  id: string;
  type: TokenType;
  collectionId?: string;
  db?: string;
  refreshable?: boolean;
  tokenKey: string;
}

const CACHE_LIMIT = 10_000;

// Every authenticated request compares its account's tokenKey with the token's fingerprint; a hash
// per request costs more than the rest of the check. Keys are already in memory with their rows.
const fingerprints = new Map<string, string>();

/** A short fingerprint of a tokenKey; tokens carry it instead of the key itself. */
export function tokenKeyFingerprint(tokenKey: string): string {
  let fingerprint = fingerprints.get(tokenKey);
  if (fingerprint === undefined) {
    fingerprint = createHash('sha256').update(tokenKey).digest('base64url').slice(0, 16);
    if (fingerprints.size >= CACHE_LIMIT) fingerprints.clear();
    fingerprints.set(tokenKey, fingerprint);
  }
  return fingerprint;
}

/**
 * Signs (HS256, synchronously) and verifies (jose) auth tokens. Verified signatures are cached by token
 * text, so a client repeating its token skips the (asynchronous) signature check; expiry and
 * revocation are still checked on every request.
 */
export class TokenService {
  private readonly verified = new Map<string, AuthClaims>();
  /**
   * Checks under way, by token text. A burst of requests with one token (a client's first requests
   * after signing in, all at once) would otherwise each start jose's check, which runs on libuv's
   * thread pool: 1,000 refreshes at once queued 1,000 checks there before the first was cached.
   */
  private readonly checking = new Map<string, Promise<AuthClaims>>();

  constructor(
    private readonly key: Uint8Array,
    readonly ttlSeconds: number,
  ) {}

  /**
   * Signs synchronously (node:crypto's HMAC, src/lib/jwt.ts): jose's signing goes through WebCrypto on
   * libuv's thread pool, where it queued behind the password verifications of a sign-in storm, so that
   * every sign-in of a burst was answered only once all of their verifications were done.
   */
  async sign(claims: SignClaims, ttlSeconds = this.ttlSeconds): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    // Copied key by key: object rest and spread cost ~8 µs here on Node 20, more than the HMAC.
    const payload: Record<string, unknown> = {};
    for (const name in claims) if (name !== 'tokenKey') payload[name] = claims[name as keyof SignClaims];
    payload.ver = tokenKeyFingerprint(claims.tokenKey);
    payload.sub = claims.id;
    payload.iat = now;
    // A unique id, so a token refreshed within the same second still differs from the old one.
    payload.jti = randomUUID();
    payload.exp = now + ttlSeconds;
    return signHs256(payload, this.key);
  }

  /** The claims of a valid, unexpired token; 401 for anything else (forged, `alg: none`, expired, malformed). */
  async verify(token: string): Promise<AuthClaims> {
    const cached = this.verified.get(token);
    if (cached) {
      if (cached.exp * 1000 > Date.now()) return cached;
      this.verified.delete(token);
      throw unauthorized();
    }
    let check = this.checking.get(token);
    if (!check) {
      check = this.check(token);
      this.checking.set(token, check);
      const done = () => this.checking.delete(token);
      check.then(done, done);
    }
    return check;
  }

  private async check(token: string): Promise<AuthClaims> {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.key, { algorithms: ['HS256'] }));
    } catch {
      throw unauthorized();
    }
    const claims = payload as AuthClaims;
    if (typeof claims.id !== 'string' || typeof claims.ver !== 'string' || typeof claims.exp !== 'number' || !TOKEN_TYPES.has(claims.type) || (claims.refreshable !== undefined && typeof claims.refreshable !== 'boolean')) {
      throw unauthorized();
    }
    if (this.verified.size >= CACHE_LIMIT) this.verified.clear();
    this.verified.set(token, claims);
    return claims;
  }
}
