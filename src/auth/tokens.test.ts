import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { TokenService } from './tokens.ts';

const claims = { id: 'u1', type: 'authRecord' as const, collectionId: 'c1', db: 'main', tokenKey: 'key-1' };

describe('TokenService.verify', () => {
  test('a burst of requests with one new token is served by one check', async () => {
    const tokens = new TokenService(randomBytes(32), 3600);
    const token = await tokens.sign(claims);
    const all = await Promise.all(Array.from({ length: 200 }, () => tokens.verify(token)));
    // One check made one claims object; a check per request would have made 200.
    assert.equal(new Set(all).size, 1);
    assert.equal(all[0].id, 'u1');
    assert.equal(await tokens.verify(token), all[0]);
  });

  test('a burst with a forged token is refused every time, and so is the next request', async () => {
    const tokens = new TokenService(randomBytes(32), 3600);
    const other = new TokenService(randomBytes(32), 3600);
    const forged = await other.sign(claims);
    const outcomes = await Promise.allSettled(Array.from({ length: 20 }, () => tokens.verify(forged)));
    for (const o of outcomes) {
      assert.equal(o.status, 'rejected');
      assert.equal((o as PromiseRejectedResult).reason.status, 401);
    }
    await assert.rejects(tokens.verify(forged), { status: 401 });
  });

  test('an expired token is refused, first checked or cached', async () => {
    const tokens = new TokenService(randomBytes(32), 3600);
    const expired = await tokens.sign(claims, -10);
    await assert.rejects(tokens.verify(expired), { status: 401 });
    await assert.rejects(tokens.verify(expired), { status: 401 });
  });
});
