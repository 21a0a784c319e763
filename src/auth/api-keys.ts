import { createHmac } from 'node:crypto';
import type { ApiKeyAuth, Auth } from '../context.ts';
import { badRequest, type FieldError, notFound, unauthorized, validationFailed } from '../errors.ts';
import { randomId, randomSecret } from '../lib/ids.ts';
import { nowIso } from '../lib/time.ts';
import { pagination } from '../records/query-params.ts';
import { type Database, orderColumn, type Queryable, type SchemaStep } from '../storage/index.ts';
import { newTokenKey } from '../records/auth-fields.ts';
import { API_KEY_TOKEN_TTL, type AuthClaims, tokenKeyFingerprint, type TokenService } from './tokens.ts';

/** API keys live in the database they were created in: a key from `a` is unknown in `b`. */
export const apiKeysTableStep: SchemaStep = {
  id: 'auth.api_keys',
  async up(tx) {
    await tx.exec(`CREATE TABLE _api_keys (
      id TEXT PRIMARY KEY NOT NULL,
      name TEXT NOT NULL,
      enabled INTEGER DEFAULT 1 NOT NULL,
      roles TEXT DEFAULT '[]' NOT NULL,
      keyHash TEXT NOT NULL UNIQUE,
      tokenKey TEXT NOT NULL,
      created TEXT NOT NULL,
      updated TEXT NOT NULL${orderColumn(tx.dialect)}
    )`);
  },
};

interface ApiKeyRow {
  id: string;
  name: string;
  enabled: number;
  roles: string;
  keyHash: string;
  tokenKey: string;
  created: string;
  updated: string;
}

export interface ApiKeyJson {
  id: string;
  name: string;
  enabled: boolean;
  roles: string[];
  created: string;
  updated: string;
}

/** The creation and rotation answer: the only time `key` is ever shown. */
export type IssuedApiKey = ApiKeyJson & { key: string; token: string };

/** Prefix of every key: recognisable by secret scanners, and never shaped like a JWT. */
export const API_KEY_PREFIX = 'cairn_';
const MAX_NAME = 255;
const MAX_ROLES = 32;
const ROLE = /^[A-Za-z0-9_.:-]{1,64}$/;
const COLUMNS = 'id, name, enabled, roles, keyHash, tokenKey, created, updated';

function toJson(row: ApiKeyRow): ApiKeyJson {
  return { id: row.id, name: row.name, enabled: row.enabled === 1, roles: JSON.parse(row.roles) as string[], created: row.created, updated: row.updated };
}

/** `roles` as a list: an array of strings, or one string (comma-separated names are split). */
function parseRoles(value: unknown, errors: Record<string, FieldError>): string[] | undefined {
  const invalid = { code: 'validation_invalid_roles', message: 'Must be a role name or a list of role names (letters, digits, _ . : -).' };
  let list: unknown[];
  if (value === null || value === '') list = [];
  else if (typeof value === 'string') list = value.split(',');
  else if (Array.isArray(value)) list = value;
  else {
    errors.roles = invalid;
    return undefined;
  }
  const roles: string[] = [];
  for (const item of list) {
    const role = typeof item === 'string' ? item.trim() : undefined;
    if (role === undefined || !ROLE.test(role)) {
      errors.roles = invalid;
      return undefined;
    }
    if (!roles.includes(role)) roles.push(role);
  }
  if (roles.length > MAX_ROLES) {
    errors.roles = { code: 'validation_too_many_roles', message: `At most ${MAX_ROLES} roles.` };
    return undefined;
  }
  return roles;
}

function parseInput(body: unknown, creating: boolean): { name?: string; enabled?: boolean; roles?: string[] } {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw badRequest('The request body must be a JSON object.');
  const input = body as Record<string, unknown>;
  const errors: Record<string, FieldError> = {};
  const out: { name?: string; enabled?: boolean; roles?: string[] } = {};
  if (creating || input.name !== undefined) {
    const name = typeof input.name === 'string' ? input.name.trim() : '';
    if (name === '') errors.name = { code: 'validation_required', message: 'Cannot be blank.' };
    else if (name.length > MAX_NAME) errors.name = { code: 'validation_max_text_constraint', message: `Must be no more than ${MAX_NAME} character(s).` };
    else out.name = name;
  }
  if (input.enabled !== undefined) {
    if (typeof input.enabled !== 'boolean') errors.enabled = { code: 'validation_invalid_bool', message: 'Must be a boolean.' };
    else out.enabled = input.enabled;
  }
  if (input.roles !== undefined) out.roles = parseRoles(input.roles, errors);
  if (Object.keys(errors).length > 0) throw validationFailed(errors, creating ? 'Failed to create the API key.' : 'Failed to update the API key.');
  return out;
}

/**
 * API keys of one database: created, listed, changed, rotated and deleted by administrators, and
 * resolved on every request that presents one. Keys are random 256-bit secrets, so they are stored
 * as an HMAC-SHA256 under an instance-derived key: a fast hash is enough against guessing at that
 * entropy, and a memory-hard KDF here would make every API request a denial-of-service lever.
 */
export class ApiKeyService {
  constructor(
    private readonly hashKey: Uint8Array,
    private readonly tokens: TokenService,
  ) {}

  private hash(key: string): string {
    return createHmac('sha256', this.hashKey).update(key).digest('base64url');
  }

  private async issue(dbName: string, row: ApiKeyRow, key: string): Promise<IssuedApiKey> {
    const token = await this.tokens.sign({ id: row.id, type: 'apikey', db: dbName, tokenKey: row.tokenKey }, API_KEY_TOKEN_TTL);
    return { ...toJson(row), key, token };
  }

  /** The key's row; with `forWrite`, locked until the caller's transaction ends. */
  private async row(db: Queryable, id: string, forWrite = false): Promise<ApiKeyRow> {
    const row = await db.get<ApiKeyRow>(`SELECT ${COLUMNS} FROM _api_keys WHERE id = ?${forWrite ? db.dialect.lockForWrite('_api_keys') : ''}`, [id]);
    if (!row) throw notFound(`API key "${id}" not found.`);
    return row;
  }

  async create(db: Database, dbName: string, body: unknown): Promise<IssuedApiKey> {
    const input = parseInput(body, true);
    const key = API_KEY_PREFIX + randomSecret(32);
    const now = nowIso();
    const row: ApiKeyRow = {
      id: randomId(),
      name: input.name!,
      enabled: input.enabled === false ? 0 : 1,
      roles: JSON.stringify(input.roles ?? []),
      keyHash: this.hash(key),
      tokenKey: newTokenKey(),
      created: now,
      updated: now,
    };
    await db.run(`INSERT INTO _api_keys (${COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, [
      row.id,
      row.name,
      row.enabled,
      row.roles,
      row.keyHash,
      row.tokenKey,
      row.created,
      row.updated,
    ]);
    return this.issue(dbName, row, key);
  }

  async list(db: Database, query: Record<string, unknown>) {
    const { page, perPage } = pagination(query);
    const totalItems = Number((await db.get<{ n: number }>('SELECT COUNT(*) AS n FROM _api_keys'))?.n ?? 0);
    const rows = await db.all<ApiKeyRow>(`SELECT ${COLUMNS} FROM _api_keys ORDER BY created, ${db.dialect.insertionOrder('_api_keys')} LIMIT ? OFFSET ?`, [perPage, (page - 1) * perPage]);
    return { page, perPage, totalItems, totalPages: Math.ceil(totalItems / perPage), items: rows.map(toJson) };
  }

  async get(db: Database, id: string): Promise<ApiKeyJson> {
    return toJson(await this.row(db, id));
  }

  async update(db: Database, id: string, body: unknown): Promise<ApiKeyJson> {
    const input = parseInput(body, false);
    // The row is read locked, in the write's transaction: a PATCH of other properties sent at the same
    // time waits, then starts from this one's result instead of writing back what it read before.
    return db.transaction(async (tx) => {
      const current = await this.row(tx, id, true);
      const next: ApiKeyRow = {
        ...current,
        name: input.name ?? current.name,
        enabled: input.enabled === undefined ? current.enabled : input.enabled ? 1 : 0,
        roles: input.roles === undefined ? current.roles : JSON.stringify(input.roles),
        updated: nowIso(),
      };
      await tx.run('UPDATE _api_keys SET name = ?, enabled = ?, roles = ?, updated = ? WHERE id = ?', [next.name, next.enabled, next.roles, next.updated, id]);
      return toJson(next);
    });
  }

  async delete(db: Database, id: string): Promise<void> {
    const { changes } = await db.run('DELETE FROM _api_keys WHERE id = ?', [id]);
    if (changes === 0) throw notFound(`API key "${id}" not found.`);
  }

  /** A new key and token; the old key and every token issued for it stop working at once. */
  async rotate(db: Database, dbName: string, id: string): Promise<IssuedApiKey> {
    const key = API_KEY_PREFIX + randomSecret(32);
    // The key as the UPDATE left it: one deleted or renamed meanwhile is answered as it now is.
    const next = await db.transaction((tx) =>
      tx.get<ApiKeyRow>(`UPDATE _api_keys SET keyHash = ?, tokenKey = ?, updated = ? WHERE id = ? RETURNING ${COLUMNS}`, [this.hash(key), newTokenKey(), nowIso(), id]),
    );
    if (!next) throw notFound(`API key "${id}" not found.`);
    return this.issue(dbName, next, key);
  }

  /**
   * The caller behind a bearer that is an API key or an API-key token of this database; 401 when the
   * key is unknown here, disabled, deleted, or rotated since the token was issued.
   */
  resolve = async (db: Database, _dbName: string, bearer: string, claims: AuthClaims | undefined): Promise<Auth> => {
    let row: ApiKeyRow | undefined;
    if (claims) {
      row = await db.get<ApiKeyRow>(`SELECT ${COLUMNS} FROM _api_keys WHERE id = ?`, [claims.id]);
      if (row && tokenKeyFingerprint(row.tokenKey) !== claims.ver) row = undefined;
    } else if (bearer.startsWith(API_KEY_PREFIX)) {
      row = await db.get<ApiKeyRow>(`SELECT ${COLUMNS} FROM _api_keys WHERE keyHash = ?`, [this.hash(bearer)]);
    }
    if (!row || row.enabled !== 1) throw unauthorized();
    const auth: ApiKeyAuth = { type: 'apikey', id: row.id, name: row.name, roles: JSON.parse(row.roles) as string[] };
    return auth;
  };
}
