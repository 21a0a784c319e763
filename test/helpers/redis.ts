import { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';

/** The Redis server tests use (CAIRN_TEST_REDIS, by default the local one). */
export const REDIS_URL = process.env.CAIRN_TEST_REDIS || 'redis://127.0.0.1:6379';

/**
 * A key prefix of its own for one test (CAIRN_REDIS_PREFIX), so that runs and tests sharing the
 * server never count each other's hits; `flush` deletes that prefix's keys and nothing else.
 */
export function redisNamespace(): { prefix: string; env: Record<string, string>; keys(): Promise<string[]>; flush(): Promise<void> } {
  const prefix = `cairn-test-${randomBytes(6).toString('hex')}:`;
  const scan = async (fn: (client: Redis, keys: string[]) => Promise<unknown>) => {
    const client = new Redis(REDIS_URL, { lazyConnect: true });
    await client.connect();
    try {
      let cursor = '0';
      do {
        const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
        if (keys.length > 0) await fn(client, keys);
        cursor = next;
      } while (cursor !== '0');
    } finally {
      client.disconnect();
    }
  };
  return {
    prefix,
    env: { CAIRN_REDIS_URL: REDIS_URL, CAIRN_REDIS_PREFIX: prefix },
    async keys() {
      const all: string[] = [];
      await scan(async (_client, keys) => all.push(...keys));
      return all.sort();
    },
    flush: () => scan((client, keys) => client.del(...keys)),
  };
}
