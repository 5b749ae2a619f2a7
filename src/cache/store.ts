import { createRedisCache } from '@envelop/response-cache-redis';
import { createInMemoryCache, type Cache } from '@graphql-yoga/plugin-response-cache';
import type { ExecutionResult } from 'graphql';
import { Redis } from 'ioredis';
import type { Logger } from '../observability/logger.js';
import type { Metrics } from '../observability/metrics.js';
import { versionPrefix } from './keys.js';

// One response store for both surfaces: the response-cache plugin's own in-memory LRU by default, or
// @envelop/response-cache-redis on one shared Redis when REDIS_URL is set (several replicas: one cache,
// and one invalidation since the data version is read from the database by each of them).
//
// Invalidation is by key, not by deletion: every key carries the data version, and this store answers
// only keys of the version the gateway currently knows. The plugin's entity bookkeeping (a Redis set per
// type name, never expiring) is not used: the store is given no entities, and entries simply expire (TTL,
// or LRU eviction in memory).

export interface CacheStoreOptions {
  namespace: string;
  ttlMs: number;
  maxEntries: number;
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
  /** For the GraphQL response-cache plugin. */
  responses: Cache;
  /** Settles when the store can be used (Redis connected, or given up on: it then works as all-miss). */
  ready: Promise<void>;
  close(): Promise<void>;
}

export function createCacheStore(options: CacheStoreOptions): CacheStore {
  const { metrics, logger } = options;
  let redis: Redis | undefined;
  let inner: Cache;
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
    inner = createRedisCache({ redis }) as unknown as Cache;
  } else {
    inner = createInMemoryCache({ max: options.maxEntries });
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

  const responses: Cache = {
    async get(key: string) {
      if (!isCurrent(key)) return undefined;
      try {
        return (await inner.get(key)) ?? undefined;
      } catch (error) {
        failed('get', error);
        return undefined;
      }
    },
    async set(key: string, result: ExecutionResult, _entities: unknown, ttl: number) {
      if (!isCurrent(key)) return;
      try {
        await inner.set(key, result, [], ttl);
      } catch (error) {
        failed('set', error);
      }
    },
    // nothing to delete: a write changes the data version and with it every key
    invalidate() {},
  };

  return {
    kind: redis ? 'redis' : 'memory',
    namespace: options.namespace,
    ttlMs: options.ttlMs,
    responses,
    ready,
    async close() {
      if (redis) {
        await redis.quit().catch(() => redis?.disconnect());
      }
    },
  };
}
