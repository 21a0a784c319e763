import { decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { authSettingsOf } from '../collections/auth-settings.ts';
import type { CollectionService } from '../collections/service.ts';
import { SUPERUSERS_ID } from '../collections/superusers.ts';
import type { AdminAuth, RecordAuth } from '../context.ts';
import { serializeRecord } from '../records/serialize.ts';
import { shapeOf } from '../records/shape.ts';
import type { OneTimeToken } from './one-time-tokens.ts';
import { PRIVILEGED_VIEWER } from '../records/viewer.ts';
import type { Database } from '../storage/index.ts';
import type { AdminTokenSecrets } from './admins.ts';

/**
 * Tokens PocketBase issued, accepted after `cairn import pocketbase` so that a user (or superuser)
 * signed in to the PocketBase app stays signed in on Cairn (API contract §18). PocketBase signs a
 * record's token with HS256 under the record's `tokenKey` joined with a secret of its collection, one
 * per kind: `authToken`, `fileToken`, `verificationToken`, `passwordResetToken`, `emailChangeToken`
 * (before 0.23 the instance's `recordAuthToken`, `recordFileToken`, …, and for administrators
 * `adminAuthToken`, `adminFileToken`, `adminPasswordResetToken`). The import keeps each record's and
 * administrator's tokenKey and all those secrets (collection options; `_admins.tokenSecret` and
 * `tokenSecrets`), so the same check holds here: a token is valid until it expires, or until its
 * account's tokenKey changes (a new password), or the collection's secret does (a changed auth rule).
 * Collections made in Cairn have no such secret: only Cairn's own tokens work for them.
 *
 * The claim `type` names the kind since 0.23 (`auth`, `file`, `verification`, `passwordReset`,
 * `emailChange`); before, every token of a record says `authRecord` and every administrator's
 * `admin`, and only the secret tells the kinds apart. Either way a token checked against the secret
 * of another kind fails its signature, so no kind stands in for another.
 */

/** Where an administrator's PocketBase secrets are kept. */
export interface PocketBaseAdmins {
  tokenSecretOf(id: string): Promise<AdminTokenSecrets | undefined>;
}

type FlowKind = 'verification' | 'passwordReset' | 'emailChange';

interface Claims {
  id: string;
  type: string;
  collectionId?: string;
  refreshable?: boolean;
}

const JWT = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/;

/** The claims a token says it has, before any check; undefined when it cannot be PocketBase's. */
function unverified(token: string): Claims | undefined {
  if (!JWT.test(token)) return undefined;
  try {
    if (decodeProtectedHeader(token).alg !== 'HS256') return undefined;
    const claims = decodeJwt(token) as Record<string, unknown>;
    if (typeof claims.id !== 'string' || claims.id === '' || typeof claims.type !== 'string' || typeof claims.exp !== 'number') return undefined;
    if (claims.collectionId !== undefined && typeof claims.collectionId !== 'string') return undefined;
    return { id: claims.id, type: claims.type, collectionId: claims.collectionId as string | undefined, refreshable: claims.refreshable === false ? false : undefined };
  } catch {
    return undefined;
  }
}

/** Whether `token` is signed with `tokenKey + secret` and unexpired (jose checks `exp`, `nbf`, `iat`). */
async function signedWith(token: string, tokenKey: string, secret: string): Promise<boolean> {
  if (secret === '' || tokenKey === '') return false;
  try {
    await jwtVerify(token, new TextEncoder().encode(tokenKey + secret), { algorithms: ['HS256'] });
    return true;
  } catch {
    return false;
  }
}

export class PocketBaseTokens {
  constructor(
    private readonly admins: PocketBaseAdmins,
    private readonly collections: CollectionService,
  ) {}

  /**
   * The account a verification, password-reset or email-change link PocketBase mailed names (its
   * token: since 0.23 type `verification`, `passwordReset` or `emailChange`, before 0.23 `authRecord`
   * with an `email` claim; signed with the record's tokenKey and its collection's
   * `verificationToken`/`passwordResetToken`/`emailChangeToken` secret), with the address it was
   * mailed for and, for an email change, the new address; undefined for anything else. The
   * collection is the token's own, so the caller can tell a link of another collection apart.
   * A reset changes the tokenKey, so such a token works once.
   */
  async flowToken(token: unknown, db: Database, kind: FlowKind): Promise<OneTimeToken | undefined> {
    if (typeof token !== 'string' || token.length > 2000) return undefined;
    const claims = unverified(token);
    if (!claims || (claims.type !== kind && claims.type !== 'authRecord') || !claims.collectionId) return undefined;
    const collection = await this.collections.find(db, claims.collectionId);
    if (!collection || collection.type !== 'auth' || collection.id !== claims.collectionId) return undefined;
    const settings = authSettingsOf(collection);
    const config = kind === 'verification' ? settings.verificationToken : kind === 'passwordReset' ? settings.passwordResetToken : settings.emailChangeToken;
    const secret = config.secret ?? '';
    if (secret === '') return undefined;
    const row = await db.get<{ tokenKey: string }>(`SELECT "tokenKey" FROM ${shapeOf(collection).table} WHERE id = ?`, [claims.id]);
    if (!row || !(await signedWith(token, String(row.tokenKey ?? ''), secret))) return undefined;
    const { email, newEmail } = decodeJwt(token);
    if (typeof email !== 'string') return undefined;
    if (kind === 'emailChange' && typeof newEmail !== 'string') return undefined;
    return { collectionId: collection.id, recordId: claims.id, email, newEmail: typeof newEmail === 'string' ? newEmail : null };
  }

  /**
   * The administrator a password-reset link PocketBase mailed to a superuser names (since 0.23 type
   * `passwordReset` with `_superusers`' id, before 0.23 type `admin`; signed with the tokenKey and
   * `_superusers`' `passwordResetToken` secret, or the instance's `adminPasswordResetToken`), with the
   * address it was mailed for; undefined for anything else. Setting the password changes the
   * tokenKey, so such a link works once.
   */
  async adminResetToken(token: unknown): Promise<{ recordId: string; email: string } | undefined> {
    if (typeof token !== 'string' || token.length > 2000) return undefined;
    const claims = unverified(token);
    if (!claims) return undefined;
    const current = claims.type === 'passwordReset' && claims.collectionId === SUPERUSERS_ID;
    if (!current && !(claims.type === 'admin' && claims.collectionId === undefined)) return undefined;
    const admin = await this.admins.tokenSecretOf(claims.id);
    if (!admin || !(await signedWith(token, admin.tokenKey, admin.secrets.passwordResetToken ?? ''))) return undefined;
    const { email } = decodeJwt(token);
    if (typeof email !== 'string') return undefined;
    return { recordId: admin.id, email };
  }

  /**
   * The caller a PocketBase token names in database `db`: `kind` `auth` for the Authorization header,
   * `file` for a protected file's `?token=`. Undefined for anything that is not a valid PocketBase
   * token of an imported account (the caller then refuses it as it refuses any bad token).
   */
  async resolve(token: string, db: Database, kind: 'auth' | 'file'): Promise<AdminAuth | RecordAuth | undefined> {
    const claims = unverified(token);
    if (!claims) return undefined;
    // Before 0.23 a file token says `authRecord` or `admin`, as an auth token does; its secret differs.
    const wanted = kind === 'file' ? ['file', 'authRecord', 'admin'] : ['auth', 'authRecord', 'admin'];
    if (!wanted.includes(claims.type)) return undefined;
    const superuser = claims.type === 'admin' || (claims.collectionId === SUPERUSERS_ID && claims.type !== 'authRecord');
    if (superuser) {
      const admin = await this.admins.tokenSecretOf(claims.id);
      const secret = kind === 'file' ? (admin?.secrets.fileToken ?? '') : (admin?.tokenSecret ?? '');
      if (!admin || !(await signedWith(token, admin.tokenKey, secret))) return undefined;
      const auth: AdminAuth = { type: 'admin', id: admin.id, email: admin.email };
      if (claims.refreshable === false) auth.staticToken = true;
      if (claims.type === 'auth') auth.superuser = true;
      return auth;
    }
    if (!claims.collectionId) return undefined;
    const collection = await this.collections.find(db, claims.collectionId);
    if (!collection || collection.type !== 'auth' || collection.id !== claims.collectionId) return undefined;
    const settings = authSettingsOf(collection);
    const secret = (kind === 'file' ? settings.fileToken.secret : settings.authToken.secret) ?? '';
    if (secret === '') return undefined;
    const shape = shapeOf(collection);
    const row = await db.get<Record<string, unknown>>(`SELECT ${shape.selectList}, t0."tokenKey" FROM ${shape.table} t0 WHERE t0.id = ?`, [claims.id]);
    if (!row || !(await signedWith(token, String(row.tokenKey ?? ''), secret))) return undefined;
    const auth: RecordAuth = {
      type: 'record',
      id: claims.id,
      collectionId: collection.id,
      collectionName: collection.name,
      record: serializeRecord(row, shape, PRIVILEGED_VIEWER),
    };
    if (claims.refreshable === false) auth.staticToken = true;
    return auth;
  }
}
