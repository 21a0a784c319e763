import type { AuthSettings } from '../collections/auth-settings.ts';
import type { ProviderListing } from './oauth2/login.ts';

/**
 * `GET /api/collections/:c/auth-methods` in both of PocketBase's shapes: v0.22's keys, which SDK 0.21
 * reads (`usernamePassword`, `emailPassword`, `authProviders`), beside v0.23's (`password`, `oauth2`,
 * `otp`, `mfa`). Providers carry both `authUrl` (v0.22) and `authURL` (v0.23).
 */
export function authMethodsJson(settings: AuthSettings, listed: ProviderListing[]): Record<string, unknown> {
  const password = settings.passwordAuth.enabled;
  const identityFields = password ? settings.passwordAuth.identityFields : [];
  const oauth2 = settings.oauth2.enabled && listed.length > 0;
  const providers = oauth2 ? listed.map((p) => ({ ...p, authURL: p.authUrl, logo: '' })) : [];
  return {
    usernamePassword: identityFields.includes('username'),
    emailPassword: identityFields.includes('email'),
    onlyVerified: false,
    authProviders: providers,
    password: { enabled: password, identityFields },
    oauth2: { enabled: oauth2, providers },
    otp: { enabled: settings.otp.enabled, duration: settings.otp.enabled ? settings.otp.duration : 0 },
    mfa: { enabled: settings.mfa.enabled, duration: settings.mfa.enabled ? settings.mfa.duration : 0 },
  };
}
