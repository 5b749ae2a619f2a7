import type { Redis } from 'ioredis';
import type { QuotaLimits } from './limits.js';

// The shared quota: one Lua script takes a request from the key's token bucket and counts it against the
// day, atomically, so any number of gateways hammering one key together admit about rate × seconds + burst.
// The bucket's clock is Redis' own (TIME): gateways with skewed clocks still agree. The day's counters live
// in one hash per UTC day (`<ns>usage:<day>`, fields `<prefix>:requests|limited|errors|bytes`), which is
// also what `npm run keys -- usage` reads: the gateway cannot write to PostgreSQL.

/** Kept 40 days: `keys usage` shows the last month. */
export const usageTtlS = 40 * 86_400;

export const usageKey = (namespace: string, day: string) => `${namespace}usage:${day}`;
const bucketKey = (namespace: string, prefix: string) => `${namespace}bucket:${prefix}`;

// KEYS[1] bucket, KEYS[2] the day's usage hash; ARGV rate/s, burst, daily (0: none), key prefix, usage TTL (s)
const takeScript = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local daily = tonumber(ARGV[3])
local field = ARGV[4]
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local state = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(state[1])
local ts = tonumber(state[2])
if tokens == nil or ts == nil then tokens = burst; ts = now end
if now > ts then tokens = math.min(burst, tokens + (now - ts) * rate / 1000); ts = now end
if tokens > burst then tokens = burst end
local used = tonumber(redis.call('HGET', KEYS[2], field .. ':requests')) or 0
local verdict = 'ok'
if daily > 0 and used >= daily then
  verdict = 'daily'
elseif tokens < 1 then
  verdict = 'rate'
else
  tokens = tokens - 1
  used = redis.call('HINCRBY', KEYS[2], field .. ':requests', 1)
end
if verdict ~= 'ok' then redis.call('HINCRBY', KEYS[2], field .. ':limited', 1) end
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', tostring(ts))
redis.call('PEXPIRE', KEYS[1], math.ceil(burst / rate * 1000) + 1000)
redis.call('EXPIRE', KEYS[2], tonumber(ARGV[5]))
return {verdict, tostring(tokens), tostring(used)}
`;

type Take = (bucket: string, usage: string, rate: string, burst: string, daily: string, prefix: string, ttl: string) => Promise<[string, string, string]>;

export interface SharedTake {
  verdict: 'ok' | 'rate' | 'daily';
  tokens: number;
  used: number;
}

/** The script, defined on `redis` (EVALSHA, loaded again by ioredis when Redis has forgotten it). */
export function sharedBucket(redis: Redis, namespace: string) {
  redis.defineCommand('igwTakeQuota', { numberOfKeys: 2, lua: takeScript });
  const take = (redis as unknown as { igwTakeQuota: Take }).igwTakeQuota.bind(redis);
  return async (prefix: string, limits: QuotaLimits, day: string): Promise<SharedTake> => {
    const [verdict, tokens, used] = await take(bucketKey(namespace, prefix), usageKey(namespace, day), String(limits.ratePerS),
      String(limits.burst), String(limits.dailyAllowance ?? 0), prefix, String(usageTtlS));
    return { verdict: verdict as SharedTake['verdict'], tokens: Number(tokens), used: Number(used) };
  };
}

/** Adds counters to the day's usage hash (one pipeline; the usage of requests already answered). */
export async function addUsage(redis: Redis, namespace: string, day: string, counts: Map<string, Record<string, number>>): Promise<void> {
  const key = usageKey(namespace, day);
  const pipeline = redis.pipeline();
  for (const [prefix, fields] of counts) {
    for (const [field, n] of Object.entries(fields)) if (n > 0) pipeline.hincrby(key, `${prefix}:${field}`, n);
  }
  pipeline.expire(key, usageTtlS);
  const results = await pipeline.exec();
  const failed = results?.find(([error]) => error);
  if (failed) throw failed[0];
}

/** The usage of one day: prefix → counters (`keys usage`). */
export async function readUsage(redis: Redis, namespace: string, day: string): Promise<Map<string, Record<string, number>>> {
  const hash = await redis.hgetall(usageKey(namespace, day));
  const out = new Map<string, Record<string, number>>();
  for (const [field, value] of Object.entries(hash)) {
    const at = field.lastIndexOf(':');
    const prefix = field.slice(0, at);
    const counters = out.get(prefix) ?? {};
    counters[field.slice(at + 1)] = Number(value);
    out.set(prefix, counters);
  }
  return out;
}
