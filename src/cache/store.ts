import { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import { Breaker, type BreakerState } from './breaker.js';
import { versionPrefix } from './keys.js';

// The response store of both surfaces: an in-memory LRU bounded in bytes, or Redis (REDIS_URL) with a small
// in-process level in front. Entries are serialised JSON text, so a hit is written out as it is and its
// size is known before it is kept. Invalidation is by key: every key carries the data version and only
// keys of the current one are read or stored. Redis fails soft (short timeouts, no queue, a breaker):
// a lookup it cannot answer is a `bypass`, not a miss.

/** What `get` answers when the store cannot be used now (Redis down, hung, or its breaker open). */
export const bypassed = Symbol('cache bypassed');

export interface CacheStoreOptions {
  namespace: string;
  ttlMs: number;
  /** In-memory store: at most this many entries… */
  maxEntries: number;
  /** …and at most this many bytes of keys and response text together. */
  maxBytes: number;
  /** Responses larger than this (UTF-8 bytes) are not stored (either store). */
  maxEntryBytes: number;
  redisUrl?: string;
  /** Redis: per-command timeout (ms); default 50. */
  redisCommandTimeoutMs?: number;
  /** Redis: consecutive failures that open the breaker; default 5. */
  redisBreakerFailures?: number;
  /** Redis: how long the breaker stays open before a probe; default 2000 ms. */
  redisBreakerOpenMs?: number;
  /** Redis: bytes of the in-process level in front of it (at most `maxEntries` entries too); 0: none. */
  localMaxBytes?: number;
  /** The data version the gateway answers from; null = unknown (every lookup misses, nothing is stored). */
  currentVersion: () => string | null;
  metrics: Metrics;
  logger: Logger;
}

export interface CacheStore {
  kind: 'memory' | 'redis';
  namespace: string;
  ttlMs: number;
  maxEntryBytes: number;
  /**
   * The stored text of a key of the current data version; undefined on a miss; `bypassed` when the store
   * cannot be used (Redis failing or its breaker open, and no local level in front). Never throws.
   */
  get(key: string): Promise<string | undefined | typeof bypassed>;
  /** False while the store is known to be unusable (Redis breaker open, no local level): skip it without asking. */
  available(): boolean;
  /** Redis only: connection ready and breaker closed, and the breaker's state; null in memory. */
  redisState(): { up: boolean; breaker: BreakerState } | null;
  /**
   * Stores `text` under `key` unless the key is of another data version or the text is over
   * `maxEntryBytes`. Never throws and never waits: a failing store only counts an error.
   */
  set(key: string, text: string): void;
  /** Entries and bytes held in memory (the memory store, or the local level in front of Redis); null: none. */
  stats(): { entries: number; bytes: number } | null;
  /** Settles when the store can be used (Redis connected, or given up on: it then works as all-miss). */
  ready: Promise<void>;
  close(): Promise<void>;
}

/** Bytes an entry is charged with besides its key and text (the LRU's own bookkeeping, roughly). */
const entryOverhead = 64;

interface TextStore {
  get(key: string): Promise<string | undefined> | string | undefined;
  set(key: string, text: string, bytes: number, ttlMs: number): Promise<unknown> | void;
  stats?(): { entries: number; bytes: number };
}

function memoryStore(options: Pick<CacheStoreOptions, 'maxEntries' | 'maxBytes' | 'ttlMs'>): TextStore & { get(key: string): string | undefined } {
  // lru-cache counts each entry's `size` against `maxSize` and evicts least recently used entries until a
  // new one fits (one larger than the whole budget is refused, nothing evicted)
  const lru = new LRUCache<string, string>({
    max: options.maxEntries,
    maxSize: options.maxBytes,
    ttl: options.ttlMs,
    ttlAutopurge: false,
    allowStale: false,
  });
  return {
    get: (key) => lru.get(key),
    set: (key, text, bytes, ttlMs) => {
      lru.set(key, text, { size: bytes + key.length + entryOverhead, ttl: ttlMs });
    },
    stats: () => ({ entries: lru.size, bytes: lru.calculatedSize }),
  };
}

function redisStore(redis: Redis): TextStore {
  return {
    get: async (key) => (await redis.get(key)) ?? undefined,
    set: (key, text, _bytes, ttlMs) => redis.set(key, text, 'PX', ttlMs),
  };
}

const redisDefaults = { commandTimeoutMs: 50, breakerFailures: 5, breakerOpenMs: 2_000 };

interface Levels {
  redis?: Redis;
  breaker?: Breaker;
  /** The store itself: memory, or Redis. */
  inner: TextStore;
  /** The in-process level in front of Redis, if any. */
  local?: ReturnType<typeof memoryStore>;
  ready: Promise<void>;
}

export function createCacheStore(options: CacheStoreOptions): CacheStore {
  const { metrics } = options;
  let breaker: Breaker | undefined;
  const failed = failureReport(options, () => breaker);
  const levels: Levels = options.redisUrl ? redisLevels(options, options.redisUrl, failed) : { inner: memoryStore(options), ready: Promise.resolve() };
  const { redis, inner, local } = levels;
  breaker = levels.breaker;

  const isCurrent = (key: string) => {
    const version = options.currentVersion();
    return version !== null && key.startsWith(versionPrefix(options.namespace, version));
  };

  return {
    kind: redis ? 'redis' : 'memory',
    namespace: options.namespace,
    ttlMs: options.ttlMs,
    maxEntryBytes: options.maxEntryBytes,
    available: () => local !== undefined || (breaker?.allows() ?? true),
    redisState: () => (redis && breaker ? { up: redis.status === 'ready' && breaker.allows(), breaker: breaker.state } : null),
    async get(key) {
      if (!isCurrent(key)) return undefined;
      const near = local?.get(key);
      if (near !== undefined) {
        metrics.cacheLocalHits.inc();
        return near;
      }
      // Redis unusable: with a local level that is a miss there (the answer is computed and kept locally)
      const unusable = local ? undefined : bypassed;
      if (breaker && !breaker.allows()) return unusable;
      try {
        const text = await inner.get(key);
        breaker?.success();
        if (typeof text !== 'string') return undefined;
        // the key is of the current version still (checked above): the copy is as fresh as the entry
        local?.set(key, text, Buffer.byteLength(text, 'utf8'), options.ttlMs);
        return text;
      } catch (error) {
        failed('get', error);
        return unusable;
      }
    },
    set(key, text) {
      if (!isCurrent(key)) return;
      // cheap bound first (a string's UTF-8 size is at least its length), then the exact size
      const bytes = text.length > options.maxEntryBytes ? Infinity : Buffer.byteLength(text, 'utf8');
      if (bytes > options.maxEntryBytes) {
        metrics.cacheOversized.inc();
        return;
      }
      local?.set(key, text, bytes, options.ttlMs);
      if (breaker && !breaker.allows()) return;
      try {
        const done = inner.set(key, text, bytes, options.ttlMs);
        if (done) done.then(() => breaker?.success(), (error: unknown) => failed('set', error));
      } catch (error) {
        failed('set', error);
      }
    },
    stats: () => (local ?? inner).stats?.() ?? null,
    ready: levels.ready,
    async close() {
      breaker?.stop();
      if (redis) {
        await redis.quit().catch(() => redis?.disconnect());
      }
    },
  };
}

type Failed = (op: string, error: unknown) => void;

/** Counts a failed store operation, feeds get/set failures to the breaker, and warns at most every 10 s. */
function failureReport(options: CacheStoreOptions, breaker: () => Breaker | undefined): Failed {
  let lastWarn = 0;
  return (op, error) => {
    options.metrics.cacheErrors.inc({ op });
    if (op === 'get' || op === 'set') breaker()?.failure(`${op}: ${(error as Error)?.message ?? String(error)}`);
    // a Redis outage must not flood the log
    if (Date.now() - lastWarn > 10_000) {
      lastWarn = Date.now();
      options.logger.warn({ cache: options.redisUrl ? 'redis' : 'memory', op, err: (error as Error)?.message }, 'response cache unavailable: answering without it');
    }
  };
}

/** Redis with its breaker, and the in-process level in front of it (CACHE_LOCAL_MAX_BYTES). */
function redisLevels(options: CacheStoreOptions, url: string, failed: Failed): Levels {
  const { metrics, logger } = options;
  const commandTimeout = options.redisCommandTimeoutMs ?? redisDefaults.commandTimeoutMs;
  const redis = new Redis(url, {
    lazyConnect: true,
    // a cache must never hold a request up: nothing queued while disconnected, nothing retried or resent
    // after a reconnect (commands pending when the connection drops fail at once), short timeouts
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    commandTimeout,
    connectTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
  const breaker = new Breaker({
    failures: options.redisBreakerFailures ?? redisDefaults.breakerFailures,
    minSpanMs: commandTimeout,
    openMs: options.redisBreakerOpenMs ?? redisDefaults.breakerOpenMs,
    probe: () => redis.ping(),
    onChange: (state, previous, reason) => {
      // logged and counted: closed → open and back; a failed probe (half-open → open) only at debug level
      if (state === 'half-open') return;
      if (previous === 'half-open' && state === 'open') return logger.debug({ cache: 'redis', breaker: state, reason }, 'Redis still failing');
      metrics.redisBreakerTransitions.inc({ to: state });
      if (state === 'open') logger.warn({ cache: 'redis', breaker: state, reason }, 'Redis circuit open: answering without the shared cache');
      else logger.info({ cache: 'redis', breaker: state, reason }, 'Redis circuit closed: shared cache back in use');
    },
  });
  redis.on('error', (error: Error) => failed('connection', error));
  // a lost connection needs no counting: skip Redis until it is back and answers a probe
  redis.on('close', () => breaker.trip('connection closed'));
  const ready = redis.connect().then(
    () => logger.info({ cache: 'redis' }, 'response cache on Redis'),
    (error: unknown) => failed('connect', error),
  );
  const local = options.localMaxBytes ? memoryStore({ maxEntries: options.maxEntries, maxBytes: options.localMaxBytes, ttlMs: options.ttlMs }) : undefined;
  return { redis, breaker, inner: redisStore(redis), local, ready };
}
