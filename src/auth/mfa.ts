import { authSettingsOf } from '../collections/auth-settings.ts';
import type { Collection } from '../collections/model.ts';
import type { CollectionService } from '../collections/service.ts';
import type { RequestContext } from '../context.ts';
import { badRequest, mfaRequired } from '../errors.ts';
import { randomId } from '../lib/ids.ts';
import { recordMatches } from '../rules/access/record-match.ts';
import { FilterError } from '../rules/errors.ts';
import type { Queryable, SchemaStep } from '../storage/index.ts';

/** Sign-in methods; `refresh` and `impersonate` renew or hand out a session and never ask for a second factor. */
export type AuthMethod = 'password' | 'oauth2' | 'otp' | 'refresh' | 'impersonate';

/** The first factors of multi-factor sign-ins under way, in the database of their accounts. */
export const mfasTableStep: SchemaStep = {
  id: 'auth.mfas',
  async up(tx) {
    await tx.exec(`CREATE TABLE _mfas (
      id TEXT PRIMARY KEY NOT NULL,
      collectionId TEXT NOT NULL,
      recordId TEXT NOT NULL,
      method TEXT NOT NULL,
      created TEXT NOT NULL
    );
    CREATE INDEX _mfas_created ON _mfas (created)`);
  },
};

/** PocketBase's ceiling for `mfa.duration`: rows older than that are void whatever the settings. */
const MAX_MFA_SECONDS = 86400;

/** Deletes MFA sessions older than any duration allows (the `__pbMFACleanup__` job). */
export async function pruneMfas(db: Queryable, now = Date.now()): Promise<void> {
  await db.run('DELETE FROM _mfas WHERE created < ?', [new Date(now - MAX_MFA_SECONDS * 1000).toISOString()]);
}

const invalidSession = () => badRequest('Invalid or expired MFA session.');

function mfaIdOf(ctx: RequestContext): string {
  const body = ctx.request.body;
  const fromBody = typeof body === 'object' && body !== null && !Array.isArray(body) ? (body as Record<string, unknown>).mfaId : undefined;
  const value = fromBody ?? ctx.request.query.mfaId;
  return typeof value === 'string' ? value : '';
}

interface MfaRow {
  collectionId: string;
  recordId: string;
  method: string;
  created: string;
}

/**
 * Multi-factor sign-in (PocketBase ≥ 0.23): on a collection with `mfa.enabled` (and a record its
 * `mfa.rule` matches, or any record without one), a first successful sign-in answers 401 with an
 * `mfaId`; a second sign-in by a different method, sending that `mfaId` in its body within
 * `mfa.duration` seconds, completes it. Credentials are always checked first, so none of this tells
 * anything about an account to someone without its first factor.
 */
export class MfaService {
  constructor(private readonly collections: CollectionService) {}

  /** Throws the 401 with an `mfaId`, or a 400 for an unusable one; returns when the sign-in may complete. */
  async check(ctx: RequestContext, collection: Collection, recordId: string, method: AuthMethod): Promise<void> {
    const settings = authSettingsOf(collection).mfa;
    if (!settings.enabled || method === 'refresh' || method === 'impersonate') return;
    if (!(await this.applies(ctx, collection, recordId, settings.rule))) return;
    const mfaId = mfaIdOf(ctx);
    if (mfaId === '') throw mfaRequired(await this.begin(ctx, collection, recordId, method));
    if (mfaId.length > 255) throw invalidSession();
    // Taken in the statement that checks it, so one first factor completes one sign-in.
    const taken = await ctx.db.transaction((tx) =>
      tx.get<{ created: string }>('DELETE FROM _mfas WHERE id = ? AND collectionRef = ? AND recordRef = ? AND method <> ? RETURNING created', [mfaId, collection.id, recordId, method]),
    );
    if (taken) {
      if (Date.parse(taken.created) + settings.duration * 1000 < Date.now()) throw invalidSession();
      return;
    }
    const row = await ctx.db.get<MfaRow>('SELECT collectionRef AS collectionId, recordRef AS recordId, method, created FROM _mfas WHERE id = ?', [mfaId]);
    if (!row || Date.parse(row.created) + settings.duration * 1000 < Date.now()) throw invalidSession();
    if (row.collectionId !== collection.id || row.recordId !== recordId) throw badRequest('Invalid MFA session.');
    throw badRequest('A different authentication method is required.');
  }

  /** Whether the collection's MFA rule asks this record for a second factor; a rule that no longer
   * compiles asks everyone (the safer way to fail). */
  private async applies(ctx: RequestContext, collection: Collection, recordId: string, rule: string): Promise<boolean> {
    if (rule.trim() === '') return true;
    try {
      return await recordMatches(ctx, collection, await this.collections.all(ctx.db), rule, recordId);
    } catch (err) {
      if (err instanceof FilterError) return true;
      throw err;
    }
  }

  private async begin(ctx: RequestContext, collection: Collection, recordId: string, method: AuthMethod): Promise<string> {
    const id = randomId();
    const now = new Date();
    await ctx.db.transaction(async (tx) => {
      // Sessions past any duration go whenever a new one starts, so the table stays small.
      await tx.run('DELETE FROM _mfas WHERE created < ?', [new Date(now.getTime() - MAX_MFA_SECONDS * 1000).toISOString()]);
      await tx.run('INSERT INTO _mfas (id, collectionRef, recordRef, method, created, updated) VALUES (?, ?, ?, ?, ?, ?)', [id, collection.id, recordId, method, now.toISOString(), now.toISOString()]);
    });
    return id;
  }
}
