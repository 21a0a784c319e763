/**
 * `$security`: random strings, hashes, HMACs and HS256 JWTs, as PocketBase's `security` package
 * gives them to pb_hooks. Pure.
 */
import crypto from 'node:crypto';

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
};
function randomWith(n: number, alphabet: string) {
  let out = '';
  for (let i = 0; i < n; i++) out += alphabet[crypto.randomInt(alphabet.length)];
  return out;
}
