import { badRequest, isApiError } from '../../errors.ts';
import { idTokenClaims } from './id-token.ts';
import { OIDC_NAMES, PRESETS, readOidc, readsIdToken, text } from './presets.ts';
import type { ProviderConfig } from './providers.ts';

/** How long one call to a provider may take before the sign-in fails with a 400. */
export const OAUTH2_TIMEOUT_MS = 10_000;
const MAX_BODY_BYTES = 1024 * 1024;

/** What Cairn needs from a provider's user info, whatever its field names. */
export interface OAuth2Profile {
  id: string;
  email?: string;
  /** Whether the provider vouches that the address belongs to the user. */
  verified: boolean;
  name?: string;
  username?: string;
  avatarUrl?: string;
  raw: Record<string, unknown>;
}

interface Answer {
  status: number;
  /** The answer's JSON object (an array or a value as `{value}`), or its form-encoded fields. */
  body: Record<string, unknown>;
  json: unknown;
}

function reason(err: unknown): string {
  if (err instanceof Error && (err.name === 'TimeoutError' || err.name === 'AbortError')) return `no answer within ${OAUTH2_TIMEOUT_MS / 1000} s`;
  const code = (err as { code?: string }).code;
  return code ?? (err instanceof Error ? err.message : 'connection failed');
}

/** One call to the provider. Every failure becomes a 400 that says which step failed and why. */
async function call(url: string, options: { method: 'GET' | 'POST'; headers: Record<string, string>; body?: string }, step: string): Promise<Answer> {
  try {
    // undici is imported with the first sign-in through a provider (webhooks/deliver.ts says why).
    const { request } = await import('undici');
    const res = await request(url, { ...options, signal: AbortSignal.timeout(OAUTH2_TIMEOUT_MS) });
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const chunk of res.body) {
      size += chunk.length;
      if (size > MAX_BODY_BYTES) {
        res.body.destroy();
        throw badRequest(`The OAuth2 provider's ${step} answer is too large.`);
      }
      chunks.push(chunk as Buffer);
    }
    const text = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      // Some providers (GitHub without an Accept header) answer form-encoded.
      body = Object.fromEntries(new URLSearchParams(text));
    }
    return { status: res.statusCode, body: typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : { value: body }, json: body };
  } catch (err) {
    if (isApiError(err)) throw err;
    throw badRequest(`Failed to reach the OAuth2 provider (${step}): ${reason(err)}.`);
  }
}

function providerError(body: Record<string, unknown>): string {
  const parts = [body.error, body.error_description ?? body.message].filter((p) => typeof p === 'string' && p !== '');
  return parts.length > 0 ? `: ${parts.join(' — ').slice(0, 300)}` : '';
}

/**
 * Trades the authorization code (and PKCE verifier) for a token at the token endpoint; the whole
 * answer, which some providers extend (VK's email). As PocketBase (Go's x/oauth2) does, the client's
 * credentials go as HTTP Basic first and, when that is refused, once more in the form: providers
 * differ in which one they take.
 */
export async function exchangeCode(provider: ProviderConfig, code: string, redirectUrl: string, codeVerifier: string): Promise<Record<string, unknown>> {
  const form = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUrl });
  if (codeVerifier !== '') form.set('code_verifier', codeVerifier);
  const headers = { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' };
  const basic = Buffer.from(`${encodeURIComponent(provider.clientId)}:${encodeURIComponent(provider.clientSecret)}`).toString('base64');
  const granted = (res: Answer) => res.status >= 200 && res.status < 300 && typeof res.body.access_token === 'string' && res.body.access_token !== '' && res.body.error === undefined;
  const first = await call(provider.tokenUrl, { method: 'POST', headers: { ...headers, authorization: `Basic ${basic}` }, body: form.toString() }, 'token exchange');
  if (granted(first)) return first.body;
  form.set('client_id', provider.clientId);
  form.set('client_secret', provider.clientSecret);
  const second = await call(provider.tokenUrl, { method: 'POST', headers, body: form.toString() }, 'token exchange');
  if (granted(second)) return second.body;
  // The first refusal says what was wrong with the code, unless it was the Basic credentials.
  const refusal = first.status === 401 || first.body.error === 'invalid_client' ? second : first;
  throw badRequest(`The OAuth2 provider refused the authorization code (HTTP ${refusal.status})${providerError(refusal.body)}.`);
}

const truthy = (v: unknown) => v === true || v === 'true';

/**
 * Reads the user's profile. A provider PocketBase has built in is asked and read as PocketBase does
 * (presets.ts); any other is read as OpenID Connect user info, with the field names of the common
 * providers (`id`, `verified_email`, `verified`, `avatar_url`, `mail`) understood too.
 */
export async function fetchProfile(provider: ProviderConfig, token: Record<string, unknown>): Promise<OAuth2Profile> {
  const bearer = { authorization: `Bearer ${String(token.access_token)}`, accept: 'application/json', 'user-agent': 'Cairn' };
  const preset = PRESETS[provider.name];
  const extra = provider.extra ?? {};
  let raw: Record<string, unknown>;
  if (readsIdToken(provider)) {
    // Apple, and OpenID Connect without a user-info URL: the user is the id_token's claims.
    const issuers = Array.isArray(extra.issuers) ? extra.issuers.filter((i): i is string => typeof i === 'string' && i !== '') : [];
    raw = await idTokenClaims(token, {
      audience: provider.clientId,
      issuers: issuers.length > 0 ? issuers : preset?.idToken ? [preset.idToken.issuer] : [],
      jwksUrl: text(extra.jwksURL) ?? preset?.idToken?.jwksUrl,
      requireExp: preset?.idToken !== undefined,
    });
  } else {
    const ask = preset?.request?.(provider.clientId) ?? { method: 'GET' as const, headers: {} };
    const res = await call(provider.userInfoUrl, { method: ask.method, headers: { ...bearer, ...ask.headers }, body: ask.body }, 'user info');
    if (res.status < 200 || res.status >= 300) throw badRequest(`The OAuth2 provider refused the user-info request (HTTP ${res.status})${providerError(res.body)}.`);
    raw = res.body;
  }
  let profile: OAuth2Profile;
  if (preset || OIDC_NAMES.has(provider.name)) {
    const read = preset ? preset.read(raw, token, extra) : readOidc(raw);
    if (typeof read === 'string') throw badRequest(`The OAuth2 provider's account cannot sign in: ${read}.`);
    let email = read.email;
    if (email === undefined && preset?.emails) {
      // No address is not an error: the sign-in goes on without one.
      const emails = await call(preset.emails.url(provider.userInfoUrl), { method: 'GET', headers: bearer }, 'user emails');
      if (emails.status >= 200 && emails.status < 300) email = preset.emails.pick(emails.json);
    }
    profile = { id: read.id ?? '', name: read.name, username: read.username, email, verified: email !== undefined && read.verified !== false, avatarUrl: read.avatarUrl, raw };
  } else {
    profile = {
      id: text(raw.sub) ?? text(raw.id) ?? '',
      email: text(raw.email) ?? text(raw.mail),
      verified: truthy(raw.email_verified) || truthy(raw.verified_email) || truthy(raw.verified),
      name: text(raw.name) ?? text(raw.global_name) ?? text(raw.displayName) ?? text(raw.login) ?? text(raw.username),
      username: text(raw.preferred_username) ?? text(raw.login) ?? text(raw.username),
      avatarUrl: text(raw.picture) ?? text(raw.avatar_url),
      raw,
    };
  }
  if (profile.id === '') throw badRequest('The OAuth2 provider did not return a user id.');
  return profile;
}
