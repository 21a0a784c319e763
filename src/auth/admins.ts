import { isEmail } from '../collections/fields/email.ts';
import { type ApiError, badRequest, conflict, type FieldError, forbidden, notFound, unauthorized, validationFailed } from '../errors.ts';
import { randomId } from '../lib/ids.ts';
import { nowIso } from '../lib/time.ts';
import { pagination } from '../records/query-params.ts';
import { type Database, orderColumn, type Queryable, type SchemaStep, type TransactionLock } from '../storage/index.ts';
import { SUPERUSERS_SELECT } from '../storage/superusers.ts';
import { hashPassword, MAX_PASSWORD_LENGTH, needsRehash, verifyDummy, verifyPassword } from './passwords.ts';
import { newTokenKey } from '../records/auth-fields.ts';

export interface AdminRow {
  id: string;
  email: string;
  avatar: number;
  passwordHash: string;
  tokenKey: string;
  created: string;
  updated: string;
}

export const adminsTableStep: SchemaStep = {
  id: 'system.admins',
  async up(tx) {
    await tx.exec(`CREATE TABLE _admins (
      id TEXT PRIMARY KEY NOT NULL,
      email ${tx.dialect.columnDefinition('citext', false)} UNIQUE,
      avatar INTEGER DEFAULT 0 NOT NULL,
      passwordHash TEXT NOT NULL,
      tokenKey TEXT NOT NULL,
      lastResetSentAt TEXT DEFAULT '' NOT NULL,
      created TEXT NOT NULL,
      updated TEXT NOT NULL${orderColumn(tx.dialect)}
    )`);
  },
};

/**
 * The secret PocketBase signed an imported administrator's tokens with besides their tokenKey
 * (`_superusers`' `authToken.secret`, or before 0.23 the instance's `adminAuthToken.secret`), so that
 * a superuser signed in to PocketBase stays signed in after `cairn import pocketbase`
 * (src/auth/pocketbase-tokens.ts). Empty for every other administrator.
 */
export const adminsTokenSecretStep: SchemaStep = {
  id: 'system.admins.pocketbase-token-secret',
  async up(tx) {
    await tx.exec(`ALTER TABLE _admins ADD COLUMN "tokenSecret" TEXT DEFAULT '' NOT NULL`);
  },
};

/**
 * The secrets of PocketBase's other token kinds for an imported administrator, as JSON keyed by
 * PocketBase's option names (`fileToken`, `passwordResetToken`, and since 0.23 `emailChangeToken`,
 * `verificationToken`): `_superusers`' options, or before 0.23 the instance's `adminFileToken` and
 * `adminPasswordResetToken`. With the tokenKey they check the file tokens and the password-reset
 * links PocketBase issued to a superuser. Empty for every other administrator.
 */
export const adminsTokenSecretsStep: SchemaStep = {
  id: 'system.admins.pocketbase-token-secrets',
  async up(tx) {
    await tx.exec(`ALTER TABLE _admins ADD COLUMN "tokenSecrets" TEXT DEFAULT '' NOT NULL`);
  },
};

/**
 * On PostgreSQL, what views of every database read as PocketBase's `_superusers`: a view of the
 * administrators' public columns in the instance schema (storage/superusers.ts). SQLite reads
 * system.db through a virtual table instead (storage/sqlite/superusers.ts).
 */
export const superusersViewStep: SchemaStep = {
  id: 'system.superusers-view',
  async up(tx) {
    if (tx.dialect.name === 'postgres') await tx.exec(`CREATE VIEW _superusers AS ${SUPERUSERS_SELECT}`);
  },
};

/** PocketBase's token kinds other than `authToken`, whose secrets `_admins.tokenSecrets` keeps. */
export type PocketBaseTokenKind = 'fileToken' | 'passwordResetToken' | 'emailChangeToken' | 'verificationToken';

/** What an imported administrator's PocketBase tokens are checked with. */
export interface AdminTokenSecrets {
  id: string;
  email: string;
  tokenKey: string;
  /** `authToken`'s secret. */
  tokenSecret: string;
  /** The other kinds' secrets (missing: none kept). */
  secrets: Partial<Record<PocketBaseTokenKind, string>>;
}

function parseSecrets(text: string): AdminTokenSecrets['secrets'] {
  if (text === '') return {};
  try {
    const parsed = JSON.parse(text) as Record<string, unknown>;
    return Object.fromEntries(Object.entries(parsed).filter(([, v]) => typeof v === 'string' && v !== '')) as AdminTokenSecrets['secrets'];
  } catch {
    return {};
  }
}

/** An administrator as the API returns it (PocketBase's admin model); never the hash or token key. */
export function adminJson(a: AdminRow): Record<string, unknown> {
  return { id: a.id, created: a.created, updated: a.updated, avatar: a.avatar, email: a.email };
}

const COLUMNS = 'id, email, avatar, passwordHash, tokenKey, created, updated';

/**
 * Held by what decides on the number of administrators (creating the first, deleting one): on
 * PostgreSQL two such transactions would otherwise each count before the other's write.
 */
const COUNT_LOCK = 'cairn.admins.count';

/** Administrators are instance-wide and live in system.db. */
export class AdminService {
  constructor(
    private readonly system: Database,
    private readonly minPasswordLength: number,
    private readonly lock?: TransactionLock,
  ) {}

  /** Every administrator's address (system alerts go to all of them). */
  async emails(): Promise<string[]> {
    return (await this.system.all<{ email: string }>('SELECT email FROM _admins ORDER BY created')).map((r) => r.email);
  }

  async count(): Promise<number> {
    return Number((await this.system.get<{ n: number }>('SELECT COUNT(*) AS n FROM _admins'))?.n ?? 0);
  }

  async find(id: string): Promise<AdminRow | undefined> {
    return this.system.lookup<AdminRow>(`SELECT ${COLUMNS} FROM _admins WHERE id = ?`, [id]);
  }

  async get(id: string): Promise<AdminRow> {
    const admin = await this.find(id);
    if (!admin) throw notFound();
    return admin;
  }

  async list(query: Record<string, unknown>) {
    const { page, perPage } = pagination(query);
    const totalItems = await this.count();
    const items = await this.system.all<AdminRow>(`SELECT ${COLUMNS} FROM _admins ORDER BY created, ${this.system.dialect.insertionOrder('_admins')} LIMIT ? OFFSET ?`, [perPage, (page - 1) * perPage]);
    return { page, perPage, totalItems, totalPages: Math.ceil(totalItems / perPage), items: items.map(adminJson) };
  }

  /** The secrets PocketBase signed an imported administrator's tokens with (src/auth/pocketbase-tokens.ts). */
  async tokenSecretOf(id: string): Promise<AdminTokenSecrets | undefined> {
    const row = await this.system.get<{ id: string; email: string; tokenKey: string; tokenSecret: string; tokenSecrets: string }>(
      `SELECT id, email, tokenKey, "tokenSecret", "tokenSecrets" FROM _admins WHERE id = ? AND ("tokenSecret" <> '' OR "tokenSecrets" <> '')`,
      [id],
    );
    if (!row) return undefined;
    return { id: row.id, email: row.email, tokenKey: row.tokenKey, tokenSecret: row.tokenSecret, secrets: parseSecrets(row.tokenSecrets) };
  }

  async findByEmail(email: string): Promise<AdminRow | undefined> {
    return this.system.get<AdminRow>(`SELECT ${COLUMNS} FROM _admins WHERE email = ?`, [email]);
  }

  /** What is wrong with a new administrator password, if anything. */
  passwordProblem(password: unknown): FieldError | undefined {
    if (typeof password !== 'string' || [...password].length < this.minPasswordLength) {
      return { code: 'validation_min_text_constraint', message: `Must be at least ${this.minPasswordLength} character(s).` };
    }
    if (password.length > MAX_PASSWORD_LENGTH) return { code: 'validation_max_text_constraint', message: `Must be no more than ${MAX_PASSWORD_LENGTH} character(s).` };
    return undefined;
  }

  private async validated(body: Record<string, unknown>, creating: boolean, requireConfirm = false): Promise<{ email?: string; passwordHash?: string; avatar?: number }> {
    const errors: Record<string, FieldError> = {};
    const out: { email?: string; passwordHash?: string; avatar?: number } = {};
    if (creating || body.email !== undefined) {
      if (typeof body.email !== 'string' || !isEmail(body.email.trim())) errors.email = { code: 'validation_is_email', message: 'Must be a valid email address.' };
      else out.email = body.email.trim();
    }
    if (creating || body.password !== undefined) {
      const password = body.password;
      const problem = this.passwordProblem(password);
      if (problem) {
        errors.password = problem;
      } else if (body.passwordConfirm !== undefined && body.passwordConfirm !== password) {
        errors.passwordConfirm = { code: 'validation_values_mismatch', message: "Values don't match." };
      } else if (requireConfirm && body.passwordConfirm === undefined) {
        errors.passwordConfirm = { code: 'validation_required', message: 'Cannot be blank.' };
      }
    }
    if (body.avatar !== undefined) {
      if (!Number.isInteger(body.avatar) || (body.avatar as number) < 0 || (body.avatar as number) > 9) errors.avatar = { code: 'validation_invalid_value', message: 'Must be an integer from 0 to 9.' };
      else out.avatar = body.avatar as number;
    }
    if (Object.keys(errors).length > 0) throw validationFailed(errors, creating ? 'Failed to create admin.' : 'Failed to update admin.');
    if (typeof body.password === 'string') out.passwordHash = await hashPassword(body.password);
    return out;
  }

  /**
   * Adds an administrator. With `onlyFirst`, only while there is none: otherwise that error is thrown
   * (what the guest's request answers once one exists).
   */
  async create(body: unknown, options: { requireConfirm?: boolean; onlyFirst?: () => ApiError } = {}): Promise<AdminRow> {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('The request body must be a JSON object.');
    const v = await this.validated(body as Record<string, unknown>, true, options.requireConfirm);
    const now = nowIso();
    const admin: AdminRow = { id: randomId(), email: v.email!, avatar: v.avatar ?? 0, passwordHash: v.passwordHash!, tokenKey: newTokenKey(), created: now, updated: now };
    const { onlyFirst } = options;
    // The first administrator: the check and the insert are one statement, which is enough on SQLite;
    // on PostgreSQL two of them each see no row until the other commits, hence the lock.
    const insert = onlyFirst
      ? `INSERT INTO _admins (${COLUMNS}) SELECT ?, ?, ?, ?, ?, ?, ? WHERE NOT EXISTS (SELECT 1 FROM _admins)`
      : `INSERT INTO _admins (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?)`;
    try {
      await this.system.transaction(async (tx) => {
        if (onlyFirst) await this.lock?.(tx, COUNT_LOCK);
        const done = await tx.run(insert, [admin.id, admin.email, admin.avatar, admin.passwordHash, admin.tokenKey, admin.created, admin.updated]);
        if (done.changes === 0 && onlyFirst) throw onlyFirst();
      });
    } catch (err) {
      if (this.system.dialect.classifyError(err).kind === 'unique') {
        throw validationFailed({ email: { code: 'validation_not_unique', message: 'An administrator with this email already exists.' } }, 'Failed to create admin.');
      }
      throw err;
    }
    return admin;
  }

  /**
   * `POST /api/admins` without a token: v0.22 creates the first administrator so, and answers a guest
   * as any other once one exists.
   */
  async createFirst(body: unknown): Promise<AdminRow> {
    if ((await this.count()) > 0) throw unauthorized();
    return this.create(body, { onlyFirst: unauthorized });
  }

  /** Creates the first administrator; refused once any exists. */
  async init(body: unknown): Promise<AdminRow> {
    const exists = () => forbidden('An administrator already exists; sign in instead.');
    // Checked first too, so that a refusal costs no password hashing.
    if ((await this.count()) > 0) throw exists();
    return this.create(body, { requireConfirm: true, onlyFirst: exists });
  }

  async update(id: string, body: unknown): Promise<AdminRow> {
    if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('The request body must be a JSON object.');
    await this.get(id);
    const v = await this.validated(body as Record<string, unknown>, false);
    try {
      // The row is read locked, in the write's transaction and after the (slow) hashing: a PATCH of
      // other properties sent at the same time waits, then starts from this one's result instead of
      // writing back what it read before.
      return await this.system.transaction(async (tx) => {
        const current = await this.row(tx, id, true);
        if (!current) throw notFound();
        const next: AdminRow = {
          ...current,
          email: v.email ?? current.email,
          avatar: v.avatar ?? current.avatar,
          passwordHash: v.passwordHash ?? current.passwordHash,
          // A new password revokes the administrator's earlier tokens.
          tokenKey: v.passwordHash ? newTokenKey() : current.tokenKey,
          updated: nowIso(),
        };
        await tx.run('UPDATE _admins SET email = ?, avatar = ?, passwordHash = ?, tokenKey = ?, updated = ? WHERE id = ?', [
          next.email,
          next.avatar,
          next.passwordHash,
          next.tokenKey,
          next.updated,
          id,
        ]);
        return next;
      });
    } catch (err) {
      if (this.system.dialect.classifyError(err).kind === 'unique') {
        throw validationFailed({ email: { code: 'validation_not_unique', message: 'An administrator with this email already exists.' } }, 'Failed to update admin.');
      }
      throw err;
    }
  }

  /** Refused for the last administrator, also when the others are deleted at the same time. */
  async delete(id: string): Promise<void> {
    await this.system.transaction(async (tx) => {
      await this.lock?.(tx, COUNT_LOCK);
      if (!(await this.row(tx, id))) throw notFound();
      const n = Number((await tx.get<{ n: number }>('SELECT COUNT(*) AS n FROM _admins'))?.n ?? 0);
      if (n <= 1) throw conflict('The only administrator cannot be deleted.');
      await tx.run('DELETE FROM _admins WHERE id = ?', [id]);
    });
  }

  /** An administrator's row read in `db`; with `forWrite`, locked until the caller's transaction ends. */
  private row(db: Queryable, id: string, forWrite = false): Promise<AdminRow | undefined> {
    return db.get<AdminRow>(`SELECT ${COLUMNS} FROM _admins WHERE id = ?${forWrite ? db.dialect.lockForWrite('_admins') : ''}`, [id]);
  }

  /** Checks credentials with the same work for unknown emails as for wrong passwords. */
  async authenticate(identity: unknown, password: unknown): Promise<AdminRow> {
    if (typeof identity !== 'string' || typeof password !== 'string' || identity === '' || password === '') {
      throw validationFailed(
        {
          ...(typeof identity !== 'string' || identity === '' ? { identity: { code: 'validation_required', message: 'Cannot be blank.' } } : {}),
          ...(typeof password !== 'string' || password === '' ? { password: { code: 'validation_required', message: 'Cannot be blank.' } } : {}),
        },
        'Failed to authenticate.',
      );
    }
    const admin = await this.findByEmail(identity.trim());
    if (!admin) {
      await verifyDummy(password);
      throw unauthorized('Invalid credentials.');
    }
    if (!(await verifyPassword(admin.passwordHash, password))) throw unauthorized('Invalid credentials.');
    if (needsRehash(admin.passwordHash)) {
      // An administrator imported from PocketBase: bcrypt gives way to Cairn's own hash, as for users.
      const hash = await hashPassword(password);
      await this.system.run('UPDATE _admins SET passwordHash = ? WHERE id = ? AND passwordHash = ?', [hash, admin.id, admin.passwordHash]);
      return { ...admin, passwordHash: hash };
    }
    return admin;
  }
}
