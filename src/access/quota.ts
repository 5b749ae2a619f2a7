import { Redis } from 'ioredis';
import { Breaker, type BreakerState } from '../cache/breaker.js';
import type { Logger } from '../observability/logger.js';
import { shareOf, utcDay, type QuotaDecision, type QuotaLimits, type QuotaMode } from './limits.js';
import { createLocalQuota } from './local-quota.js';
import { addUsage, sharedBucket } from './redis-quota.js';

// Quotas of keyed requests. With REDIS_URL, one bucket and one day counter per key shared by every gateway
// (./redis-quota.ts); without it, this process's own (./local-quota.ts: several gateways without Redis
// each admit the full rate).
//
// Redis fails soft, never open: a command that fails or times out (REDIS_COMMAND_TIMEOUT_MS), and every
// request while the breaker is open (../cache/breaker.ts, the cache's), is decided by this process's own
// bucket at 1/QUOTA_GATEWAYS of the key's rate and burst and of what is left of the day (from the last
// shared count seen). The mode is a gauge and a log line on each change; the requests admitted meanwhile
// are added to the shared day counters once Redis answers again.

export const quotaNamespace = 'igw:keys:';

export interface QuotaOptions {
  redisUrl?: string;
  /** Redis: per-command timeout (ms). */
  commandTimeoutMs: number;
  breakerFailures: number;
  breakerOpenMs: number;
  /** Gateways sharing the keys: each takes this share of a key's limits while Redis fails. */
  gateways: number;
  /** How often the day's error and byte counters are added to Redis (ms). */
  flushMs?: number;
  logger: Logger;
  now?: () => number;
}

/** A key as the quota sees it: its public prefix names its counters. */
export interface QuotaKey {
  prefix: string;
  limits: QuotaLimits;
}

export interface Quota {
  take(key: QuotaKey): Promise<QuotaDecision>;
  /** Counts an answered request's outcome (errors, bytes) into the day's usage. Never throws or waits. */
  record(prefix: string, counts: { errors?: number; bytes?: number }): void;
  /** Connects to Redis if not yet done (it is done on first use: a gateway without keys holds no connection). */
  connect(): void;
  /** redis, local (no Redis), or fallback (Redis failing). */
  mode(): QuotaMode;
  /** Requests decided by the stand-in buckets since the start. */
  fallbackDecisions(): number;
  breakerState(): BreakerState | null;
  /** Forgets the buckets of keys no longer known. */
  retain(prefixes: ReadonlySet<string>): void;
  /** Sends the pending day counters now (tests, shutdown). */
  flush(): Promise<void>;
  close(): Promise<void>;
}

type Pending = Map<string, Map<string, Record<string, number>>>;

function addPending(pending: Pending, day: string, prefix: string, field: string, n: number) {
  let byKey = pending.get(day);
  if (!byKey) pending.set(day, (byKey = new Map()));
  const counts = byKey.get(prefix) ?? {};
  counts[field] = (counts[field] ?? 0) + n;
  byKey.set(prefix, counts);
}

export function createQuota(options: QuotaOptions): Quota {
  const now = options.now ?? Date.now;
  const local = createLocalQuota();
  if (!options.redisUrl) {
    return {
      take: async (key) => local.take(key.prefix, key.limits, 'local', now()),
      connect: () => {},
      record: () => {},
      mode: () => 'local',
      fallbackDecisions: () => 0,
      breakerState: () => null,
      retain: (prefixes) => local.retain(prefixes),
      flush: async () => {},
      close: async () => {},
    };
  }
  return redisQuota(options, options.redisUrl, local, now);
}

function redisQuota(options: QuotaOptions, url: string, local: ReturnType<typeof createLocalQuota>, now: () => number): Quota {
  const redis = quotaRedis(url, options.commandTimeoutMs);
  const take = sharedBucket(redis, quotaNamespace);
  // the last shared day count seen per key: the base of the stand-in's daily share
  const lastShared = new Map<string, { day: string; used: number }>();
  const pending: Pending = new Map();
  let fallbacks = 0;
  const noteMode = modeLog(options);
  const breaker = quotaBreaker(options, redis, noteMode);

  const standIn = (key: QuotaKey, day: string, nowMs: number): QuotaDecision => {
    fallbacks++;
    const seen = lastShared.get(key.prefix);
    const base = seen?.day === day ? seen.used : 0;
    const decision = local.take(key.prefix, shareOf(key.limits, options.gateways), 'fallback', nowMs, { base, gateways: options.gateways });
    addPending(pending, day, key.prefix, decision.allowed ? 'requests' : 'limited', 1);
    return decision;
  };
  const flush = () => flushUsage(redis, breaker, pending);
  const timer = setInterval(() => void flush(), options.flushMs ?? 1_000);
  timer.unref();
  let connecting = false;
  const connect = () => {
    if (connecting) return;
    connecting = true;
    // a failed first connect is retried by ioredis (retryStrategy); requests meanwhile go to the stand-in
    redis.connect().catch(() => {});
  };

  return {
    async take(key) {
      const nowMs = now();
      const day = utcDay(nowMs);
      if (!breaker.allows() || redis.status !== 'ready') {
        connect();
        noteMode('fallback', `redis ${redis.status}`);
        return standIn(key, day, nowMs);
      }
      try {
        const shared = await take(key.prefix, key.limits, day);
        breaker.success();
        noteMode('redis', 'answered');
        lastShared.set(key.prefix, { day, used: shared.used });
        const allowed = shared.verdict === 'ok';
        return { allowed, limit: allowed ? null : shared.verdict as 'rate' | 'daily', tokens: shared.tokens, dailyUsed: shared.used, mode: 'redis', limits: key.limits };
      } catch (error) {
        breaker.failure((error as Error).message);
        return standIn(key, day, nowMs);
      }
    },
    connect,
    record(prefix, counts) {
      const day = utcDay(now());
      if (counts.errors) addPending(pending, day, prefix, 'errors', counts.errors);
      if (counts.bytes) addPending(pending, day, prefix, 'bytes', counts.bytes);
    },
    // not connected yet (no key used so far): nothing has failed
    mode: () => (!connecting || (breaker.allows() && redis.status === 'ready') ? 'redis' : 'fallback'),
    fallbackDecisions: () => fallbacks,
    breakerState: () => breaker.state,
    retain(prefixes) {
      local.retain(prefixes);
      for (const p of lastShared.keys()) if (!prefixes.has(p)) lastShared.delete(p);
    },
    flush,
    async close() {
      clearInterval(timer);
      await flush().catch(() => {});
      breaker.stop();
      redis.disconnect();
    },
  };
}

/** The breaker over the quota's Redis connection; each opening and closing is logged as a mode switch. */
function quotaBreaker(options: QuotaOptions, redis: Redis, noteMode: (mode: QuotaMode, reason: string) => void): Breaker {
  const breaker = new Breaker({
    failures: options.breakerFailures,
    minSpanMs: options.commandTimeoutMs,
    openMs: options.breakerOpenMs,
    probe: () => redis.ping(),
    onChange: (state, _previous, reason) => {
      if (state === 'open') noteMode('fallback', reason);
      if (state === 'closed') noteMode('redis', reason);
    },
  });
  redis.on('error', () => {}); // counted through the breaker; a closed connection trips it
  redis.on('close', () => breaker.trip('connection closed'));
  return breaker;
}

function quotaRedis(url: string, commandTimeoutMs: number): Redis {
  return new Redis(url, {
    lazyConnect: true,
    // a quota check must never hold a request up: nothing queued while disconnected, nothing retried
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    commandTimeout: commandTimeoutMs,
    connectTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
}

/** Logs each switch between shared quotas and the per-gateway stand-in, once. */
function modeLog(options: QuotaOptions): (mode: QuotaMode, reason: string) => void {
  let lastMode: QuotaMode = 'redis';
  return (mode, reason) => {
    if (mode === lastMode) return;
    lastMode = mode;
    if (mode === 'fallback') {
      options.logger.warn({ quota: mode, reason, gateways: options.gateways },
        'Redis failing: key quotas decided per gateway at 1/QUOTA_GATEWAYS of each key\'s limits');
    } else options.logger.info({ quota: mode }, 'Redis back: key quotas shared again');
  };
}

/** Adds the pending day counters to Redis; a day's counters that fail stay pending for the next flush. */
async function flushUsage(redis: Redis, breaker: Breaker, pending: Pending): Promise<void> {
  if (!breaker.allows() || pending.size === 0) return;
  const batch = [...pending];
  pending.clear();
  for (const [day, counts] of batch) {
    try {
      await addUsage(redis, quotaNamespace, day, counts);
    } catch {
      // kept for the next flush (bounded: one entry per key and day)
      for (const [prefix, fields] of counts) for (const [f, n] of Object.entries(fields)) addPending(pending, day, prefix, f, n);
    }
  }
}
