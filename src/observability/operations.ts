import type { Plugin } from 'graphql-yoga';
import { createRequestSnapshots, graphqlResponseCache } from '../cache/graphql.js';
import { keyVersion, namespaceFor } from '../cache/keys.js';
import { createRpcCache, type RpcCache } from '../cache/rpc.js';
import { createCacheStore, type CacheStore } from '../cache/store.js';
import { configSchema, type Config } from '../config.js';
import { readBlockTimes } from '../db/block-times.js';
import type { Sources } from '../db/sources.js';
import type { VersionWatcher } from '../db/version.js';
import { buildInfo } from './build.js';
import { graphqlObservability, graphqlPrometheus } from './graphql.js';
import { observeRequests, type Handler } from './http.js';
import { createLogger, type Logger } from './logger.js';
import { createMetrics, type Metrics } from './metrics.js';
import { rpcObserver, type RpcObserver } from './rpc.js';
import type { PoolMeter } from './scope.js';
import { replicaMetrics } from './replicas.js';
import { instrumentStore } from './store.js';

// Everything that runs a gateway rather than answers for it, built per gateway (no module state): the
// logger, the metrics registry, the data-version watcher, the response cache and the hooks that connect
// them to the HTTP, GraphQL and JSON-RPC layers. src/app.ts wires the hooks in.

export type OperationsConfig = Pick<Config,
  'CACHE' | 'CACHE_TTL_MS' | 'CACHE_MAX_ENTRIES' | 'CACHE_MAX_BYTES' | 'CACHE_MAX_ENTRY_BYTES' | 'REDIS_URL' |
  'REDIS_COMMAND_TIMEOUT_MS' | 'REDIS_BREAKER_FAILURES' | 'REDIS_BREAKER_OPEN_MS' | 'DATA_VERSION_POLL_MS' | 'DATA_VERSION_LISTEN' | 'LOG_LEVEL' | 'METRICS_MAX_OPERATIONS'>;

/** The defaults of src/config.ts, for gateways built from a partial config (tests, tools). */
export const operationsDefaults: OperationsConfig = configSchema.pick({
  CACHE: true, CACHE_TTL_MS: true, CACHE_MAX_ENTRIES: true, CACHE_MAX_BYTES: true, CACHE_MAX_ENTRY_BYTES: true,
  REDIS_URL: true, REDIS_COMMAND_TIMEOUT_MS: true, REDIS_BREAKER_FAILURES: true, REDIS_BREAKER_OPEN_MS: true, DATA_VERSION_POLL_MS: true, DATA_VERSION_LISTEN: true, LOG_LEVEL: true, METRICS_MAX_OPERATIONS: true,
}).parse({});

export interface OperationsOptions {
  config: Partial<OperationsConfig> & { DB_POOL_MAX: number };
  /** The primary and the read replicas (src/db/sources.ts): started with the operations, stopped by the gateway. */
  sources: Sources;
  /** Identifies the build for the cache namespace (schema SDL, paging defaults). */
  build: string;
  logger?: Logger;
}

export interface Operations {
  logger: Logger;
  metrics: Metrics;
  /** The primary's data-version watcher. */
  watcher: VersionWatcher;
  cache: CacheStore | null;
  yogaPlugins: Plugin[];
  rpcCache: RpcCache | null;
  onRpcCall: RpcObserver;
  wrapHttp: (handler: Handler) => Handler;
  instrumentStore: <S extends object>(store: S) => S;
  /** The pool's real state (the store's admission gate), for the pool gauges. */
  attachPool(state: () => { inUse: number; waiting: number; size: number }): void;
  /** For GET /metrics. */
  scrape(): Promise<{ contentType: string; body: string }>;
  /** Settles once the first data version is read (or failed) and the cache store is usable. */
  ready: Promise<void>;
  close(): Promise<void>;
}

export function createOperations(options: OperationsOptions): Operations {
  const config = { ...operationsDefaults, ...stripUndefined(options.config) } as OperationsConfig;
  const logger = options.logger ?? createLogger({ level: config.LOG_LEVEL });
  const pool: PoolMeter = { inflight: 0 };

  const { sources } = options;
  const watcher = sources.watcher;
  let metrics: Metrics | undefined;
  // newest block time per chain, re-read on the primary's state connection when the data version changes (the data-age gauge
  // subtracts it from the time of the scrape); a later read never loses to an earlier one that finishes after it
  let blockTimes: Record<string, number> | null = null;
  let blockTimesRead = 0;
  const readTimes = () => {
    const seq = ++blockTimesRead;
    readBlockTimes(sources.primaryStateSql).then(
      (times) => { if (seq === blockTimesRead) blockTimes = times; },
      (error: unknown) => logger.debug({ err: (error as Error).message }, 'cannot read block times'),
    );
  };
  sources.onVersionChange((next, previous, via) => {
    metrics?.versionChanges.inc({ via });
    readTimes();
    logger.debug({ dataVersion: next.version, previous: previous?.version, via }, 'data version');
  });
  let cache: CacheStore | null = null;
  let poolState: (() => { inUse: number; waiting: number; size: number }) | undefined;
  metrics = createMetrics({
    // the gauges count statements over every source's pool
    pool, poolMax: options.config.DB_POOL_MAX * (1 + sources.replicas.length), freshness: () => watcher.current(),
    maxOperations: config.METRICS_MAX_OPERATIONS, cacheStats: () => cache?.stats() ?? null,
    poolState: () => poolState?.() ?? null,
    build: buildInfo(),
    blockTimes: () => blockTimes,
    listening: () => sources.listenUp(),
    // the Redis gauges exist only when there is a Redis to report on
    ...(config.CACHE && config.REDIS_URL ? { redis: () => cache?.redisState() ?? null } : {}),
  });
  replicaMetrics(metrics.registry, sources);
  // Cache keys carry the data version of the source the request is pinned to (src/db/sources.ts): the
  // one it had when the request began. The store takes a key only while that source is still at that
  // version (a source that moved on during the request may have answered from newer data).
  const versionOf = (snapshot: { epoch: string; version: string } | null) => (snapshot ? keyVersion(snapshot) : null);
  const currentVersion = () => versionOf(sources.router.live());
  const pinnedVersion = () => versionOf(sources.router.pin().snapshot);

  cache = config.CACHE
    ? createCacheStore({
      namespace: namespaceFor(options.build),
      ttlMs: config.CACHE_TTL_MS,
      maxEntries: config.CACHE_MAX_ENTRIES,
      maxBytes: config.CACHE_MAX_BYTES,
      maxEntryBytes: config.CACHE_MAX_ENTRY_BYTES,
      redisUrl: config.REDIS_URL,
      redisCommandTimeoutMs: config.REDIS_COMMAND_TIMEOUT_MS,
      redisBreakerFailures: config.REDIS_BREAKER_FAILURES,
      redisBreakerOpenMs: config.REDIS_BREAKER_OPEN_MS,
      currentVersion,
      metrics,
      logger,
    })
    : null;
  const snapshots = createRequestSnapshots(() => sources.router.pin().snapshot);
  const yogaPlugins: Plugin[] = [
    graphqlPrometheus(metrics),
    graphqlObservability({ snapshots, metrics, caching: cache !== null }),
    ...(cache ? [graphqlResponseCache(cache, snapshots)] : []),
  ];
  const m = metrics;
  const ready = Promise.all([sources.start(), cache?.ready]).then(() => {
    logger.debug({ cache: cache?.kind ?? 'off', listening: watcher.listening(), dataVersion: currentVersion() }, 'operations ready');
  });

  return {
    logger,
    metrics: m,
    watcher,
    cache,
    yogaPlugins,
    rpcCache: cache ? createRpcCache(cache, pinnedVersion, m) : null,
    onRpcCall: rpcObserver(m),
    wrapHttp: observeRequests({ logger, metrics: m, pool }),
    instrumentStore: (store) => instrumentStore(store, m),
    attachPool(state) {
      poolState = state;
    },
    async scrape() {
      return { contentType: m.registry.contentType, body: await m.registry.metrics() };
    },
    ready,
    async close() {
      await ready.catch(() => {});
      await cache?.close();
    },
  };
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
