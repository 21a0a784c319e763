import { badRequest, isApiError } from '../../errors.ts';
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
  avatarUrl?: string;
  raw: Record<string, unknown>;
}

interface Answer {
  status: number;
  body: Record<string, unknown>;
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
    return { status: res.statusCode, body: typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>) : { value: body } };
  } catch (err) {
    if (isApiError(err)) throw err;
    throw badRequest(`Failed to reach the OAuth2 provider (${step}): ${reason(err)}.`);
  }
}

function providerError(body: Record<string, unknown>): string {
  const parts = [body.error, body.error_description ?? body.message].filter((p) => typeof p === 'string' && p !== '');
  return parts.length > 0 ? `: ${parts.join(' — ').slice(0, 300)}` : '';
}

/** Trades the authorization code (and PKCE verifier) for an access token at the token endpoint. */
export async function exchangeCode(provider: ProviderConfig, code: string, redirectUrl: string, codeVerifier: string): Promise<string> {
  const form = new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: redirectUrl, client_id: provider.clientId, client_secret: provider.clientSecret });
  if (codeVerifier !== '') form.set('code_verifier', codeVerifier);
  const res = await call(
    provider.tokenUrl,
    { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' }, body: form.toString() },
    'token exchange',
  );
  const token = res.body.access_token;
  if (res.status < 200 || res.status >= 300 || typeof token !== 'string' || token === '') {
    throw badRequest(`The OAuth2 provider refused the authorization code (HTTP ${res.status})${providerError(res.body)}.`);
  }
  return token;
}

function str(v: unknown): string | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
}

const truthy = (v: unknown) => v === true || v === 'true';

/**
 * Reads the user info endpoint. The field names of OIDC (`sub`, `email_verified`, `picture`) and of
 * the built-in providers (`id`, `verified_email`, `verified`, `avatar_url`, `mail`) are understood.
 */
export async function fetchProfile(provider: ProviderConfig, accessToken: string): Promise<OAuth2Profile> {
  const headers = { authorization: `Bearer ${accessToken}`, accept: 'application/json', 'user-agent': 'Cairn' };
  const res = await call(provider.userInfoUrl, { method: 'GET', headers }, 'user info');
  if (res.status < 200 || res.status >= 300) throw badRequest(`The OAuth2 provider refused the user-info request (HTTP ${res.status})${providerError(res.body)}.`);
  const raw = res.body;
  const id = str(raw.sub) ?? str(raw.id);
  if (!id) throw badRequest('The OAuth2 provider did not return a user id.');
  const profile: OAuth2Profile = {
    id,
    email: str(raw.email) ?? str(raw.mail),
    verified: truthy(raw.email_verified) || truthy(raw.verified_email) || truthy(raw.verified),
    name: str(raw.name) ?? str(raw.global_name) ?? str(raw.displayName) ?? str(raw.login) ?? str(raw.username),
    avatarUrl: str(raw.picture) ?? str(raw.avatar_url),
    raw,
  };
  if (provider.name === 'github') await githubEmail(provider, headers, profile);
  return profile;
}

/** GitHub's user object has no verification flag (and no email when it is private): its emails list has both. */
async function githubEmail(provider: ProviderConfig, headers: Record<string, string>, profile: OAuth2Profile): Promise<void> {
  const res = await call(new URL('/user/emails', provider.userInfoUrl).href, { method: 'GET', headers }, 'user emails');
  const list = Array.isArray(res.body.value) ? (res.body.value as Array<Record<string, unknown>>) : [];
  const primary = list.find((e) => e.primary === true) ?? list.find((e) => e.email === profile.email);
  if (res.status >= 200 && res.status < 300 && primary && str(primary.email)) {
    profile.email = str(primary.email);
    profile.verified = primary.verified === true;
  }
}
