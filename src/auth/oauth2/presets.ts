/**
 * The OAuth2 providers PocketBase v0.39 has built in, under its names: where each one's endpoints are,
 * the scopes it asks for, whether it takes PKCE, and how its user info is asked for and read. An app
 * moved from PocketBase keeps signing in with the providers it configured by name only (PocketBase
 * stores no URLs for them). Read from PocketBase's `tools/auth`; the shapes are the vendors'.
 *
 * A profile's email is given only where PocketBase takes it as the user's (verified, or from a
 * provider that shares no other): it may link the sign-in to an existing account of that address.
 */

import { looseClaims } from './id-token.ts';

type Json = Record<string, unknown>;

/** A provider's user, as its user info gives it. */
export interface PresetProfile {
  id?: string;
  name?: string;
  username?: string;
  email?: string;
  /** Whether the address may link the sign-in to an existing account of it; by default, when there is one. */
  verified?: boolean;
  avatarUrl?: string;
}

export interface UserInfoRequest {
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
}

export interface Preset {
  displayName: string;
  authUrl: string;
  tokenUrl: string;
  userInfoUrl: string;
  scopes: string[];
  /** False for the providers that refuse PKCE's parameters. */
  pkce: boolean;
  /** The user-info request where it is more than a GET with the access token. */
  request?(clientId: string): UserInfoRequest;
  /**
   * The user from the user info (or the id_token's claims), the token answer and the provider's
   * `extra` settings; a string says why the account may not sign in.
   */
  read(raw: Json, token: Json, extra: Json): PresetProfile | string;
  /** Where the user is read from the token's `id_token` instead of a user-info request (Apple). */
  idToken?: { jwksUrl: string; issuer: string };
  /** Parameters the authorization URL carries besides OAuth2's own (Apple's `response_mode`). */
  authParams?: Record<string, string>;
  /** A second request for the verified primary email, made when `read` found none. */
  emails?: { url(userInfoUrl: string): string; pick(body: unknown): string | undefined };
}

/** The value at a dotted path (`data.viewer.id`, `images.0.url`). */
export function at(raw: unknown, path: string): unknown {
  let v: unknown = raw;
  for (const key of path.split('.')) {
    if (v === null || typeof v !== 'object') return undefined;
    v = (v as Json)[key];
  }
  return v;
}

/** A text or a number as text; anything else (and '') undefined. */
export function text(v: unknown): string | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return String(v);
  return typeof v === 'string' && v.trim() !== '' ? v.trim() : undefined;
}

const t = (raw: unknown, path: string) => text(at(raw, path));
/** Go's cast.ToBool, which PocketBase reads `email_verified` with: a boolean, a non-zero number, or "true", "1", "t", … */
export const castBool = (v: unknown): boolean =>
  v === true || (typeof v === 'number' && v !== 0) || (typeof v === 'string' && ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(v));
const when = (condition: unknown, value: string | undefined) => (condition === true ? value : undefined);
const list = (v: unknown): Json[] => (Array.isArray(v) ? (v.filter((e) => e !== null && typeof e === 'object') as Json[]) : []);
const EMAIL = /^[^@\s]+@[^@\s]+\.[^@\s]+$/;

const sameAs = (suffix: string) => (userInfoUrl: string) => `${userInfoUrl.replace(/\/+$/, '')}${suffix}`;
const verifiedPrimary = (body: unknown) => text(list(body).find((e) => e.verified === true && e.primary === true)?.email);

function preset(displayName: string, base: string, urls: [string, string, string], scopes: string[], read: Preset['read'], more: Partial<Preset> = {}): Preset {
  const full = (u: string) => (u === '' || u.startsWith('https://') ? u : `${base}${u}`);
  return { displayName, authUrl: full(urls[0]), tokenUrl: full(urls[1]), userInfoUrl: full(urls[2]), scopes, pkce: true, read, ...more };
}

/**
 * Microsoft's address: Graph's `mail` by default; with PocketBase ≥ 0.39.6's `extra.idTokenEmailClaim`,
 * a claim of the id_token (asked for with `openid`) that says the address is verified.
 */
function microsoftEmail(r: Json, token: Json, claim: unknown): { email?: string; verified?: boolean } {
  const claims = looseClaims(token.id_token) ?? {};
  const edov = () => (castBool(claims.xms_edov) ? t(claims, 'email') : undefined);
  const primary = () => (typeof claims.verified_primary_email === 'string' ? text(claims.verified_primary_email) : undefined);
  switch (claim) {
    case 'email':
      return { email: t(claims, 'email') };
    case 'email_and_xms_edov':
      return { email: edov() };
    case 'verified_primary_email':
      return { email: primary() };
    case 'any_verified':
      return { email: primary() ?? edov() };
    default:
      // Graph's `mail` is whatever a tenant's administrator typed (the "nOAuth" takeover): PocketBase
      // takes it as the user's; Cairn makes a new account with it but links no existing one by it.
      return { email: t(r, 'mail'), verified: false };
  }
}

/** OpenID Connect's standard claims, from user info or an id_token (`oidc`, `oidc2`, `oidc3`). */
export function readOidc(r: Json): PresetProfile {
  return { id: t(r, 'sub'), name: t(r, 'name'), username: t(r, 'preferred_username'), email: castBool(r.email_verified) ? t(r, 'email') : undefined, avatarUrl: t(r, 'picture') };
}

/** PocketBase's generic OpenID Connect slots: user info when a URL is given, else the id_token. */
export const OIDC_NAMES = new Set(['oidc', 'oidc2', 'oidc3']);

/** Whether the provider's user comes from the token's id_token rather than a user-info URL. */
export function readsIdToken(provider: { name: string; userInfoUrl: string }): boolean {
  return PRESETS[provider.name]?.idToken !== undefined || (OIDC_NAMES.has(provider.name) && provider.userInfoUrl === '');
}

const graphql = (query: string) => () => ({ method: 'POST' as const, headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query }) });

export const PRESETS: Record<string, Preset> = {
  google: preset(
    'Google',
    '',
    ['https://accounts.google.com/o/oauth2/v2/auth', 'https://oauth2.googleapis.com/token', 'https://www.googleapis.com/oauth2/v3/userinfo'],
    ['https://www.googleapis.com/auth/userinfo.profile', 'https://www.googleapis.com/auth/userinfo.email'],
    (r) => ({ id: t(r, 'sub'), name: t(r, 'name'), email: when(r.email_verified, t(r, 'email')), avatarUrl: t(r, 'picture') }),
  ),
  apple: preset(
    'Apple',
    '',
    ['https://appleid.apple.com/auth/authorize', 'https://appleid.apple.com/auth/token', ''],
    ['name', 'email'],
    // Apple gives the user's name only to the first redirect's form, not in its token.
    (r) => ({ id: t(r, 'sub'), name: t(r, 'name'), email: castBool(r.email_verified) ? t(r, 'email') : undefined }),
    { idToken: { jwksUrl: 'https://appleid.apple.com/auth/keys', issuer: 'https://appleid.apple.com' }, authParams: { response_mode: 'form_post' } },
  ),
  microsoft: preset(
    'Microsoft',
    '',
    ['https://login.microsoftonline.com/common/oauth2/v2.0/authorize', 'https://login.microsoftonline.com/common/oauth2/v2.0/token', 'https://graph.microsoft.com/v1.0/me'],
    ['User.Read'],
    (r, token, extra) => ({ id: t(r, 'id'), name: t(r, 'displayName'), ...microsoftEmail(r, token, extra.idTokenEmailClaim) }),
  ),
  yandex: preset(
    'Yandex',
    '',
    ['https://oauth.yandex.com/authorize', 'https://oauth.yandex.com/token', 'https://login.yandex.ru/info'],
    ['login:email', 'login:avatar', 'login:info'],
    (r) => ({
      id: t(r, 'id'),
      name: t(r, 'real_name'),
      username: t(r, 'login'),
      email: t(r, 'default_email'),
      avatarUrl: r.is_avatar_empty === true ? undefined : `https://avatars.yandex.net/get-yapic/${t(r, 'default_avatar_id') ?? ''}/islands-200`,
    }),
  ),
  facebook: preset(
    'Facebook',
    '',
    ['https://www.facebook.com/v3.2/dialog/oauth', 'https://graph.facebook.com/v3.2/oauth/access_token', 'https://graph.facebook.com/me?fields=name,email,picture.type(large)'],
    ['email'],
    (r) => ({ id: t(r, 'id'), name: t(r, 'name'), email: t(r, 'email'), avatarUrl: t(r, 'picture.data.url') }),
  ),
  instagram2: preset(
    'Instagram',
    '',
    [
      'https://www.instagram.com/oauth/authorize',
      'https://api.instagram.com/oauth/access_token',
      'https://graph.instagram.com/me?fields=id,username,account_type,user_id,name,profile_picture_url,followers_count,follows_count,media_count',
    ],
    ['instagram_business_basic'],
    (r) => ({ id: t(r, 'user_id'), name: t(r, 'name'), username: t(r, 'username'), avatarUrl: t(r, 'profile_picture_url') }),
  ),
  github: preset(
    'GitHub',
    '',
    ['https://github.com/login/oauth/authorize', 'https://github.com/login/oauth/access_token', 'https://api.github.com/user'],
    ['read:user', 'user:email'],
    (r) => ({ id: t(r, 'id'), name: t(r, 'name'), username: t(r, 'login'), avatarUrl: t(r, 'avatar_url') }),
    { emails: { url: sameAs('/emails'), pick: verifiedPrimary } },
  ),
  gitlab: preset(
    'GitLab',
    'https://gitlab.com',
    ['/oauth/authorize', '/oauth/token', '/api/v4/user'],
    ['read_user'],
    (r) => ({
      id: t(r, 'id'),
      name: t(r, 'name'),
      username: t(r, 'username'),
      email: Number.isNaN(Date.parse(t(r, 'confirmed_at') ?? '')) ? undefined : t(r, 'email'),
      avatarUrl: t(r, 'avatar_url'),
    }),
  ),
  bitbucket: preset(
    'Bitbucket',
    '',
    ['https://bitbucket.org/site/oauth2/authorize', 'https://bitbucket.org/site/oauth2/access_token', 'https://api.bitbucket.org/2.0/user'],
    ['account'],
    (r) =>
      r.account_status !== 'active'
        ? 'the Bitbucket user is not active'
        : { id: t(r, 'uuid'), name: t(r, 'display_name'), username: t(r, 'username'), avatarUrl: t(r, 'links.avatar.href') },
    { pkce: false, emails: { url: sameAs('/emails'), pick: (b) => text(list(at(b, 'values')).find((e) => e.is_primary === true && e.is_confirmed === true)?.email) } },
  ),
  gitee: preset(
    'Gitee',
    'https://gitee.com',
    ['/oauth/authorize', '/oauth/token', '/api/v5/user'],
    ['user_info', 'emails'],
    (r) => {
      const email = t(r, 'email');
      return { id: t(r, 'id'), name: t(r, 'name'), username: t(r, 'login'), email: email && EMAIL.test(email) ? email : undefined, avatarUrl: t(r, 'avatar_url') };
    },
    {
      emails: {
        url: (userInfoUrl) => new URL('/api/v5/emails', userInfoUrl).href,
        pick: (b) => text(list(b).find((e) => e.state === 'confirmed' && Array.isArray(e.scope) && e.scope.includes('primary'))?.email),
      },
    },
  ),
  gitea: preset(
    'Gitea/Forgejo',
    'https://gitea.com',
    ['/login/oauth/authorize', '/login/oauth/access_token', '/api/v1/user'],
    ['read:user', 'user:email'],
    (r) => (r.active === false ? 'the Gitea user is not active' : { id: t(r, 'id'), name: t(r, 'full_name'), username: t(r, 'login'), avatarUrl: t(r, 'avatar_url') }),
    { emails: { url: sameAs('/emails'), pick: verifiedPrimary } },
  ),
  discord: preset(
    'Discord',
    'https://discord.com/api',
    ['/oauth2/authorize', '/oauth2/token', '/users/@me'],
    ['identify', 'email'],
    (r) => {
      const id = t(r, 'id');
      const username = t(r, 'username');
      const discriminator = t(r, 'discriminator');
      const avatar = t(r, 'avatar');
      return {
        id,
        name: t(r, 'global_name') ?? (username && discriminator && discriminator !== '0' ? `${username}#${discriminator}` : username),
        username,
        email: when(r.verified, t(r, 'email')),
        avatarUrl: avatar && id ? `https://cdn.discordapp.com/avatars/${id}/${avatar}.png` : undefined,
      };
    },
  ),
  twitter: preset(
    'X/Twitter',
    '',
    ['https://x.com/i/oauth2/authorize', 'https://api.x.com/2/oauth2/token', 'https://api.x.com/2/users/me?user.fields=id,name,username,profile_image_url,confirmed_email'],
    // tweet.read is not used, but without it X answers the user request with a 403.
    ['users.read', 'users.email', 'tweet.read'],
    (r) => ({ id: t(r, 'data.id'), name: t(r, 'data.name'), username: t(r, 'data.username'), email: t(r, 'data.confirmed_email'), avatarUrl: t(r, 'data.profile_image_url') }),
  ),
  kakao: preset(
    'Kakao',
    '',
    ['https://kauth.kakao.com/oauth/authorize', 'https://kauth.kakao.com/oauth/token', 'https://kapi.kakao.com/v2/user/me'],
    ['account_email', 'profile_nickname', 'profile_image'],
    (r) => ({
      id: t(r, 'id'),
      username: t(r, 'properties.nickname'),
      email: at(r, 'kakao_account.is_email_valid') === true ? when(at(r, 'kakao_account.is_email_verified'), t(r, 'kakao_account.email')) : undefined,
      avatarUrl: t(r, 'properties.profile_image'),
    }),
  ),
  vk: preset(
    'ВКонтакте',
    '',
    ['https://oauth.vk.com/authorize', 'https://oauth.vk.com/access_token', 'https://api.vk.com/method/users.get?fields=photo_max,screen_name&v=5.131'],
    ['email'],
    (r, token) => {
      const user = list(r.response)[0];
      if (!user) return 'missing response entry';
      const name = `${text(user.first_name) ?? ''} ${text(user.last_name) ?? ''}`.trim();
      // VK gives the address with the token, not with the user.
      return { id: t(user, 'id'), name: name || undefined, username: t(user, 'screen_name'), email: t(token, 'email'), avatarUrl: t(user, 'photo_max') };
    },
    { pkce: false },
  ),
  linear: preset(
    'Linear',
    '',
    ['https://linear.app/oauth/authorize', 'https://api.linear.app/oauth/token', 'https://api.linear.app/graphql'],
    ['read'],
    (r) =>
      at(r, 'data.viewer.active') !== true
        ? 'the Linear user account is not active'
        : { id: t(r, 'data.viewer.id'), name: t(r, 'data.viewer.name'), username: t(r, 'data.viewer.displayName'), email: t(r, 'data.viewer.email'), avatarUrl: t(r, 'data.viewer.avatarUrl') },
    { pkce: false, request: graphql('query Me { viewer { id displayName name email avatarUrl active } }') },
  ),
  notion: preset(
    'Notion',
    'https://api.notion.com/v1',
    ['/oauth/authorize', '/oauth/token', '/users/me'],
    [],
    (r) => ({ id: t(r, 'bot.owner.user.id'), name: t(r, 'bot.owner.user.name'), email: t(r, 'bot.owner.user.person.email'), avatarUrl: t(r, 'bot.owner.user.avatar_url') }),
    { request: () => ({ method: 'GET', headers: { 'notion-version': '2022-06-28' } }) },
  ),
  monday: preset(
    'monday.com',
    '',
    ['https://auth.monday.com/oauth2/authorize', 'https://auth.monday.com/oauth2/token', 'https://api.monday.com/v2'],
    ['me:read'],
    (r) =>
      at(r, 'data.me.enabled') !== true
        ? 'the monday.com user account is not enabled'
        : { id: t(r, 'data.me.id'), name: t(r, 'data.me.name'), email: when(at(r, 'data.me.is_verified'), t(r, 'data.me.email')), avatarUrl: t(r, 'data.me.photo_small') },
    { request: graphql('query { me { id enabled name email is_verified photo_small }}') },
  ),
  lark: preset(
    'Lark',
    '',
    ['https://accounts.feishu.cn/open-apis/authen/v1/authorize', 'https://open.feishu.cn/open-apis/authen/v2/oauth/token', 'https://open.feishu.cn/open-apis/authen/v1/user_info'],
    [],
    (r) => ({ id: t(r, 'data.union_id'), name: t(r, 'data.name'), avatarUrl: t(r, 'data.avatar_url') }),
  ),
  box: preset(
    'Box',
    '',
    ['https://account.box.com/api/oauth2/authorize', 'https://api.box.com/oauth2/token', 'https://api.box.com/2.0/users/me'],
    ['root_readonly'],
    (r) => (r.status !== 'active' ? `Box user account is not active (status: ${JSON.stringify(r.status ?? '')})` : { id: t(r, 'id'), name: t(r, 'name'), email: t(r, 'login'), avatarUrl: t(r, 'avatar_url') }),
  ),
  spotify: preset(
    'Spotify',
    '',
    ['https://accounts.spotify.com/authorize', 'https://accounts.spotify.com/api/token', 'https://api.spotify.com/v1/me'],
    // Spotify does not say whether an address is verified: none is asked for.
    ['user-read-private'],
    (r) => ({ id: t(r, 'id'), name: t(r, 'display_name'), avatarUrl: t(list(r.images)[0], 'url') }),
  ),
  trakt: preset(
    'Trakt',
    '',
    ['https://trakt.tv/oauth/authorize', 'https://api.trakt.tv/oauth/token', 'https://api.trakt.tv/users/settings'],
    [],
    (r) => ({ id: t(r, 'user.ids.uuid'), name: t(r, 'user.name'), username: t(r, 'user.username'), avatarUrl: t(r, 'user.images.avatar.full') }),
    { request: (clientId) => ({ method: 'GET', headers: { 'content-type': 'application/json', 'trakt-api-key': clientId, 'trakt-api-version': '2' } }) },
  ),
  twitch: preset(
    'Twitch',
    '',
    ['https://id.twitch.tv/oauth2/authorize', 'https://id.twitch.tv/oauth2/token', 'https://api.twitch.tv/helix/users'],
    ['user:read:email'],
    (r) => {
      const user = list(r.data)[0];
      if (!user) return 'failed to fetch AuthUser data';
      return { id: t(user, 'id'), name: t(user, 'display_name'), username: t(user, 'login'), email: t(user, 'email'), avatarUrl: t(user, 'profile_image_url') };
    },
    { request: (clientId) => ({ method: 'GET', headers: { 'client-id': clientId } }) },
  ),
  patreon: preset(
    'Patreon',
    '',
    [
      'https://www.patreon.com/oauth2/authorize',
      'https://www.patreon.com/api/oauth2/token',
      'https://www.patreon.com/api/oauth2/v2/identity?fields%5Buser%5D=full_name,email,vanity,image_url,is_email_verified',
    ],
    ['identity', 'identity[email]'],
    (r) => ({
      id: t(r, 'data.id'),
      name: t(r, 'data.attributes.full_name'),
      username: t(r, 'data.attributes.vanity'),
      email: when(at(r, 'data.attributes.is_email_verified'), t(r, 'data.attributes.email')),
      avatarUrl: t(r, 'data.attributes.image_url'),
    }),
  ),
  strava: preset(
    'Strava',
    'https://www.strava.com',
    ['/oauth/authorize', '/api/v3/oauth/token', '/api/v3/athlete'],
    ['profile:read_all'],
    (r) => ({
      id: r.id === 0 ? undefined : t(r, 'id'),
      name: `${text(r.firstname) ?? ''} ${text(r.lastname) ?? ''}`.trim() || undefined,
      username: t(r, 'username'),
      avatarUrl: t(r, 'profile'),
    }),
  ),
  wakatime: preset(
    'WakaTime',
    'https://wakatime.com',
    ['/oauth/authorize', '/oauth/token', '/api/v1/users/current'],
    ['email'],
    (r) => ({
      id: t(r, 'data.id'),
      name: t(r, 'data.display_name'),
      username: t(r, 'data.username'),
      email: when(at(r, 'data.is_email_confirmed'), t(r, 'data.email')),
      avatarUrl: when(at(r, 'data.photo_public'), t(r, 'data.photo')),
    }),
  ),
  livechat: preset(
    'LiveChat',
    '',
    ['https://accounts.livechat.com/', 'https://accounts.livechat.com/token', 'https://accounts.livechat.com/v2/accounts/me'],
    // Its scopes are chosen in the provider's dashboard.
    [],
    (r) => ({ id: t(r, 'account_id'), name: t(r, 'name'), email: when(r.email_verified, t(r, 'email')), avatarUrl: t(r, 'avatar_url') }),
  ),
  mailcow: preset(
    'mailcow',
    '',
    // A mailcow server is the app's own: its URLs are given in the settings.
    ['', '', ''],
    ['profile'],
    (r) =>
      r.active !== 1
        ? 'the mailcow user is not active'
        : { id: t(r, 'id'), name: t(r, 'full_name'), username: t(r, 'username')?.split('@')[0], email: t(r, 'email') },
  ),
  planningcenter: preset(
    'Planning Center',
    'https://api.planningcenteronline.com',
    ['/oauth/authorize', '/oauth/token', '/people/v2/me'],
    ['people'],
    // Its people have several addresses, none said to be verified: none is taken.
    (r) => (at(r, 'data.attributes.status') !== 'active' ? 'the user is not active' : { id: t(r, 'data.id'), name: t(r, 'data.attributes.name'), avatarUrl: t(r, 'data.attributes.avatar') }),
  ),
};
