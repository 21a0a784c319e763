import { backoffDelay } from '../lib/backoff.ts';
import type { DeliveryResult } from './deliver.ts';
import type { NewLog } from './logs.ts';
import type { EventStatus, OutboxRow } from './outbox.ts';

/** Limits every delivery worker keeps. */
export const DELIVERY = {
  /** Attempts in flight at once, over all databases and receivers: bounds sockets and memory whatever the backlog. */
  maxInFlight: 64,
  /** Attempts in flight per receiver origin: a slow or hanging receiver holds at most this many slots, so the others keep being served. */
  maxPerOrigin: 8,
  /** At shutdown, attempts in flight get at most this long (and half the timeout) before they are interrupted. */
  maxShutdownGraceMs: 2000,
  /** Outcomes are written together: idle, within 10 ms of the attempt; busy, many per commit. */
  saveDelayMs: 10,
  saveBatch: 256,
} as const;

/** How long attempts in flight may go on at shutdown: half the timeout, at most maxShutdownGraceMs,
 * and no longer than the server's own shutdown allows (`budgetMs`). */
export function shutdownGrace(timeoutMs: number, budgetMs = Infinity): number {
  return Math.max(0, Math.min(DELIVERY.maxShutdownGraceMs, Math.floor(timeoutMs / 2), budgetMs));
}

/** An attempt's outcome: the event's next state, and the attempt's log. */
export interface Settlement {
  seq: number;
  status: EventStatus;
  attempts: number;
  /** When the event is due again (ms), for a retry. */
  next: number;
  log: NewLog;
}

export interface AttemptPolicy {
  maxAttempts: number;
  backoffMs: number;
  /** The node that made the attempt (webhook logs name it). */
  node: string;
}

/**
 * What an attempt means for its event, the same for every worker: success; a retry after the backoff
 * of its number; failed after the last attempt; or, stopped by shutdown rather than by the receiver,
 * pending again without using up an attempt.
 */
export function settle(row: OutboxRow, attemptsBefore: number, result: DeliveryResult, policy: AttemptPolicy, now = new Date()): Settlement {
  const attempt = attemptsBefore + 1;
  let status: EventStatus;
  let attempts = attempt;
  let next = now.getTime();
  if (result.ok) status = 'success';
  else if (result.interrupted) {
    status = 'pending';
    attempts = attemptsBefore;
  } else if (attempt >= policy.maxAttempts) status = 'failed';
  else {
    status = 'pending';
    next += backoffDelay(policy.backoffMs, attempt);
  }
  return {
    seq: row.seq,
    status,
    attempts,
    next,
    log: {
      source: row.source,
      name: row.name,
      collection: row.collection,
      action: row.action,
      eventId: row.id,
      eventSeq: row.seq,
      url: row.url,
      method: row.method,
      attempt,
      status: status === 'pending' ? 'retrying' : status,
      statusCode: result.statusCode,
      durationMs: result.durationMs,
      error: result.error,
      node: policy.node,
      created: now.toISOString(),
    },
  };
}
