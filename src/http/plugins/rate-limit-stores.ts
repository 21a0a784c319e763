import type { Redis } from 'ioredis';
import { createRequire } from 'node:module';
import type { RateCounters } from '../../ratelimit/counters.ts';

/** The shape of @fastify/rate-limit's stores (CommonJS modules without type declarations). */
interface PluginStore {
  incr(key: string, done: (err: Error | null, result: { current: number; ttl: number } | null) => void, timeWindow: number, max: number): void;
}
type LocalStoreCtor = new (continueExceeding: boolean, exponentialBackoff: boolean, cache?: number) => PluginStore;
type RedisStoreCtor = new (continueExceeding: boolean, exponentialBackoff: boolean, redis: Redis, key?: string) => PluginStore;

const require = createRequire(import.meta.url);
const LocalStore = require('@fastify/rate-limit/store/LocalStore.js') as LocalStoreCtor;
const RedisStore = require('@fastify/rate-limit/store/RedisStore.js') as RedisStoreCtor;

function counting(store: PluginStore, close: () => Promise<void>): RateCounters {
  return {
    hit: (key, windowMs) =>
      new Promise((resolve, reject) => {
        // `max` only matters to the stores' options for exceeded keys, which Cairn leaves off.
        store.incr(key, (err, result) => (err || !result ? reject(err ?? new Error('no result')) : resolve({ count: result.current, ttlMs: result.ttl })), windowMs, Number.MAX_SAFE_INTEGER);
      }),
    close,
  };
}

/** Counters in this process's memory: @fastify/rate-limit's LRU of 5000 keys, as the plugin keeps them. */
export function memoryCounters(): RateCounters {
  return counting(new LocalStore(false, false), async () => {});
}

/**
 * Counters in Redis through @fastify/rate-limit's Redis store (an `INCR` and `PEXPIRE` in one Lua
 * script per hit), under `<prefix>rate-limit:`. Commands are never queued while Redis is out of
 * reach: they fail at once (or after a second without an answer), and the caller counts in memory.
 * ioredis (some 15 MB resident) is imported only when CAIRN_REDIS_URL is set.
 */
export async function redisCounters(url: string, prefix: string, onError: (err: unknown) => void): Promise<RateCounters> {
  const { Redis } = await import('ioredis');
  const redis = new Redis(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: 1000,
    connectTimeout: 2000,
    // A probe after 30 s of silence: a NAT gateway or firewall that forgets idle flows would otherwise
    // drop the connection without a word, and every counted request would wait out commandTimeout.
    keepAlive: 30_000,
    // Named in Redis's CLIENT LIST, for whoever looks at the server's clients.
    connectionName: 'cairn',
  });
  // Connection errors are reported here as well as by the failing commands; ioredis reconnects.
  redis.on('error', onError);
  try {
    await redis.connect();
  } catch (err) {
    onError(err);
  }
  return counting(new RedisStore(false, false, redis, `${prefix}rate-limit:`), async () => {
    redis.disconnect();
  });
}
