import type { IncomingMessage, ServerResponse } from 'node:http';
import { clientKey } from './connections.js';

// Bytes answered per client address. The per-request limits (rows, result nodes, response bytes) bound
// one request, and the per-client connection cap bounds how many run at once, but a client may still ask
// for legitimate 1000-row pages back to back on every connection it has: the gateway then spends its one
// thread serialising that client's answers while everyone else waits. Each client address has a token
// bucket of response bytes (refilled at `bytesPerS`, holding at most `burstBytes`); the bytes of every
// answer are charged when it ends, and a client in debt gets 429 with Retry-After until the bucket is
// positive again. Counted on the TCP peer, like the connection cap (behind a proxy: see the README).

export interface ClientBudgetSettings {
  /** Refill rate; 0 turns the budget off. */
  bytesPerS: number;
  burstBytes: number;
}

interface Bucket {
  tokens: number;
  at: number;
}

/** Addresses tracked at most; past it the longest untouched ones are forgotten (they start full again). */
const maxTracked = 100_000;

export interface ClientBudget {
  /** Seconds until the client may be served again, or 0 if it may be served now. */
  retryAfterS(req: IncomingMessage): number;
  /** Charges the bytes of this response to its client once it has been written. */
  charge(req: IncomingMessage, res: ServerResponse): void;
}

export function clientBudget(settings: ClientBudgetSettings, now: () => number = () => performance.now()): ClientBudget {
  const buckets = new Map<string, Bucket>();
  const rate = settings.bytesPerS / 1_000; // per ms

  /** The bucket of `key` refilled up to now; a full one is not kept (absent = full). */
  const refill = (key: string, t: number): Bucket | undefined => {
    const bucket = buckets.get(key);
    if (!bucket) return undefined;
    bucket.tokens = Math.min(settings.burstBytes, bucket.tokens + (t - bucket.at) * rate);
    bucket.at = t;
    if (bucket.tokens >= settings.burstBytes) {
      buckets.delete(key);
      return undefined;
    }
    return bucket;
  };

  return {
    retryAfterS(req) {
      if (settings.bytesPerS === 0 || req.socket.remoteAddress === undefined) return 0;
      const bucket = refill(clientKey(req.socket.remoteAddress), now());
      if (!bucket || bucket.tokens > 0) return 0;
      return Math.max(1, Math.ceil(-bucket.tokens / settings.bytesPerS));
    },
    charge(req, res) {
      if (settings.bytesPerS === 0) return;
      const socket = req.socket;
      const address = socket.remoteAddress;
      if (address === undefined) return;
      const before = socket.bytesWritten;
      res.once('finish', () => {
        const bytes = socket.bytesWritten - before;
        if (bytes <= 0) return;
        const key = clientKey(address);
        const t = now();
        const bucket = refill(key, t) ?? { tokens: settings.burstBytes, at: t };
        bucket.tokens -= bytes;
        buckets.delete(key); // re-inserted last: Map order is then least recently charged first
        buckets.set(key, bucket);
        if (buckets.size > maxTracked) buckets.delete(buckets.keys().next().value!);
      });
    },
  };
}
