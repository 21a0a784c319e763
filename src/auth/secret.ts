import { createHmac, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Queryable, SchemaStep } from '../storage/index.ts';

export const SECRET_FILE = '.jwt_secret';

/** `_secrets` in the system database: the generated instance secret where processes share a database. */
export const secretsTableStep: SchemaStep = {
  id: 'auth.secrets',
  async up(tx) {
    await tx.exec('CREATE TABLE _secrets (name TEXT PRIMARY KEY NOT NULL, value TEXT NOT NULL)');
  },
};

/**
 * The instance secret: CAIRN_JWT_SECRET when set, else a random secret generated at first start and
 * kept so that tokens survive restarts: in `<dir>/.jwt_secret` (mode 0600), or, where several
 * processes share a PostgreSQL database, in its `_secrets` table, so every node signs alike.
 */
export async function loadInstanceSecret(dir: string, fromEnv: string | undefined, shared?: Queryable): Promise<string> {
  if (fromEnv) {
    if (fromEnv.length < 32) throw new Error('CAIRN_JWT_SECRET must be at least 32 characters long.');
    return fromEnv;
  }
  if (shared) {
    // The first node to start writes it; the others (and later starts) read that one.
    await shared.run('INSERT INTO _secrets (name, value) VALUES (?, ?) ON CONFLICT (name) DO NOTHING', ['instance', randomBytes(48).toString('base64url')]);
    return (await shared.get<{ value: string }>('SELECT value FROM _secrets WHERE name = ?', ['instance']))!.value;
  }
  mkdirSync(dir, { recursive: true });
  const file = path.join(dir, SECRET_FILE);
  if (existsSync(file)) {
    // Tighten permissions a copy or an old umask may have loosened.
    if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
    return readFileSync(file, 'utf8').trim();
  }
  const secret = randomBytes(48).toString('base64url');
  writeFileSync(file, secret, { mode: 0o600, flag: 'wx' });
  return secret;
}

/**
 * A key for one purpose, derived from the instance secret. Auth tokens and webhook tokens use
 * different keys, so a webhook receiver holding its verification key cannot mint login tokens.
 */
export function deriveKey(secret: string, purpose: 'auth' | 'webhook' | 'file' | 'email' | 'apikey' | 'otp'): Uint8Array {
  return createHmac('sha256', secret).update(`cairn:${purpose}`).digest();
}
