import { createHmac, randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const SECRET_FILE = '.jwt_secret';

/**
 * The instance secret: CAIRN_JWT_SECRET when set, else a random secret generated at first start and
 * kept in `<dir>/.jwt_secret` with mode 0600, so tokens survive restarts.
 */
export function loadInstanceSecret(dir: string, fromEnv: string | undefined): string {
  if (fromEnv) {
    if (fromEnv.length < 32) throw new Error('CAIRN_JWT_SECRET must be at least 32 characters long.');
    return fromEnv;
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
export function deriveKey(secret: string, purpose: 'auth' | 'webhook' | 'file' | 'email' | 'apikey'): Uint8Array {
  return createHmac('sha256', secret).update(`cairn:${purpose}`).digest();
}
