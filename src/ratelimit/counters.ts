/**
 * Rate-limit counters that several processes can share. A key's window is fixed: it starts with the
 * key's first hit and lasts the window's length, then the next hit starts a new one (the semantics of
 * @fastify/rate-limit's own stores, which the HTTP layer's limits are written against).
 */
export interface RateCounters {
  /** Counts one hit on `key`: the hits in its current window, this one included, and the time left. */
  hit(key: string, windowMs: number): Promise<{ count: number; ttlMs: number }>;
  /** Stops background work and releases connections. */
  close(): Promise<void>;
}
