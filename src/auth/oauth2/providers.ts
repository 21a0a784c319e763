import type { FieldError } from '../../errors.ts';
import { isPlainObject } from '../../lib/objects.ts';
import { httpUrl, objectInput, type SettingsSection } from '../../settings/service.ts';
import { PRESETS, readsIdToken } from './presets.ts';

export { PRESETS };

/** An OAuth2 provider as stored in the instance settings (the client secret included). */
export interface ProviderConfig {
  name: string;
  displayName: string;
  clientId: string;
  clientSecret: string;
  authUrl: string;
  tokenUrl: string;
  userInfoUrl: string;
  scopes: string[];
  enabled: boolean;
  /** Whether PKCE's parameters are sent (PocketBase's per-provider setting; its preset's default). */
  pkce?: boolean;
  /** Provider-specific settings PocketBase keeps (`jwksURL` and `issuers` for an id_token, Microsoft's `idTokenEmailClaim`). */
  extra?: Record<string, unknown>;
}

export interface OAuth2Settings {
  providers: ProviderConfig[];
}

const NAME = /^[a-z0-9][a-z0-9_-]{0,39}$/;
const MAX_TEXT = 512;

function shortText(v: unknown): v is string {
  return typeof v === 'string' && v.trim() !== '' && v.length <= MAX_TEXT && !/[\r\n]/.test(v);
}

function scopesOf(v: unknown): string[] | undefined {
  const list = typeof v === 'string' ? v.split(/[\s,]+/) : Array.isArray(v) ? v : undefined;
  if (!list || !list.every((s) => typeof s === 'string' && /^[\x21-\x7e]{0,200}$/.test(s))) return undefined;
  return (list as string[]).filter((s) => s !== '');
}

/**
 * Validates one provider. A built-in name prefills the URLs, scopes and display name; an omitted or
 * empty client secret keeps the one already stored for that name, so the admin UI can save
 * settings it only saw without secrets.
 */
function provider(input: unknown, index: number, previous: ProviderConfig[], errors: Record<string, FieldError>): ProviderConfig | undefined {
  const at = `oauth2.providers.${index}`;
  const obj = objectInput(input, at, errors);
  if (!obj) return undefined;
  const problems: Record<string, FieldError> = {};
  const name = typeof obj.name === 'string' ? obj.name.trim().toLowerCase() : '';
  if (!NAME.test(name)) problems.name = { code: 'validation_invalid_name', message: 'Must be 1-40 lowercase letters, digits, "_" or "-".' };
  const preset = PRESETS[name];
  const old = previous.find((p) => p.name === name);
  const out = {
    name,
    displayName: obj.displayName ?? preset?.displayName ?? name,
    clientId: obj.clientId,
    clientSecret: obj.clientSecret === undefined || obj.clientSecret === '' ? old?.clientSecret : obj.clientSecret,
    authUrl: obj.authUrl ?? preset?.authUrl,
    tokenUrl: obj.tokenUrl ?? preset?.tokenUrl,
    userInfoUrl: obj.userInfoUrl ?? preset?.userInfoUrl,
    scopes: obj.scopes === undefined ? (preset?.scopes ?? ['openid', 'email', 'profile']) : scopesOf(obj.scopes),
    enabled: obj.enabled ?? true,
    pkce: obj.pkce ?? preset?.pkce ?? true,
    extra: obj.extra ?? undefined,
  };
  if (!shortText(out.displayName)) problems.displayName = { code: 'validation_invalid_value', message: 'Must be a single line of text.' };
  if (!shortText(out.clientId)) problems.clientId = { code: 'validation_required', message: 'Cannot be blank.' };
  if (!shortText(out.clientSecret)) problems.clientSecret = { code: 'validation_required', message: 'Cannot be blank.' };
  for (const key of ['authUrl', 'tokenUrl', 'userInfoUrl'] as const) {
    // Apple and OpenID Connect without a user-info URL read the user from the id_token.
    if (key === 'userInfoUrl' && (out.userInfoUrl === '' || out.userInfoUrl === undefined) && readsIdToken({ name, userInfoUrl: '' })) {
      out.userInfoUrl = '';
      continue;
    }
    if (!httpUrl(out[key])) problems[key] = { code: 'validation_invalid_url', message: 'Must be an http(s) URL.' };
  }
  if (out.extra !== undefined && !isPlainObject(out.extra)) problems.extra = { code: 'validation_invalid_value', message: 'Must be an object.' };
  if (!out.scopes) problems.scopes = { code: 'validation_invalid_scopes', message: 'Must be a list of scope names.' };
  if (typeof out.enabled !== 'boolean') problems.enabled = { code: 'validation_invalid_bool', message: 'Must be a boolean.' };
  if (typeof out.pkce !== 'boolean') problems.pkce = { code: 'validation_invalid_bool', message: 'Must be a boolean.' };
  for (const [key, problem] of Object.entries(problems)) errors[`${at}.${key}`] = problem;
  return Object.keys(problems).length > 0 ? undefined : (out as ProviderConfig);
}

/** The `oauth2` settings section: the provider list, replaced as a whole by PATCH. */
export const oauth2Section: SettingsSection<OAuth2Settings> = {
  name: 'oauth2',
  defaults: () => ({ providers: [] }),
  merge(input, current, errors) {
    const obj = objectInput(input, 'oauth2', errors);
    if (!obj || obj.providers === undefined) return current;
    if (!Array.isArray(obj.providers) || obj.providers.length > 50) {
      errors['oauth2.providers'] = { code: 'validation_invalid_value', message: 'Must be a list of at most 50 providers.' };
      return current;
    }
    const providers: ProviderConfig[] = [];
    obj.providers.forEach((p, i) => {
      const parsed = provider(p, i, current.providers, errors);
      if (!parsed) return;
      if (providers.some((q) => q.name === parsed.name)) {
        errors[`oauth2.providers.${i}.name`] = { code: 'validation_not_unique', message: 'Provider names must be unique.' };
      } else providers.push(parsed);
    });
    return { providers };
  },
  // The client secret never leaves the server.
  view: (value) => ({ providers: value.providers.map(({ clientSecret: _secret, ...rest }) => rest) }),
};
