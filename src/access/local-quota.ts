import { refill, utcDay, type QuotaDecision, type QuotaLimits, type QuotaMode } from './limits.js';

// Token buckets and day counters in this process, one per key (keys are created by the operator: their
// number is bounded). Used alone without REDIS_URL, and as the stand-in while Redis fails.

interface State {
  tokens: number;
  ts: number;
  day: string;
  /** Admitted today by this process. */
  used: number;
}

export interface LocalQuota {
  /**
   * Takes one request of key `id`. `dailyBase` is what other gateways are known to have admitted today
   * (the last shared count seen), and `gateways` how many processes share the day's remainder.
   */
  take(id: string, limits: QuotaLimits, mode: QuotaMode, nowMs: number, daily?: { base: number; gateways: number }): QuotaDecision;
  /** Forgets keys no longer in the registry. */
  retain(ids: ReadonlySet<string>): void;
  size(): number;
}

export function createLocalQuota(): LocalQuota {
  const states = new Map<string, State>();
  return {
    take(id, limits, mode, nowMs, daily = { base: 0, gateways: 1 }) {
      const day = utcDay(nowMs);
      let state = states.get(id);
      if (!state) states.set(id, (state = { tokens: limits.burst, ts: nowMs, day, used: 0 }));
      if (state.day !== day) {
        state.day = day;
        state.used = 0;
      }
      refill(state, limits, nowMs);
      // this process's part of what is left of the day (all of it with one gateway)
      const cap = limits.dailyAllowance === null ? Number.POSITIVE_INFINITY
        : Math.ceil(Math.max(0, limits.dailyAllowance - daily.base) / Math.max(1, daily.gateways));
      const dailyUsed = daily.base + state.used;
      if (state.used >= cap) return { allowed: false, limit: 'daily', tokens: state.tokens, dailyUsed, mode, limits };
      if (state.tokens < 1) return { allowed: false, limit: 'rate', tokens: state.tokens, dailyUsed, mode, limits };
      state.tokens -= 1;
      state.used += 1;
      return { allowed: true, limit: null, tokens: state.tokens, dailyUsed: dailyUsed + 1, mode, limits };
    },
    retain(ids) {
      for (const id of states.keys()) if (!ids.has(id)) states.delete(id);
    },
    size: () => states.size,
  };
}
