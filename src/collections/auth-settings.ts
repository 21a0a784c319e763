import type { FieldError } from '../errors.ts';
import type { Collection } from './model.ts';
import { isPlainObject } from '../lib/objects.ts';

/**
 * The settings of an auth collection in PocketBase ≥ 0.23's terms. They are kept in the collection's
 * `options` (so they move with it through the stored JSON) and answered both there and at the top
 * level of the collection (src/collections/pocketbase-shapes.ts), secrets left out.
 */

/** A token kind's lifetime, and the secret PocketBase signed that kind with (`tokenKey + secret`). */
export interface TokenConfig {
  /** Seconds; for `authToken`, 0 means the instance's CAIRN_TOKEN_TTL. */
  duration: number;
  /**
   * Set only on collections carried from PocketBase (`cairn import pocketbase`): tokens PocketBase
   * signed with it stay valid for the collection's records (src/auth/pocketbase-tokens.ts). Cairn
   * signs its own tokens with its own key. Never answered.
   */
  secret?: string;
}

/** A mail's subject and HTML body, with PocketBase's placeholders (`{APP_NAME}`, `{TOKEN}`, `{RECORD:field}`, …). */
export interface EmailTemplate {
  subject: string;
  body: string;
}

/** An OAuth2 provider of one collection (PocketBase ≥ 0.23 keeps them per collection). */
export interface CollectionProvider {
  name: string;
  displayName: string;
  clientId: string;
  /** Never answered. */
  clientSecret: string;
  authUrl: string;
  tokenUrl: string;
  userInfoUrl: string;
  /** PocketBase's PKCE override (null: the provider's default). */
  pkce: boolean | null;
  /** Provider-specific values PocketBase keeps (Apple's team id, …). */
  extra: Record<string, unknown> | null;
}

/** Which fields of the record an OAuth2 sign-up fills from the provider's profile. */
export interface MappedFields {
  id: string;
  name: string;
  username: string;
  avatarURL: string;
}

export interface AuthSettings {
  /**
   * What a record must meet to sign in, checked with every sign-in and refresh (`verified = true`);
   * "" lets every record sign in, null none (superusers' impersonation aside).
   */
  authRule: string | null;
  /**
   * Who manages the collection's records as an administrator would (change their email and password
   * without the old one, set `verified`), checked against the record, in addition to the create and
   * update rules; null: administrators only.
   */
  manageRule: string | null;
  /** Password sign-in, and the fields an `identity` is looked up in, in order. */
  passwordAuth: { enabled: boolean; identityFields: string[] };
  /** OAuth2 sign-in through the collection's providers and the instance's (`GET/PATCH /api/settings`). */
  oauth2: { enabled: boolean; providers: CollectionProvider[]; mappedFields: MappedFields };
  /** One-time codes by mail: valid `duration` seconds, `length` digits. */
  otp: { enabled: boolean; duration: number; length: number; emailTemplate?: EmailTemplate };
  /** A second, different sign-in within `duration` seconds, for the records `rule` matches (all when empty). */
  mfa: { enabled: boolean; duration: number; rule: string };
  /** PocketBase's mail about a sign-in from a new place (kept; Cairn sends no such mail). */
  authAlert: { enabled: boolean; emailTemplate?: EmailTemplate };
  authToken: TokenConfig;
  passwordResetToken: TokenConfig;
  emailChangeToken: TokenConfig;
  verificationToken: TokenConfig;
  fileToken: TokenConfig;
  /** The collection's own mails (undefined: Cairn's). */
  verificationTemplate?: EmailTemplate;
  resetPasswordTemplate?: EmailTemplate;
  confirmEmailChangeTemplate?: EmailTemplate;
}

export type AuthSettingKey = keyof AuthSettings;

export const AUTH_SETTING_KEYS: readonly AuthSettingKey[] = [
  'authRule',
  'manageRule',
  'passwordAuth',
  'oauth2',
  'otp',
  'mfa',
  'authAlert',
  'authToken',
  'passwordResetToken',
  'emailChangeToken',
  'verificationToken',
  'fileToken',
  'verificationTemplate',
  'resetPasswordTemplate',
  'confirmEmailChangeTemplate',
];

export const TOKEN_KINDS = ['authToken', 'passwordResetToken', 'emailChangeToken', 'verificationToken', 'fileToken'] as const;
export type TokenKind = (typeof TOKEN_KINDS)[number];

const TEMPLATE_KEYS = ['verificationTemplate', 'resetPasswordTemplate', 'confirmEmailChangeTemplate'] as const;

/**
 * PocketBase's defaults, except OAuth2 (Cairn's providers are also the instance's, on for every
 * collection) and the lifetimes Cairn had before these settings (a verification link lasts a week).
 */
export const DEFAULT_AUTH_SETTINGS: Readonly<AuthSettings> = Object.freeze({
  authRule: '',
  manageRule: null,
  passwordAuth: { enabled: true, identityFields: ['email'] },
  oauth2: { enabled: true, providers: [], mappedFields: { id: '', name: '', username: '', avatarURL: '' } },
  otp: { enabled: false, duration: 180, length: 8 },
  mfa: { enabled: false, duration: 1800, rule: '' },
  authAlert: { enabled: false },
  authToken: { duration: 0 },
  passwordResetToken: { duration: 1800 },
  emailChangeToken: { duration: 1800 },
  verificationToken: { duration: 7 * 86400 },
  fileToken: { duration: 180 },
});

const LIMITS = {
  otpDuration: [10, 86400],
  otpLength: [4, 20],
  mfaDuration: [10, 86400],
  // PocketBase's own ceiling (about three years).
  tokenDuration: [10, 94670856],
} as const;

const cache = new WeakMap<Collection, AuthSettings>();

/** The collection's own template of an email flow's mail, when it has one. */
export function flowTemplateOf(settings: AuthSettings, purpose: 'verification' | 'password-reset' | 'email-change'): EmailTemplate | undefined {
  return purpose === 'verification' ? settings.verificationTemplate : purpose === 'password-reset' ? settings.resetPasswordTemplate : settings.confirmEmailChangeTemplate;
}

/** The settings of an auth collection, defaults filled in (cached per immutable collection object). */
export function authSettingsOf(collection: Collection): AuthSettings {
  let settings = cache.get(collection);
  if (!settings) {
    const o = collection.options;
    const part = <K extends AuthSettingKey>(key: K): AuthSettings[K] => {
      const fallback: unknown = DEFAULT_AUTH_SETTINGS[key];
      if (!isPlainObject(fallback)) return (o[key] === undefined ? fallback : o[key]) as AuthSettings[K];
      return { ...fallback, ...(isPlainObject(o[key]) ? (o[key] as object) : {}) } as AuthSettings[K];
    };
    settings = Object.fromEntries(AUTH_SETTING_KEYS.map((k) => [k, part(k)])) as unknown as AuthSettings;
    for (const key of TEMPLATE_KEYS) if (!isPlainObject(o[key])) delete settings[key];
    cache.set(collection, settings);
  }
  return settings;
}

/**
 * The settings as answers show them: no token secret, no client secret (PocketBase hides them too),
 * `authToken.duration` 0 shown as the instance's lifetime.
 */
export function publicAuthSettings(settings: AuthSettings, tokenTtl: number): Record<string, unknown> {
  const out: Record<string, unknown> = { ...settings };
  for (const kind of TOKEN_KINDS) out[kind] = { duration: settings[kind].duration };
  out.authToken = { duration: settings.authToken.duration || tokenTtl };
  out.oauth2 = { ...settings.oauth2, providers: settings.oauth2.providers.map(({ clientSecret: _secret, ...rest }) => rest) };
  return out;
}

/** Fields an identity may be looked up in: `email`, or a unique text or email field of the collection. */
function identityCandidates(collection: Pick<Collection, 'fields' | 'indexes'>): Set<string> {
  const unique = new Set(collection.fields.filter((f) => f.unique && (f.type === 'text' || f.type === 'email')).map((f) => f.name));
  // A field with a unique index of its own (PocketBase's way of making a username unique) counts too.
  for (const text of collection.indexes ?? []) {
    const m = /^\s*CREATE\s+UNIQUE\s+INDEX\b[^(]*\(\s*[`"[]?([A-Za-z_][A-Za-z0-9_]*)[`"\]]?\s*\)/i.exec(text);
    if (m && collection.fields.some((f) => f.name === m[1] && (f.type === 'text' || f.type === 'email'))) unique.add(m[1]);
  }
  return new Set(['email', ...unique]);
}

function readTemplate(raw: unknown, path: string, problem: (path: string, message: string) => void): EmailTemplate | undefined | null {
  if (raw === undefined) return undefined;
  if (raw === null) return null;
  if (!isPlainObject(raw) || typeof raw.subject !== 'string' || typeof raw.body !== 'string' || raw.subject.trim() === '' || raw.body.trim() === '') {
    problem(path, 'Must be {subject, body}, both non-empty.');
    return undefined;
  }
  if (raw.subject.length > 1000 || /[\r\n]/.test(raw.subject) || raw.body.length > 100_000) {
    problem(path, 'The subject must be one line of at most 1000 characters, the body at most 100000.');
    return undefined;
  }
  return { subject: raw.subject, body: raw.body };
}

/** A collection's OAuth2 provider, as stored; the URLs of built-in names are filled in by the OAuth2 domain when used. */
function readProvider(raw: unknown, index: number, previous: readonly CollectionProvider[], problem: (path: string, message: string) => void): CollectionProvider | undefined {
  const at = `oauth2.providers.${index}`;
  if (!isPlainObject(raw)) {
    problem(at, 'Must be an object.');
    return undefined;
  }
  const text = (key: string, alias?: string): string => {
    const v = raw[key] ?? (alias ? raw[alias] : undefined);
    return typeof v === 'string' ? v.trim() : '';
  };
  const name = text('name').toLowerCase();
  if (!/^[a-z0-9][a-z0-9_-]{0,39}$/.test(name)) {
    problem(`${at}.name`, 'Must be 1-40 lowercase letters, digits, "_" or "-".');
    return undefined;
  }
  const old = previous.find((p) => p.name === name);
  const provider: CollectionProvider = {
    name,
    displayName: text('displayName'),
    clientId: text('clientId'),
    // An omitted secret keeps the stored one: answers never show it, and a client echoes what it read.
    clientSecret: text('clientSecret') || old?.clientSecret || '',
    authUrl: text('authURL', 'authUrl'),
    tokenUrl: text('tokenURL', 'tokenUrl'),
    userInfoUrl: text('userInfoURL', 'userInfoUrl'),
    pkce: typeof raw.pkce === 'boolean' ? raw.pkce : null,
    extra: isPlainObject(raw.extra) ? raw.extra : null,
  };
  for (const key of ['authUrl', 'tokenUrl', 'userInfoUrl'] as const) {
    const url = provider[key];
    if (url !== '' && !/^https?:\/\/\S+$/i.test(url)) problem(`${at}.${key.replace('Url', 'URL')}`, 'Must be an http(s) URL.');
  }
  if (provider.clientId === '') problem(`${at}.clientId`, 'Cannot be blank.');
  if (provider.clientSecret === '') problem(`${at}.clientSecret`, 'Cannot be blank.');
  return provider;
}

/**
 * Checks and completes the auth settings about to be stored: each key merged over `current` (so a
 * partial `{otp: {enabled: true}}` keeps the rest, as PocketBase binds a body over the collection),
 * unknown sub-keys dropped, values range-checked. Problems are keyed `otp.duration` and so on. Rules
 * (`authRule`, `manageRule`, `mfa.rule`) are checked as rules by the caller.
 */
export function normalizeAuthSettings(
  input: Partial<Record<AuthSettingKey, unknown>>,
  current: AuthSettings,
  collection: Pick<Collection, 'fields' | 'indexes'>,
  errors: Record<string, FieldError>,
): AuthSettings {
  const out = structuredClone(current) as AuthSettings;
  const r = new SettingsReader(input, errors);
  for (const key of ['authRule', 'manageRule'] as const) {
    const v = input[key];
    if (v === undefined) continue;
    if (v !== null && typeof v !== 'string') r.problem(key, 'Must be null, "" or a filter expression.');
    // PocketBase keeps an empty manage rule as null: "" would hand every caller an administrator's power.
    else out[key] = key === 'manageRule' && v === '' ? null : v;
  }
  // As PocketBase does, a changed auth rule voids the tokens it signed under the old one.
  if (out.authRule !== current.authRule) delete out.authToken.secret;
  readPasswordAuth(r, out, collection);
  readOAuth2(r, out, current, collection);
  const otp = r.section('otp', out.otp);
  if (otp) {
    r.int('otp.duration', otp.duration, LIMITS.otpDuration, (n) => (out.otp.duration = n));
    r.int('otp.length', otp.length, LIMITS.otpLength, (n) => (out.otp.length = n));
    r.template(otp.emailTemplate, 'otp.emailTemplate', out.otp, 'emailTemplate');
  }
  const mfa = r.section('mfa', out.mfa);
  if (mfa) {
    r.int('mfa.duration', mfa.duration, LIMITS.mfaDuration, (n) => (out.mfa.duration = n));
    if (mfa.rule !== undefined && mfa.rule !== null) {
      if (typeof mfa.rule !== 'string') r.problem('mfa.rule', 'Must be a filter expression, or "" for every record.');
      else out.mfa.rule = mfa.rule;
    }
  }
  const alert = r.section('authAlert', out.authAlert);
  if (alert) r.template(alert.emailTemplate, 'authAlert.emailTemplate', out.authAlert, 'emailTemplate');
  readTokens(r, out);
  for (const key of TEMPLATE_KEYS) r.template(input[key], key, out, key);
  return out;
}

/** The input's sections and values, each problem noted under its path (`otp.duration`). */
class SettingsReader {
  constructor(
    private readonly input: Partial<Record<AuthSettingKey, unknown>>,
    private readonly errors: Record<string, FieldError>,
  ) {}

  problem(path: string, message: string): void {
    this.errors[path] = { code: 'validation_invalid_value', message };
  }

  error(path: string, error: FieldError): void {
    this.errors[path] = error;
  }

  /** A section sent (an object), its `enabled` applied to `target` when it has one; undefined when not sent. */
  section(key: AuthSettingKey, target?: { enabled: boolean }): Record<string, unknown> | undefined {
    const v = this.input[key];
    if (v === undefined || v === null) return undefined;
    if (!isPlainObject(v)) {
      this.problem(key, 'Must be an object.');
      return undefined;
    }
    if (target && v.enabled !== undefined) {
      if (typeof v.enabled !== 'boolean') this.problem(`${key}.enabled`, 'Must be a boolean.');
      else target.enabled = v.enabled;
    }
    return v;
  }

  int(path: string, value: unknown, [min, max]: readonly [number, number], set: (n: number) => void): void {
    if (value === undefined) return;
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) this.problem(path, `Must be an integer from ${min} to ${max}.`);
    else set(value);
  }

  /** A mail template sent at `path`, into `target[key]`: null removes it (the default then). */
  template<K extends string>(raw: unknown, path: string, target: { [k in K]?: EmailTemplate }, key: K): void {
    const template = readTemplate(raw, path, (p, m) => this.problem(p, m));
    if (template === null) delete target[key];
    else if (template) target[key] = template;
  }
}

/** `passwordAuth`: its identity fields are `email` and the collection's unique text fields. */
function readPasswordAuth(r: SettingsReader, out: AuthSettings, collection: Pick<Collection, 'fields' | 'indexes'>): void {
  const password = r.section('passwordAuth', out.passwordAuth);
  if (password?.identityFields !== undefined) {
    const allowed = identityCandidates(collection);
    const fields = password.identityFields;
    const missing = Array.isArray(fields) ? fields.find((f) => typeof f === 'string' && f !== 'email' && !collection.fields.some((x) => x.name === f)) : undefined;
    if (typeof missing === 'string') {
      // PocketBase's code for a name that is no field of the collection.
      r.error('passwordAuth.identityFields', { code: 'validation_missing_field', message: `Invalid or missing field ${missing}.` });
    } else if (!Array.isArray(fields) || fields.some((f) => typeof f !== 'string' || !allowed.has(f))) {
      r.problem('passwordAuth.identityFields', `Must be a list of identity fields: ${[...allowed].map((f) => `"${f}"`).join(', ')} (unique text fields can be identities).`);
    } else out.passwordAuth.identityFields = [...new Set(fields as string[])];
  }
  if (out.passwordAuth.enabled && out.passwordAuth.identityFields.length === 0) r.problem('passwordAuth.identityFields', 'Name at least one identity field.');
}

/** `oauth2`: its providers (null: none) and the fields a provider's profile fills. */
function readOAuth2(r: SettingsReader, out: AuthSettings, current: AuthSettings, collection: Pick<Collection, 'fields' | 'indexes'>): void {
  const oauth2 = r.section('oauth2', out.oauth2);
  if (!oauth2) return;
  if (oauth2.providers !== undefined && oauth2.providers !== null) {
    if (!Array.isArray(oauth2.providers) || oauth2.providers.length > 50) r.problem('oauth2.providers', 'Must be a list of at most 50 providers.');
    else {
      const providers: CollectionProvider[] = [];
      oauth2.providers.forEach((raw, i) => {
        const p = readProvider(raw, i, current.oauth2.providers, (path, message) => r.problem(path, message));
        if (!p) return;
        if (providers.some((q) => q.name === p.name)) r.problem(`oauth2.providers.${i}.name`, `The provider ${p.name} is already registered.`);
        else providers.push(p);
      });
      out.oauth2.providers = providers;
    }
  } else if (oauth2.providers === null) out.oauth2.providers = [];
  if (oauth2.mappedFields === undefined || oauth2.mappedFields === null) return;
  if (!isPlainObject(oauth2.mappedFields)) {
    r.problem('oauth2.mappedFields', 'Must be an object.');
    return;
  }
  for (const key of ['id', 'name', 'username', 'avatarURL'] as const) {
    const v = oauth2.mappedFields[key];
    if (v === undefined) continue;
    if (typeof v !== 'string' || (v !== '' && !collection.fields.some((f) => f.name === v))) r.problem(`oauth2.mappedFields.${key}`, 'Must name a field of the collection, or be "".');
    else out.oauth2.mappedFields[key] = v;
  }
}

/** Each token kind's duration and secret. */
function readTokens(r: SettingsReader, out: AuthSettings): void {
  for (const kind of TOKEN_KINDS) {
    const token = r.section(kind);
    if (!token) continue;
    if (token.duration === 0 && kind === 'authToken') out.authToken.duration = 0;
    else r.int(`${kind}.duration`, token.duration, LIMITS.tokenDuration, (n) => (out[kind].duration = n));
    // The secret is never answered; a client that echoes the collection sends none and keeps it. Only
    // an empty string removes it (PocketBase's tokens then stop working here).
    if (token.secret === '') delete out[kind].secret;
    else if (token.secret !== undefined) {
      if (typeof token.secret !== 'string' || token.secret.length < 30 || token.secret.length > 255) r.problem(`${kind}.secret`, 'Must be 30 to 255 characters.');
      else out[kind].secret = token.secret;
    }
  }
}
