import { createHash } from 'node:crypto';
import { randomSecret } from '../lib/ids.ts';
import type { Database, SchemaStep } from '../storage/index.ts';

export type OneTimePurpose = 'verification' | 'password-reset';

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

export interface OneTimeToken {
  collectionId: string;
  recordId: string;
  email: string;
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
    await tx.run('INSERT INTO _auth_tokens (hash, purpose, collectionId, recordId, email, expires, created) VALUES (?, ?, ?, ?, ?, ?, ?)', [
      hashOf(token),
      purpose,
      account.collectionId,
      account.recordId,
      account.email,
      new Date(now.getTime() + ttlSeconds * 1000).toISOString(),
      now.toISOString(),
    ]);
  });
  return token;
}

/**
 * Takes a token: deleted in the same statement that reads it, so two concurrent confirmations cannot
 * both succeed. Undefined when unknown, used, expired, of another purpose or another collection.
 */
export async function consumeToken(db: Database, purpose: OneTimePurpose, collectionId: string, token: unknown): Promise<OneTimeToken | undefined> {
  if (typeof token !== 'string' || token === '' || token.length > 200) return undefined;
  // A write: through a transaction, since plain reads go to the read-only connection.
  const row = await db.transaction((tx) =>
    tx.get<OneTimeToken & { expires: string }>(
      'DELETE FROM _auth_tokens WHERE hash = ? AND purpose = ? AND collectionId = ? RETURNING collectionId, recordId, email, expires',
      [hashOf(token), purpose, collectionId],
    ),
  );
  if (!row || row.expires < new Date().toISOString()) return undefined;
  return { collectionId: row.collectionId, recordId: row.recordId, email: row.email };
}

/** Whether a token would be accepted, without taking it (to validate the rest of a request first). */
export async function peekToken(db: Database, purpose: OneTimePurpose, collectionId: string, token: unknown): Promise<boolean> {
  if (typeof token !== 'string' || token === '' || token.length > 200) return false;
  const row = await db.get<{ expires: string }>('SELECT expires FROM _auth_tokens WHERE hash = ? AND purpose = ? AND collectionId = ?', [hashOf(token), purpose, collectionId]);
  return row !== undefined && row.expires >= new Date().toISOString();
}

/** Drops every outstanding token of an account for a purpose (after a reset, the others are void). */
export async function revokeTokens(db: Database, purpose: OneTimePurpose, recordId: string): Promise<void> {
  await db.run('DELETE FROM _auth_tokens WHERE recordId = ? AND purpose = ?', [recordId, purpose]);
}
