import { createHash, randomBytes, randomUUID } from 'node:crypto';

const ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
// 252 is the largest multiple of 36 below 256: bytes at or above it are skipped so every character
// is equally likely.
const UNBIASED_LIMIT = 252;

let pool = Buffer.alloc(0);
let poolPos = 0;

function nextByte(): number {
  if (poolPos >= pool.length) {
    // Drawing a block at a time keeps id generation off the hot path's profile.
    pool = randomBytes(4096);
    poolPos = 0;
  }
  return pool[poolPos++];
}

/** A random string over [a-z0-9], 15 characters by default: the record id format of PocketBase. */
export function randomId(length = 15): string {
  let out = '';
  while (out.length < length) {
    const b = nextByte();
    if (b < UNBIASED_LIMIT) out += ALPHABET[b % 36];
  }
  return out;
}

// Record ids start with the time they were made: ms since 2020-01-01 in 8 base-36 digits (enough until
// 2109), whose text order is their numeric order in any collation that sorts digits before letters.
const RECORD_EPOCH_MS = Date.UTC(2020, 0, 1);
const TIME_DIGITS = 8;

/**
 * A new record id: 15 characters over [a-z0-9] like PocketBase's, but the first 8 are the creation
 * time and only the last 7 random (36 bits). The id's index is a B-tree: random ids land on random
 * leaf pages, so each insert into a large table dirties a page of its own that the commit must write
 * again; ids made at about the same time land on the same few pages (UUIDv7's reasoning, and
 * TrailBase's default). The order is not a promise (clocks of several nodes differ, and clients may
 * choose ids): it is locality, nothing more.
 */
export function newRecordId(now = Date.now()): string {
  return Math.max(0, now - RECORD_EPOCH_MS).toString(36).padStart(TIME_DIGITS, '0').slice(-TIME_DIGITS) + randomId(15 - TIME_DIGITS);
}

export const RECORD_ID_PATTERN = /^[a-z0-9]{15}$/;

export function isRecordId(value: unknown): value is string {
  return typeof value === 'string' && RECORD_ID_PATTERN.test(value);
}

// Letters of any script, digits, `_`, `-` and the other printable characters PocketBase allows in ids.
const RECORD_KEY_PATTERN = /^[^./\\|"'`<>:?*%$\s\p{Cc}]{1,255}$/u;

/**
 * Whether a record id may name a record's folder of files (`<db>/<collection>/<id>/`): Cairn's and
 * PocketBase's default ids, and any a collection's own `id` field lets a client give
 * (records/write/given-id.ts): no `.`, `/`, `\`, quotes, `%`, `$`, whitespace or control characters,
 * at most 255 characters (a file name's limit).
 */
export function isRecordKey(value: unknown): value is string {
  return typeof value === 'string' && (RECORD_ID_PATTERN.test(value) || RECORD_KEY_PATTERN.test(value));
}

/**
 * Why a wanted record id is refused, with PocketBase's codes for its 15-character `id` text field:
 * too short, too long, or other characters than lower-case letters and digits.
 */
export function recordIdError(value: unknown): { code: string; message: string } {
  if (typeof value !== 'string') return { code: 'validation_invalid_id', message: 'Must be 15 lower-case letters and digits.' };
  if (value.length < 15) return { code: 'validation_min_text_constraint', message: 'Must be at least 15 character(s).' };
  if (value.length > 15) return { code: 'validation_max_text_constraint', message: 'Must be less than 15 character(s).' };
  return { code: 'validation_invalid_format', message: 'Invalid value format.' };
}

export function uuid(): string {
  return randomUUID();
}

/** A URL-safe random secret with `bytes` bytes of entropy. */
export function randomSecret(bytes = 32): string {
  return randomBytes(bytes).toString('base64url');
}

/** A record-shaped id derived from `seed`: the same seed always gives the same id, so a step that
 * creates a record can be re-run after a crash without creating it twice. */
export function idFromSeed(seed: string, length = 15): string {
  const digest = createHash('sha256').update(seed).digest();
  let out = '';
  for (let i = 0; out.length < length; i++) out += ALPHABET[digest[i % digest.length] % 36];
  return out;
}

/** A UUID version 7 (RFC 9562): a millisecond timestamp, then random bits. Ids made one after the
 * other sort in creation order, so inserting them touches the end of an index, not a random page. */
export function uuidv7(): string {
  const bytes = Buffer.allocUnsafe(16);
  bytes.writeUIntBE(Date.now(), 0, 6);
  for (let i = 6; i < 16; i++) bytes[i] = nextByte();
  bytes[6] = 0x70 | (bytes[6] & 0x0f);
  bytes[8] = 0x80 | (bytes[8] & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/** A UUID version 7 for a moment and a seed: the same pair gives the same id on every node (a cron
 * tick's event, written by whichever node gets there first). */
export function uuidv7For(ms: number, seed: string): string {
  const bytes = Buffer.alloc(16);
  bytes.writeUIntBE(ms, 0, 6);
  createHash('sha256').update(seed).digest().copy(bytes, 6, 0, 10);
  bytes[6] = 0x70 | (bytes[6] & 0x0f);
  bytes[8] = 0x80 | (bytes[8] & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

let orderedMs = 0;
let orderedSeq = 0;

/**
 * A UUID version 7 that also sorts in creation order within one millisecond of this process (RFC 9562
 * method 1: a 12-bit counter after the timestamp), for rows whose id is their order's tie-breaker.
 */
export function orderedUuidv7(): string {
  const now = Date.now();
  if (now > orderedMs) {
    orderedMs = now;
    orderedSeq = 0;
  } else if (++orderedSeq > 0xfff) {
    // 4096 ids in one millisecond: borrow the next one rather than break the order.
    orderedMs++;
    orderedSeq = 0;
  }
  const bytes = Buffer.allocUnsafe(16);
  bytes.writeUIntBE(orderedMs, 0, 6);
  bytes[6] = 0x70 | (orderedSeq >> 8);
  bytes[7] = orderedSeq & 0xff;
  for (let i = 8; i < 16; i++) bytes[i] = nextByte();
  bytes[8] = 0x80 | (bytes[8] & 0x3f);
  const hex = bytes.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

let crcTable: Uint32Array | undefined;

/** CRC-32 (IEEE), as Go's `crc32.ChecksumIEEE`. */
function crc32(text: string): number {
  if (!crcTable) {
    crcTable = new Uint32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c >>> 0;
    }
  }
  let crc = 0xffffffff;
  for (const byte of Buffer.from(text, 'utf8')) crc = crcTable[(crc ^ byte) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/**
 * The id PocketBase ≥ 0.23 gives a collection saved without one: `pbc_` and the CRC-32 of its type
 * and name. Later migrations of the same folder name the collection by it (PocketBase's dashboard
 * writes `findCollectionByNameOrId("pbc_…")`), so it must be the same here.
 */
export function pocketBaseCollectionId(type: string, name: string): string {
  return `pbc_${crc32(type + name)}`;
}

/** The id PocketBase ≥ 0.23 gives a field added without one: its type and the CRC-32 of its name. */
export function pocketBaseFieldId(type: string, name: string): string {
  return `${type}${crc32(name)}`;
}
