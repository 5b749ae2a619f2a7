import { LRUCache } from 'lru-cache';

// Repeated bad keys from one client address (IPv4 /32, IPv6 /64: the listener's client key) are slowed
// down. Each address has a few free failures; past them every bad key blocks the address's keyed requests
// for 1 s, doubling with each further one up to `maxBlockS`. While blocked, a keyed request is answered 429
// with Retry-After *without its key being checked*: no answer tells a guesser anything, and guessing costs
// time instead of a hash. The count is forgotten after `forgetMs` without a failure. Requests without a key
// are not affected (they guess nothing). Memory: at most `maxAddresses` entries (least recently failed
// evicted first), a few dozen bytes each.

export interface FailureOptions {
  /** Bad keys an address may send before it is slowed down. */
  free: number;
  /** Longest block (s). */
  maxBlockS: number;
  /** A quiet period after which an address's count starts again (ms). */
  forgetMs: number;
  maxAddresses: number;
  now?: () => number;
}

interface Record {
  failures: number;
  blockedUntil: number;
}

export interface FailureTracker {
  /** Seconds the address must wait before a key of it is checked again (0: not blocked). */
  blockedFor(address: string): number;
  /** Counts a bad key from the address; returns the seconds it is now blocked (0: still free). */
  fail(address: string): number;
  size(): number;
}

export function createFailureTracker(options: FailureOptions): FailureTracker {
  const now = options.now ?? (() => performance.now());
  const records = new LRUCache<string, Record>({ max: options.maxAddresses, ttl: options.forgetMs, ttlAutopurge: false, updateAgeOnGet: false, perf: { now } });
  return {
    blockedFor(address) {
      const record = records.get(address);
      if (!record) return 0;
      const left = record.blockedUntil - now();
      return left > 0 ? Math.ceil(left / 1000) : 0;
    },
    fail(address) {
      const t = now();
      const record = records.get(address) ?? { failures: 0, blockedUntil: 0 };
      record.failures++;
      const over = record.failures - options.free;
      if (over > 0) record.blockedUntil = t + Math.min(options.maxBlockS, 2 ** (over - 1)) * 1000;
      // set again: the quiet period starts over
      records.set(address, record);
      return over > 0 ? Math.ceil((record.blockedUntil - t) / 1000) : 0;
    },
    size: () => records.size,
  };
}
