import type { Plugin } from 'graphql-yoga';
import { createRequestSnapshots, graphqlResponseCache } from '../cache/graphql.js';
import { keyVersion, namespaceFor } from '../cache/keys.js';
import { createRpcCache, type RpcCache } from '../cache/rpc.js';
import { createCacheStore, type CacheStore } from '../cache/store.js';
import { configSchema, type Config } from '../config.js';
import { createSql, type Sql } from '../db/client.js';
import { readBlockTimes } from '../db/block-times.js';
import { createVersionWatcher, type VersionWatcher } from '../db/version.js';
import { buildInfo } from './build.js';
import { graphqlObservability, graphqlPrometheus } from './graphql.js';
import { observeRequests, type Handler } from './http.js';
import { createLogger, type Logger } from './logger.js';
import { createMetrics, type Metrics } from './metrics.js';
import { rpcObserver, type RpcObserver } from './rpc.js';
import type { PoolMeter } from './scope.js';
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
  config: Partial<OperationsConfig> & { DB_POOL_MAX: number; DB_CONNECT_TIMEOUT_S: number };
  target: { url?: string; socketPath?: string };
  /** Identifies the build for the cache namespace (schema SDL, paging defaults). */
  build: string;
  logger?: Logger;
}

export interface Operations {
  logger: Logger;
  metrics: Metrics;
  watcher: VersionWatcher;
  /** The watcher's own client: its LISTEN connection also carries live events (src/live/source.ts). */
  watcherSql: Sql;
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

  // The watcher has its own connection (and the driver one more for LISTEN): version reads never queue
  // behind the pool's statements, and the pool's statement count stays the application's own.
  const watcherSql = createSql({
    ...options.target,
    poolMax: 1,
    statementTimeoutMs: 5_000,
    connectTimeoutS: options.config.DB_CONNECT_TIMEOUT_S,
    readOnly: true,
  });
  let metrics: Metrics | undefined;
  // newest block time per chain, re-read when the data version changes (the data-age gauge subtracts it
  // from the time of the scrape); a later read never loses to an earlier one that finishes after it
  let blockTimes: Record<string, number> | null = null;
  let blockTimesRead = 0;
  const readTimes = () => {
    const seq = ++blockTimesRead;
    readBlockTimes(watcherSql).then(
      (times) => { if (seq === blockTimesRead) blockTimes = times; },
      (error: unknown) => logger.debug({ err: (error as Error).message }, 'cannot read block times'),
    );
  };
  const watcher = createVersionWatcher(watcherSql, {
    pollMs: config.DATA_VERSION_POLL_MS,
    // the embedded engine's socket server accepts LISTEN but delivers no notifications: poll only
    listen: config.DATA_VERSION_LISTEN && !options.target.socketPath,
    onChange: (next, previous, via) => {
      metrics?.versionChanges.inc({ via });
      readTimes();
      logger.debug({ dataVersion: next.version, previous: previous?.version, via }, 'data version');
    },
    onError: (error, where) =>
      logger.warn({ where, err: (error as Error).message },
        where === 'listen' ? 'LISTEN failed: learning data versions by polling only' : 'cannot read the data version: answering without the cache'),
  });
  const current = () => watcher.current();
  let cache: CacheStore | null = null;
  let poolState: (() => { inUse: number; waiting: number; size: number }) | undefined;
  metrics = createMetrics({
    pool, poolMax: options.config.DB_POOL_MAX, freshness: current, maxOperations: config.METRICS_MAX_OPERATIONS,
    cacheStats: () => cache?.stats() ?? null,
    poolState: () => poolState?.() ?? null,
    build: buildInfo(),
    blockTimes: () => blockTimes,
    listening: () => watcher.listening(),
    // the Redis gauges exist only when there is a Redis to report on
    ...(config.CACHE && config.REDIS_URL ? { redis: () => cache?.redisState() ?? null } : {}),
  });
  const currentVersion = () => {
    const snapshot = watcher.current();
    return snapshot ? keyVersion(snapshot) : null;
  };

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
  const snapshots = createRequestSnapshots(current);
  const yogaPlugins: Plugin[] = [
    graphqlPrometheus(metrics),
    graphqlObservability({ snapshots, metrics, caching: cache !== null }),
    ...(cache ? [graphqlResponseCache(cache, snapshots)] : []),
  ];
  const m = metrics;
  const ready = Promise.all([watcher.start(), cache?.ready]).then(() => {
    logger.debug({ cache: cache?.kind ?? 'off', listening: watcher.listening(), dataVersion: currentVersion() }, 'operations ready');
  });

  return {
    logger,
    metrics: m,
    watcher,
    watcherSql,
    cache,
    yogaPlugins,
    rpcCache: cache ? createRpcCache(cache, currentVersion, m) : null,
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
      await watcher.stop();
      await Promise.all([watcherSql.end({ timeout: 5 }), cache?.close()]);
    },
  };
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
