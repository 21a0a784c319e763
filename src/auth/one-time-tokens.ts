import { createHash } from 'node:crypto';
import { randomSecret } from '../lib/ids.ts';
import type { Database, SchemaStep } from '../storage/index.ts';

export type OneTimePurpose = 'verification' | 'password-reset' | 'email-change';

/** Single-use tokens of the email flows, in the database of the account they belong to. */
export const oneTimeTokensTableStep: SchemaStep = {
  id: 'auth.one_time_tokens',
  async up(tx) {
    await tx.exec(`CREATE TABLE _auth_tokens (
      hash TEXT PRIMARY KEY NOT NULL,
      purpose TEXT NOT NULL,
      collectionId TEXT NOT NULL,
      recordId TEXT NOT NULL,
      email TEXT NOT NULL,
      expires TEXT NOT NULL,
      created TEXT NOT NULL
    );
    CREATE INDEX _auth_tokens_record ON _auth_tokens (recordId, purpose)`);
  },
};

/** An email change's token also holds the address the account moves to (PocketBase's `newEmail`). */
export const oneTimeTokensNewEmailStep: SchemaStep = {
  id: 'auth.one_time_tokens.new_email',
  async up(tx) {
    await tx.exec('ALTER TABLE _auth_tokens ADD COLUMN newEmail TEXT');
  },
};

export interface OneTimeToken {
  collectionId: string;
  recordId: string;
  /** The address the mail went to (for an email change: the account's address when it was asked). */
  email: string;
  /** An email change's new address. */
  newEmail?: string | null;
}

// Tokens are 256-bit random values, so a plain SHA-256 is enough to keep the stored form useless.
function hashOf(token: string): string {
  return createHash('sha256').update(token).digest('base64url');
}

/** Issues a token for an account; only its hash is stored. */
export async function issueToken(db: Database, purpose: OneTimePurpose, account: OneTimeToken, ttlSeconds: number): Promise<string> {
  const token = randomSecret(32);
  const now = new Date();
  await db.transaction(async (tx) => {
    // Expired tokens of every account go whenever a new one is made, so the table stays small.
    await tx.run('DELETE FROM _auth_tokens WHERE expires < ?', [now.toISOString()]);
    await tx.run('INSERT INTO _auth_tokens (hash, purpose, collectionId, recordId, email, newEmail, expires, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)', [
      hashOf(token),
      purpose,
      account.collectionId,
      account.recordId,
      account.email,
      account.newEmail ?? null,
      new Date(now.getTime() + ttlSeconds * 1000).toISOString(),
      now.toISOString(),
    ]);
  });
  return token;
}

/**
 * Takes a token: deleted in the same statement that reads it, so two concurrent confirmations cannot
 * both succeed. Undefined when unknown, used, expired, of another purpose or another collection.
 * `voids`: the purposes whose other tokens of the account go in that statement too (a password reset
 * voids every other reset link and the email-change links, as PocketBase's new token key does; an
 * email change voids the reset links mailed to the old address). Two confirmations that void each
 * other, sent at once, then cannot both succeed: the second finds its own token gone with the first's.
 */
export async function consumeToken(db: Database, purpose: OneTimePurpose, collectionId: string, token: unknown, voids: readonly OneTimePurpose[] = []): Promise<OneTimeToken | undefined> {
  if (typeof token !== 'string' || token === '' || token.length > 200) return undefined;
  const hash = hashOf(token);
  type Taken = OneTimeToken & { hash: string; expires: string };
  // A write: through a transaction, since plain reads go to the read-only connection.
  const rows = await db.transaction((tx) => {
    if (voids.length === 0) {
      return tx.all<Taken>('DELETE FROM _auth_tokens WHERE hash = ? AND purpose = ? AND collectionId = ? RETURNING hash, collectionId, recordId, email, newEmail, expires', [
        hash,
        purpose,
        collectionId,
      ]);
    }
    const purposes = [...new Set([purpose, ...voids])];
    return tx.all<Taken>(
      `DELETE FROM _auth_tokens WHERE purpose IN (${purposes.map(() => '?').join(', ')}) AND collectionId = ?
         AND recordId IN (SELECT recordId FROM _auth_tokens WHERE hash = ? AND purpose = ? AND collectionId = ?)
       RETURNING hash, collectionId, recordId, email, newEmail, expires`,
      [...purposes, collectionId, hash, purpose, collectionId],
    );
  });
  const row = rows.find((r) => r.hash === hash);
  if (!row || row.expires < new Date().toISOString()) return undefined;
  return { collectionId: row.collectionId, recordId: row.recordId, email: row.email, newEmail: row.newEmail };
}

/**
 * A token as it would be taken, without taking it (to validate the rest of a request first), or
 * undefined; `collectionId` undefined accepts a token of any collection (to say which one it is for).
 */
export async function peekToken(db: Database, purpose: OneTimePurpose, collectionId: string | undefined, token: unknown): Promise<OneTimeToken | undefined> {
  if (typeof token !== 'string' || token === '' || token.length > 200) return undefined;
  const row = await db.get<OneTimeToken & { expires: string }>(
    'SELECT collectionId, recordId, email, newEmail, expires FROM _auth_tokens WHERE hash = ? AND purpose = ?',
    [hashOf(token), purpose],
  );
  if (!row || row.expires < new Date().toISOString() || (collectionId !== undefined && row.collectionId !== collectionId)) return undefined;
  return { collectionId: row.collectionId, recordId: row.recordId, email: row.email, newEmail: row.newEmail };
}

/** Drops every outstanding token of an account for a purpose (after a reset, the others are void). */
export async function revokeTokens(db: Database, purpose: OneTimePurpose, recordId: string): Promise<void> {
  await db.run('DELETE FROM _auth_tokens WHERE recordId = ? AND purpose = ?', [recordId, purpose]);
}
