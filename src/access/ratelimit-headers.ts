import { secondsToUtcMidnight, type QuotaDecision } from './limits.js';

// The IETF RateLimit header fields as draft-ietf-httpapi-ratelimit-headers-10 defines them: two Structured
// Field lists, one member per policy.
//   RateLimit-Policy: "burst";q=<burst>;w=<seconds to refill an empty bucket>, "daily";q=<allowance>;w=86400
//   RateLimit:        "burst";r=<tokens left>;t=<seconds until the bucket is full>, "daily";r=<left today>;t=<seconds to UTC midnight>
// The token bucket is advertised as a quota of `burst` requests over the time it takes to refill: a client
// that spends `r` and then waits `t` seconds has its full burst again. "daily" appears only for keys with an
// allowance.

export function rateLimitHeaders(decision: QuotaDecision, nowMs: number): Record<string, string> {
  const { ratePerS, burst, dailyAllowance } = decision.limits;
  const tokens = Math.max(0, Math.min(burst, decision.tokens));
  const policies = [`"burst";q=${burst};w=${Math.max(1, Math.ceil(burst / ratePerS))}`];
  const states = [`"burst";r=${Math.floor(tokens)};t=${Math.max(0, Math.ceil((burst - tokens) / ratePerS))}`];
  if (dailyAllowance !== null) {
    policies.push(`"daily";q=${dailyAllowance};w=86400`);
    states.push(`"daily";r=${Math.max(0, dailyAllowance - decision.dailyUsed)};t=${secondsToUtcMidnight(nowMs)}`);
  }
  return { 'ratelimit-policy': policies.join(', '), ratelimit: states.join(', ') };
}
