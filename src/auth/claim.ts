import type { Collection } from '../collections/model.ts';
import { quoteIdent } from '../lib/identifiers.ts';
import { newTokenKey } from '../records/auth-fields.ts';
import { shapeOf } from '../records/shape.ts';
import type { Queryable } from '../storage/index.ts';

/**
 * What happens when a sign-in that proves an address (OAuth2 with a verified email, OTP, a password
 * reset or email verification mailed to it) takes an account whose email was not verified: whoever
 * made the account before its owner proved the address may have left a way in. Their OAuth2 links
 * are removed (the pre-hijack of GHSA-pq7p-mc74-g65w: an attacker signs in with an OAuth2 identity
 * claiming the victim's address, the victim later takes the account, and the attacker's link would
 * still sign them into it) and, with `revokeTokens`, every token issued to the account dies.
 * Callers replace the password themselves where the flow allows it.
 */
export async function claimUnverified(db: Pick<Queryable, 'run'>, collection: Collection, recordId: string, options: { revokeTokens: boolean }): Promise<void> {
  await db.run('DELETE FROM _externalAuths WHERE collectionRef = ? AND recordRef = ?', [collection.id, recordId]);
  if (options.revokeTokens) {
    await db.run(`UPDATE ${shapeOf(collection).table} SET ${quoteIdent('tokenKey')} = ? WHERE id = ?`, [newTokenKey(), recordId]);
  }
}
