import type { FieldError } from '../errors.ts';
import type { Collection } from './model.ts';

/**
 * The settings of an auth collection in PocketBase ≥ 0.23's terms. They are kept in the collection's
 * `options` (so they move with it through the stored JSON) and answered both there and at the top
 * level of the collection (src/collections/pocketbase-shapes.ts).
 */
export interface AuthSettings {
  /** Password sign-in, and the fields an `identity` is looked up in, in order. */
  passwordAuth: { enabled: boolean; identityFields: string[] };
  /** OAuth2 sign-in through the instance's providers (`GET/PATCH /api/settings`). */
  oauth2: { enabled: boolean };
  /** One-time codes by mail: valid `duration` seconds, `length` digits. */
  otp: { enabled: boolean; duration: number; length: number };
  /** A second, different sign-in within `duration` seconds, for the records `rule` matches (all when empty). */
  mfa: { enabled: boolean; duration: number; rule: string };
  /** Lifetime of the collection's auth tokens in seconds; 0 means the instance's CAIRN_TOKEN_TTL. */
  authToken: { duration: number };
}

export type AuthSettingKey = keyof AuthSettings;

export const AUTH_SETTING_KEYS: readonly AuthSettingKey[] = ['passwordAuth', 'oauth2', 'otp', 'mfa', 'authToken'];

/** PocketBase's defaults, except OAuth2: Cairn's providers are the instance's, on for every collection. */
export const DEFAULT_AUTH_SETTINGS: Readonly<AuthSettings> = Object.freeze({
  passwordAuth: { enabled: true, identityFields: ['email'] },
  oauth2: { enabled: true },
  otp: { enabled: false, duration: 180, length: 8 },
  mfa: { enabled: false, duration: 1800, rule: '' },
  authToken: { duration: 0 },
});

const LIMITS = {
  otpDuration: [10, 86400],
  otpLength: [4, 20],
  mfaDuration: [10, 86400],
  // PocketBase's own ceiling (about three years).
  tokenDuration: [10, 94670856],
} as const;

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

const cache = new WeakMap<Collection, AuthSettings>();

/** The settings of an auth collection, defaults filled in (cached per immutable collection object). */
export function authSettingsOf(collection: Collection): AuthSettings {
  let settings = cache.get(collection);
  if (!settings) {
    const o = collection.options;
    const part = <K extends AuthSettingKey>(key: K): AuthSettings[K] => ({ ...DEFAULT_AUTH_SETTINGS[key], ...(isPlainObject(o[key]) ? (o[key] as object) : {}) });
    settings = { passwordAuth: part('passwordAuth'), oauth2: part('oauth2'), otp: part('otp'), mfa: part('mfa'), authToken: part('authToken') };
    cache.set(collection, settings);
  }
  return settings;
}

/** Fields an identity may be looked up in: `email`, or a unique text or email field of the collection. */
function identityCandidates(collection: Pick<Collection, 'fields'>): Set<string> {
  return new Set(['email', ...collection.fields.filter((f) => f.unique && (f.type === 'text' || f.type === 'email')).map((f) => f.name)]);
}

/**
 * Checks and completes the auth settings about to be stored: each key merged over `current` (so a
 * partial `{otp: {enabled: true}}` keeps the rest, as PocketBase binds a body over the collection),
 * unknown sub-keys dropped, values range-checked. Problems are keyed `otp.duration` and so on.
 */
export function normalizeAuthSettings(
  input: Partial<Record<AuthSettingKey, unknown>>,
  current: AuthSettings,
  collection: Pick<Collection, 'fields'>,
  errors: Record<string, FieldError>,
): AuthSettings {
  const out = structuredClone(current);
  const problem = (path: string, message: string) => (errors[path] = { code: 'validation_invalid_value', message });
  const read = (key: AuthSettingKey): Record<string, unknown> | undefined => {
    const v = input[key];
    if (v === undefined || v === null) return undefined;
    if (!isPlainObject(v)) {
      problem(key, 'Must be an object.');
      return undefined;
    }
    return v;
  };
  const bool = (key: AuthSettingKey, raw: Record<string, unknown>, target: { enabled: boolean }) => {
    if (raw.enabled === undefined) return;
    if (typeof raw.enabled !== 'boolean') problem(`${key}.enabled`, 'Must be a boolean.');
    else target.enabled = raw.enabled;
  };
  const int = (path: string, value: unknown, [min, max]: readonly [number, number], set: (n: number) => void) => {
    if (value === undefined) return;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) problem(path, `Must be an integer from ${min} to ${max}.`);
    else set(value);
  };

  const password = read('passwordAuth');
  if (password) {
    bool('passwordAuth', password, out.passwordAuth);
    if (password.identityFields !== undefined) {
      const allowed = identityCandidates(collection);
      const fields = password.identityFields;
      if (!Array.isArray(fields) || fields.some((f) => typeof f !== 'string' || !allowed.has(f))) {
        problem('passwordAuth.identityFields', `Must be a list of identity fields: ${[...allowed].map((f) => `"${f}"`).join(', ')} (unique text fields can be identities).`);
      } else out.passwordAuth.identityFields = [...new Set(fields as string[])];
    }
  }
  if (out.passwordAuth.enabled && out.passwordAuth.identityFields.length === 0) problem('passwordAuth.identityFields', 'Name at least one identity field.');

  const oauth2 = read('oauth2');
  if (oauth2) bool('oauth2', oauth2, out.oauth2);

  const otp = read('otp');
  if (otp) {
    bool('otp', otp, out.otp);
    int('otp.duration', otp.duration, LIMITS.otpDuration, (n) => (out.otp.duration = n));
    int('otp.length', otp.length, LIMITS.otpLength, (n) => (out.otp.length = n));
  }

  const mfa = read('mfa');
  if (mfa) {
    bool('mfa', mfa, out.mfa);
    int('mfa.duration', mfa.duration, LIMITS.mfaDuration, (n) => (out.mfa.duration = n));
    if (mfa.rule !== undefined && mfa.rule !== null) {
      if (typeof mfa.rule !== 'string') problem('mfa.rule', 'Must be a filter expression, or "" for every record.');
      else out.mfa.rule = mfa.rule;
    }
  }

  const token = read('authToken');
  if (token && token.duration !== undefined && token.duration !== 0) {
    int('authToken.duration', token.duration, LIMITS.tokenDuration, (n) => (out.authToken.duration = n));
  } else if (token && token.duration === 0) out.authToken.duration = 0;
  return out;
}
