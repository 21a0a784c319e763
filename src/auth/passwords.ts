import type * as Argon2 from '@node-rs/argon2';
import type * as Bcrypt from '@node-rs/bcrypt';

/**
 * Password hashing with argon2id at OWASP's recommended cost (19 MiB, 2 passes). @node-rs/argon2
 * runs on libuv's thread pool, so hashing never blocks the event loop.
 *
 * Hashes imported from PocketBase (`cairn import pocketbase`) are bcrypt's (`$2a$…`): they are
 * verified with @node-rs/bcrypt (also off the event loop; the bcrypt crate compares in constant time)
 * and replaced with an argon2id hash at the first successful sign-in (`needsRehash`).
 */
const OPTIONS = { // 2 is Algorithm.Argon2id (a const enum, which isolated modules cannot import).
  algorithm: 2, memoryCost: 19456, timeCost: 2, parallelism: 1 } as const;

/** Longest password accepted, as PocketBase (API contract §23); hashing cost grows with input, so unbounded input is a DoS lever. */
export const MAX_PASSWORD_LENGTH = 255;

let argon2: typeof Argon2 | undefined;
let bcrypt: typeof Bcrypt | undefined;

/** bcrypt's modular-crypt prefixes ($2a$, $2b$, $2y$, $2x$), as PocketBase and most frameworks write them. */
const BCRYPT_HASH = /^\$2[abxy]\$\d{2}\$/;

/** The native binding loads with the first password hashed or checked, not at start. */
async function binding(): Promise<typeof Argon2> {
  argon2 ??= await import('@node-rs/argon2');
  return argon2;
}

export async function hashPassword(password: string): Promise<string> {
  return (argon2 ?? (await binding())).hash(password, OPTIONS);
}

export async function verifyPassword(passwordHash: string, password: string): Promise<boolean> {
  if (!passwordHash) return false;
  try {
    if (BCRYPT_HASH.test(passwordHash)) return await (bcrypt ??= await import('@node-rs/bcrypt')).verify(password, passwordHash);
    return await (argon2 ?? (await binding())).verify(passwordHash, password);
  } catch {
    return false;
  }
}

/** Whether a hash that just verified should be replaced with Cairn's own (it is not argon2id). */
export function needsRehash(passwordHash: string): boolean {
  return BCRYPT_HASH.test(passwordHash);
}

let dummyHash: Promise<string> | undefined;

/** Spends the time of one verification, so an unknown account answers as slowly as a wrong password. */
export async function verifyDummy(password: string): Promise<void> {
  dummyHash ??= hashPassword('cairn-timing-equalizer');
  await verifyPassword(await dummyHash, password);
}
