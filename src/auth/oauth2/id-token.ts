import { createRemoteJWKSet, decodeJwt, type JWTPayload, jwtVerify } from 'jose';
import { badRequest, isApiError } from '../../errors.ts';

/** How far a token's times may be off, as PocketBase allows (its `PB_ID_TOKEN_LEEWAY` default). */
const LEEWAY_SECONDS = 300;
const TIMEOUT_MS = 10_000;

export interface IdTokenCheck {
  /** The client id the token must be for. */
  audience: string;
  /** The issuers one of which must have made it; any when empty. */
  issuers: string[];
  /** Where the signing keys are; without it the signature is not checked (the token came straight
   * from the token endpoint over TLS, which OpenID Connect allows to be trusted). */
  jwksUrl?: string;
  /** Whether the token must say when it expires (Apple's must). */
  requireExp: boolean;
}

// One key set per URL: jose keeps the keys and refetches them when a new key id appears.
const keySets = new Map<string, ReturnType<typeof createRemoteJWKSet>>();

/**
 * The claims of the `id_token` a token endpoint answered with (Apple, and OpenID Connect providers
 * without a user-info URL), checked as PocketBase checks them: audience, issuer, times within the
 * leeway, and the signature against the provider's keys where it has them. Any failure is a 400.
 */
export async function idTokenClaims(token: Record<string, unknown>, check: IdTokenCheck): Promise<JWTPayload> {
  const idToken = token.id_token;
  if (typeof idToken !== 'string' || idToken === '') throw badRequest('The OAuth2 provider returned no id_token.');
  try {
    if (check.jwksUrl) {
      let keys = keySets.get(check.jwksUrl);
      if (!keys) keySets.set(check.jwksUrl, (keys = createRemoteJWKSet(new URL(check.jwksUrl), { timeoutDuration: TIMEOUT_MS })));
      const { payload } = await jwtVerify(idToken, keys, {
        audience: check.audience,
        issuer: check.issuers.length > 0 ? check.issuers : undefined,
        clockTolerance: LEEWAY_SECONDS,
        requiredClaims: check.requireExp ? ['exp'] : [],
      });
      return payload;
    }
    const payload = looseClaims(idToken);
    if (!payload) throw new Error('its times are not valid now');
    const audiences = Array.isArray(payload.aud) ? payload.aud : [payload.aud];
    if (!audiences.includes(check.audience)) throw new Error('it is not for this client');
    if (check.issuers.length > 0 && !check.issuers.includes(String(payload.iss))) throw new Error(`iss must be one of ${check.issuers.join(', ')}`);
    if (check.requireExp && payload.exp === undefined) throw new Error('it has no expiry');
    return payload;
  } catch (err) {
    if (isApiError(err)) throw err;
    throw badRequest(`The OAuth2 provider's id_token is not valid: ${(err as Error).message}.`);
  }
}

/** The claims of a JWT whose times hold (exp, nbf and iat within the leeway), unchecked otherwise; undefined when not. */
export function looseClaims(jwt: unknown): JWTPayload | undefined {
  if (typeof jwt !== 'string' || jwt === '') return undefined;
  let payload: JWTPayload;
  try {
    payload = decodeJwt(jwt);
  } catch {
    return undefined;
  }
  const now = Date.now() / 1000;
  if (typeof payload.exp === 'number' && payload.exp < now - LEEWAY_SECONDS) return undefined;
  if (typeof payload.nbf === 'number' && payload.nbf > now + LEEWAY_SECONDS) return undefined;
  if (typeof payload.iat === 'number' && payload.iat > now + LEEWAY_SECONDS) return undefined;
  return payload;
}
