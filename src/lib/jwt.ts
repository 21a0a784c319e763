import { createHmac } from 'node:crypto';

const HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');

/**
 * Signs a JWT with HS256, synchronously. Used where many tokens are minted in a row (one per webhook
 * attempt): node:crypto's HMAC costs a few microseconds, where jose's async signing costs a promise
 * round trip per token. Verification stays with jose (src/auth/tokens.ts).
 */
export function signHs256(payload: Record<string, unknown>, key: string | Uint8Array): string {
  const body = `${HEADER}.${Buffer.from(JSON.stringify(payload)).toString('base64url')}`;
  return `${body}.${createHmac('sha256', key).update(body).digest('base64url')}`;
}
