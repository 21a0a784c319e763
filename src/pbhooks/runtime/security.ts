/**
 * `$security`: random strings, hashes, HMACs and HS256 JWTs, as PocketBase's `security` package
 * gives them to pb_hooks. Pure.
 */
import crypto from 'node:crypto';
import { patternGenerator } from '../../lib/random-pattern.ts';

export const $security = {
  randomString: (n: number) => randomWith(n, 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'),
  randomStringWithAlphabet: (n: number, alphabet: string) => randomWith(n, alphabet),
  pseudorandomString: (n: number) => randomWith(n, 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'),
  pseudorandomStringWithAlphabet: (n: number, alphabet: string) => randomWith(n, alphabet),
  md5: (s: string) => crypto.createHash('md5').update(String(s)).digest('hex'),
  sha256: (s: string) => crypto.createHash('sha256').update(String(s)).digest('hex'),
  sha512: (s: string) => crypto.createHash('sha512').update(String(s)).digest('hex'),
  hs256: (s: string, secret: string) => crypto.createHmac('sha256', String(secret)).update(String(s)).digest('hex'),
  hs512: (s: string, secret: string) => crypto.createHmac('sha512', String(secret)).update(String(s)).digest('hex'),
  equal: (a: string, b: string) => {
    const x = Buffer.from(String(a));
    const y = Buffer.from(String(b));
    return x.length === y.length && crypto.timingSafeEqual(x, y);
  },
  createJWT: (payload: any, secret: string, seconds: number) => {
    const enc = (o: any) => Buffer.from(JSON.stringify(o)).toString('base64url');
    const body = { ...payload, exp: Math.floor(Date.now() / 1000) + Number(seconds || 0) };
    const head = enc({ alg: 'HS256', typ: 'JWT' }) + '.' + enc(body);
    return head + '.' + crypto.createHmac('sha256', String(secret)).update(head).digest('base64url');
  },
  parseUnverifiedJWT: (token: string) => JSON.parse(Buffer.from(String(token).split('.')[1] ?? '', 'base64url').toString() || '{}'),
  parseJWT: (token: string, secret: string) => {
    const [h, p, s] = String(token).split('.');
    if (crypto.createHmac('sha256', String(secret)).update(`${h}.${p}`).digest('base64url') !== s) throw new Error('invalid JWT signature');
    const claims = JSON.parse(Buffer.from(p, 'base64url').toString());
    if (claims.exp && claims.exp < Date.now() / 1000) throw new Error('token is expired');
    return claims;
  },
  // A random string the pattern matches (PocketBase's `[a-z0-9]{15}` ids); unbounded repeats make at most 10.
  randomStringByRegex: (pattern: string) => patternGenerator(String(pattern)).gen(),
  // PocketBase's security.Encrypt: AES-GCM with the key's bytes (16, 24 or 32 of them), the nonce
  // first, base64 as Go's StdEncoding writes it.
  encrypt: (data: any, key: string) => {
    const nonce = crypto.randomBytes(12);
    const cipher = crypto.createCipheriv(gcmOf(key), Buffer.from(String(key)), nonce);
    const sealed = Buffer.concat([cipher.update(typeof data === 'string' ? Buffer.from(data) : Buffer.from(data ?? [])), cipher.final(), cipher.getAuthTag()]);
    return Buffer.concat([nonce, sealed]).toString('base64');
  },
  decrypt: (cipherText: string, key: string) => {
    const bytes = Buffer.from(String(cipherText), 'base64');
    if (bytes.length < 12 + 16) throw new Error('cipher: message authentication failed');
    const decipher = crypto.createDecipheriv(gcmOf(key), Buffer.from(String(key)), bytes.subarray(0, 12));
    decipher.setAuthTag(bytes.subarray(bytes.length - 16));
    try {
      return Buffer.concat([decipher.update(bytes.subarray(12, bytes.length - 16)), decipher.final()]).toString();
    } catch {
      throw new Error('cipher: message authentication failed');
    }
  },
};

function gcmOf(key: string): crypto.CipherGCMTypes {
  const size = Buffer.byteLength(String(key));
  if (size !== 16 && size !== 24 && size !== 32) throw new Error(`crypto/aes: invalid key size ${size}`);
  return `aes-${size * 8}-gcm` as crypto.CipherGCMTypes;
}
function randomWith(n: number, alphabet: string) {
  let out = '';
  for (let i = 0; i < n; i++) out += alphabet[crypto.randomInt(alphabet.length)];
  return out;
}
