// What a key may use (its row in api_keys), what one request's check answers, and the arithmetic both the
// Redis script and the in-process buckets share: a token bucket of `burst` tokens refilled at `ratePerS`,
// and admitted requests counted per UTC day against `dailyAllowance`.

export interface QuotaLimits {
  ratePerS: number;
  burst: number;
  /** Admitted requests per UTC day; null: no daily cap. */
  dailyAllowance: number | null;
}

/** Where a decision was taken: shared Redis, this process alone (no REDIS_URL), or this process standing in for a failing Redis. */
export type QuotaMode = 'redis' | 'local' | 'fallback';

export interface QuotaDecision {
  allowed: boolean;
  /** Which limit refused it (null when allowed). */
  limit: 'rate' | 'daily' | null;
  /** Tokens left in the bucket after this request (fractional). */
  tokens: number;
  /** Admitted requests of the key today (this one included when allowed). */
  dailyUsed: number;
  mode: QuotaMode;
  /** The limits the decision was taken against (in fallback: the process's share). */
  limits: QuotaLimits;
}

/** Seconds from `nowMs` to the next UTC midnight (at least 1). */
export function secondsToUtcMidnight(nowMs: number): number {
  const day = 86_400_000;
  return Math.max(1, Math.ceil((day - (nowMs % day)) / 1000));
}

/** The UTC day of `nowMs` as YYYY-MM-DD (usage is kept per UTC day). */
export function utcDay(nowMs: number): string {
  return new Date(nowMs).toISOString().slice(0, 10);
}

/** Seconds a refused request should wait: for one token, or until the day is over. */
export function retryAfterSeconds(decision: QuotaDecision, nowMs: number): number {
  if (decision.limit === 'daily') return secondsToUtcMidnight(nowMs);
  if (decision.limit === 'rate') return Math.max(1, Math.ceil((1 - decision.tokens) / decision.limits.ratePerS));
  return 0;
}

/** A token bucket refilled to `now`: the same steps as the Redis script (./redis-quota.ts). */
export function refill(bucket: { tokens: number; ts: number }, limits: QuotaLimits, nowMs: number): void {
  if (nowMs > bucket.ts) bucket.tokens = Math.min(limits.burst, bucket.tokens + ((nowMs - bucket.ts) * limits.ratePerS) / 1000);
  bucket.ts = Math.max(bucket.ts, nowMs);
}

/**
 * Limits scaled to one process's share when `gateways` processes stand in for a failing Redis each on its
 * own: together they admit about what the shared bucket would (rounded up: at least one token).
 */
export function shareOf(limits: QuotaLimits, gateways: number): QuotaLimits {
  if (gateways <= 1) return limits;
  return {
    ratePerS: limits.ratePerS / gateways,
    burst: Math.max(1, Math.ceil(limits.burst / gateways)),
    dailyAllowance: limits.dailyAllowance,
  };
}
