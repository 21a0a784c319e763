import type { AuthSettings } from '../collections/auth-settings.ts';
import type { ProviderListing } from './oauth2/login.ts';
import { PRESETS } from './oauth2/providers.ts';

/**
 * The OAuth2 provider names Cairn knows, as PocketBase's `GET /api/collections/meta/oauth2-providers`
 * lists its own (`{name, displayName, logo}`, no URLs or secrets): the presets, whose URLs and scopes
 * a name fills in, then PocketBase's three generic OpenID Connect slots `oidc`, `oidc2`, `oidc3`
 * (any name without a preset is generic OAuth2/OIDC, its URLs given in the settings).
 */
export function knownOAuth2Providers(): Array<{ name: string; displayName: string; logo: string }> {
  const presets = Object.entries(PRESETS).map(([name, p]) => ({ name, displayName: p.displayName }));
  const generic = ['oidc', 'oidc2', 'oidc3'].map((name) => ({ name, displayName: 'OIDC' }));
  return [...presets, ...generic].map((p) => ({ ...p, logo: providerBadge(p.displayName) }));
}

/**
 * `GET /api/collections/:c/auth-methods` in both of PocketBase's shapes: v0.22's keys, which SDK 0.21
 * reads (`usernamePassword`, `emailPassword`, `authProviders`), beside v0.23's (`password`, `oauth2`,
 * `otp`, `mfa`). Providers carry both `authUrl` (v0.22) and `authURL` (v0.23).
 */
export function authMethodsJson(settings: AuthSettings, listed: ProviderListing[]): Record<string, unknown> {
  const password = settings.passwordAuth.enabled;
  const identityFields = password ? settings.passwordAuth.identityFields : [];
  const oauth2 = settings.oauth2.enabled && listed.length > 0;
  const providers = oauth2 ? listed.map((p) => ({ ...p, authURL: p.authUrl, logo: providerBadge(p.displayName || p.name) })) : [];
  return {
    usernamePassword: identityFields.includes('username'),
    emailPassword: identityFields.includes('email'),
    onlyVerified: false,
    authProviders: providers.map((p) => ({ ...p, logo: '' })),
    password: { identityFields, enabled: password },
    oauth2: { providers, enabled: oauth2 },
    otp: { enabled: settings.otp.enabled, duration: settings.otp.enabled ? settings.otp.duration : 0 },
    mfa: { enabled: settings.mfa.enabled, duration: settings.mfa.enabled ? settings.mfa.duration : 0 },
  };
}

/** A provider's `logo` (an SVG, as PocketBase's list has one): Cairn draws a round badge with the provider's initial. */
export function providerBadge(label: string): string {
  const initial = (label.trim()[0] ?? '?').toUpperCase().replace(/[<>&"']/g, '?');
  return `<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32" viewBox="0 0 32 32"><circle cx="16" cy="16" r="16" fill="#555"/><text x="16" y="21" font-family="sans-serif" font-size="15" fill="#fff" text-anchor="middle">${initial}</text></svg>`;
}
