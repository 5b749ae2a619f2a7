import { Redis } from 'ioredis';
import { LRUCache } from 'lru-cache';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import { versionPrefix } from './keys.js';

// One response store for both surfaces: an in-memory LRU bounded in bytes by default, or one shared Redis
// when REDIS_URL is set (several replicas: one cache, and one invalidation since the data version is read
// from the database by each of them).
//
// What is stored is the response as serialised JSON text (a GraphQL `{"data":…}` body, a JSON-RPC
// `result` member), never an object: a hit is written out as it is, without walking or re-serialising
// anything, and the size of an entry is known before it is kept. An entry larger than `maxEntryBytes`
// is not kept at all (memory or Redis), and the in-memory total stays under `maxBytes` (least recently
// used entries are evicted first).
//
// Invalidation is by key, not by deletion: every key carries the data version, and this store answers
// only keys of the version the gateway currently knows. Older entries are never read again; they expire
// (TTL) or are evicted.

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
  /** The stored text of a key of the current data version; undefined on a miss (or a store failure). */
  get(key: string): Promise<string | undefined>;
  /**
   * Stores `text` under `key` unless the key is of another data version or the text is over
   * `maxEntryBytes`. Never throws and never waits: a failing store only counts an error.
   */
  set(key: string, text: string): void;
  /** Entries and bytes held (keys, text and overhead as counted against CACHE_MAX_BYTES); null on Redis. */
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

function memoryStore(options: CacheStoreOptions): TextStore {
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

export function createCacheStore(options: CacheStoreOptions): CacheStore {
  const { metrics, logger } = options;
  let redis: Redis | undefined;
  let inner: TextStore;
  let ready: Promise<void> = Promise.resolve();
  if (options.redisUrl) {
    redis = new Redis(options.redisUrl, {
      lazyConnect: true,
      // a cache must never hold a request up: no queueing while disconnected, one try, short timeouts
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      commandTimeout: 1_000,
      connectTimeout: 2_000,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    });
    redis.on('error', (error: Error) => failed('connection', error));
    ready = redis.connect().then(
      () => logger.info({ cache: 'redis' }, 'response cache on Redis'),
      (error: unknown) => failed('connect', error),
    );
    inner = redisStore(redis);
  } else {
    inner = memoryStore(options);
  }

  let lastWarn = 0;
  function failed(op: string, error: unknown) {
    metrics.cacheErrors.inc({ op });
    // one warning per 10 s at most: a Redis outage must not flood the log
    if (Date.now() - lastWarn > 10_000) {
      lastWarn = Date.now();
      logger.warn({ cache: options.redisUrl ? 'redis' : 'memory', op, err: (error as Error)?.message }, 'response cache unavailable: answering without it');
    }
  }

  const isCurrent = (key: string) => {
    const version = options.currentVersion();
    return version !== null && key.startsWith(versionPrefix(options.namespace, version));
  };

  return {
    kind: redis ? 'redis' : 'memory',
    namespace: options.namespace,
    ttlMs: options.ttlMs,
    maxEntryBytes: options.maxEntryBytes,
    async get(key) {
      if (!isCurrent(key)) return undefined;
      try {
        const text = await inner.get(key);
        return typeof text === 'string' ? text : undefined;
      } catch (error) {
        failed('get', error);
        return undefined;
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
      try {
        const done = inner.set(key, text, bytes, options.ttlMs);
        if (done) done.catch((error: unknown) => failed('set', error));
      } catch (error) {
        failed('set', error);
      }
    },
    stats: () => inner.stats?.() ?? null,
    ready,
    async close() {
      if (redis) {
        await redis.quit().catch(() => redis?.disconnect());
      }
    },
  };
}
