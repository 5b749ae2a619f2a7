import type { Server } from 'node:http';
import { loadConfig, type Config } from './config.js';
import type { Sql } from './db/client.js';
import { within } from './db/deadline.js';
import type { NotificationSource } from './db/live-events.js';
import { createSchemaCheck } from './db/schema-version.js';
import { createSources, type Sources } from './db/sources.js';
import { expandHosts, expandUrlList } from './domain/database-urls.js';
import { createStore, type Store, type StoreLimits } from './db/store.js';
import type { PoolShares } from './db/statement-runner.js';
import { blockTimesReader } from './db/block-times.js';
import { dataAgeSeconds, type VersionWatcher } from './db/version.js';
import { contextFactory } from './graphql/context.js';
import { graphqlRefusalBody } from './graphql/errors.js';
import { streamsPlugin, type StreamStats } from './graphql/plugins/use-streams.js';
import { subscriptionLimitsPlugin } from './graphql/plugins/use-subscription-limits.js';
import { createLiveHub, type LiveHub } from './live/hub.js';
import { registerLiveMetrics, registerStreamMetrics } from './live/metrics.js';
import { createLiveSource, type LiveSource } from './live/source.js';
import { createRequestSnapshots, graphqlResponseCache, isServedFromCache } from './cache/graphql.js';
import { buildFingerprint, keyVersion, namespaceFor } from './cache/keys.js';
import { createRpcCache } from './cache/rpc.js';
import { createCacheStore, type CacheStore } from './cache/store.js';
import { printSdl } from './graphql/schema.js';
import { loadManifest } from './graphql/plugins/use-persisted-operations.js';
import { createGraphqlServer, type GraphqlServer } from './graphql/yoga.js';
import { createLogger, logFailure, yogaLogger, type Logger } from './observability/logger.js';
import { buildInfo } from './observability/build.js';
import { graphqlObservability } from './graphql/plugins/use-metrics.js';
import { createMetrics, registerConnectionMetrics, type Metrics } from './observability/metrics.js';
import { replicaMetrics } from './observability/replicas.js';
import { observeRequests } from './observability/request.js';
import type { PoolMeter } from './request/scope.js';
import { observeBatches } from './loaders/index.js';
import { rpcRefusalBody } from './rpc/errors.js';
import { createRpcHandler } from './rpc/handler.js';
import { createRpcTables } from './rpc/tables.js';
import { clientBudget, clientKey, type HttpSettings } from './server/connections.js';
import { createAccessControl, type AccessControl } from './access/control.js';
import { accessOf } from './access/request-access.js';
import { keyOverridesPlugin } from './graphql/plugins/use-key-overrides.js';
import { closeGracefully, corsPolicy, createHttpServer, type HttpDeps } from './server/http.js';

// The composition root: the only module that builds the gateway's parts (sql clients and sources with the
// data-version watcher, store, metrics, response cache, live events, yoga, the RPC handler, the HTTP
// listener) and hands each the others it needs. The layers below it import only downwards
// (.dependency-cruiser.cjs, checked by `npm run lint:deps`): what a lower layer needs from a higher one
// (error bodies for src/server, the client key for subscriptions, the pool's shares for src/db) is
// passed in here.

export interface Gateway {
  /** The primary's query pool. */
  sql: Sql;
  /** The primary and the read replicas. */
  sources: Sources;
  store: Store;
  yoga: GraphqlServer;
  server: Server;
  /** Logger, metrics, the primary's data-version watcher (built with the sources, src/db), response cache. */
  ops: { logger: Logger; metrics: Metrics; watcher: VersionWatcher; cache: CacheStore | null };
  /** Live events of subscriptions: the fan-out and where its notifications come from (src/live). */
  live: { hub: LiveHub; source: LiveSource | null; open(): number; streams(): StreamStats };
  /** API keys and quotas (src/access). */
  access: AccessControl;
  /** Settles once the data version is known (before it, answers bypass the cache). */
  ready: Promise<void>;
  /**
   * Stops listening, lets requests in flight finish, then closes everything. `drainIdleMs`: how long a
   * kept-alive connection idle at the start may still bring a request (answered 503, Connection: close)
   * before it is closed (default 0: at once).
   */
  close(options?: { drainIdleMs?: number }): Promise<void>;
}

export type GatewayConfig = Pick<Config,
  'DB_POOL_MAX' | 'DB_STATEMENT_TIMEOUT_MS' | 'DB_CONNECT_TIMEOUT_S' | 'DEFAULT_PAGE_SIZE' | 'MAX_PAGE_SIZE' |
  'GRAPHQL_INTROSPECTION' | 'CORS_ORIGIN' | 'RPC_MAX_BODY_BYTES' | 'RPC_MAX_BATCH' |
  'GRAPHQL_MAX_BODY_BYTES' | 'GRAPHQL_MAX_DEPTH' | 'GRAPHQL_MAX_ALIASES' | 'GRAPHQL_MAX_TOKENS' | 'GRAPHQL_MAX_COST' |
  'GRAPHQL_MAX_RESULT_NODES' | 'GRAPHQL_MAX_RESPONSE_BYTES'> &
  Partial<Pick<Config, 'PERSISTED_OPERATIONS_DIR' | 'PERSISTED_OPERATIONS_ONLY' | 'APQ_MAX_ENTRIES' | 'APQ_MAX_BYTES' |
    'APQ_MAX_DOCUMENT_BYTES' | 'APQ_CLIENT_MAX_ENTRIES' | 'APQ_CLIENT_MAX_BYTES' | 'APQ_IDLE_TTL_S' |
    'GRAPHQL_CACHE_CONTROL' | 'HTTP_COMPRESSION' | 'HTTP_COMPRESSION_MIN_BYTES'>> &
  Partial<Pick<Config, 'DATABASE_READ_URLS' | 'DATABASE_READ_NAMES' | 'MAX_REPLICA_LAG_MS' | 'DB_POOLER' | 'DB_ALLOW_UNSAFE_SESSION'>> &
  Partial<Pick<Config, 'SUBSCRIPTIONS_MAX_PER_CLIENT' | 'SUBSCRIPTIONS_MAX_PER_CONNECTION' | 'SUBSCRIPTIONS_MAX_QUEUE'>> &
  Partial<Pick<Config, 'GRAPHQL_MAX_VARIABLES_BYTES' | 'GRAPHQL_MAX_STRING_LENGTH' | 'GRAPHQL_MAX_LIST_LENGTH'>> &
  Partial<Pick<Config, 'SUBSCRIPTIONS_MAX_PENDING_BYTES' | 'SUBSCRIPTIONS_MAX_PENDING_TOTAL_BYTES' | 'SUBSCRIPTIONS_MAX_OPEN' |
    'SUBSCRIPTIONS_MAX_CONNECTION_SHARE' | 'SUBSCRIPTIONS_MAX_NEW_PER_S'>> &
  Partial<OperationsConfig> & Partial<StoreLimits> & Partial<HttpSettings> & Partial<Pick<Config, 'CORS_CREDENTIALS'>> &
  Partial<Pick<Config, 'ANONYMOUS_ACCESS' | 'ANONYMOUS_SHARE' | 'API_KEYS_RELOAD_MS' | 'QUOTA_GATEWAYS' | 'BAD_KEY_FREE_FAILURES' | 'BAD_KEY_MAX_BLOCK_S'>> &
  // history depth, load shedding
  Partial<Pick<Config, 'PUBLIC_URL' | 'HISTORY_MAX_OFFSET' | 'REQUESTS_MAX_ANSWER_BYTES_HELD' | 'SHED_EVENT_LOOP_LAG_MS' | 'SHED_CLIENT_MIN_BYTES' | 'SHED_TOTAL_BYTES_PER_S' | 'SHED_NEW_CONNECTIONS_PER_S' | 'SHED_CLIENT_MIN_CONNECTIONS'>>;

/** Running the gateway rather than answering for it: logging, metrics, the data version, the response cache. */
export type OperationsConfig = Pick<Config,
  'CACHE' | 'CACHE_TTL_MS' | 'CACHE_MAX_ENTRIES' | 'CACHE_MAX_BYTES' | 'CACHE_MAX_ENTRY_BYTES' | 'CACHE_LOCAL_MAX_BYTES' | 'REDIS_URL' |
  'REDIS_COMMAND_TIMEOUT_MS' | 'REDIS_BREAKER_FAILURES' | 'REDIS_BREAKER_OPEN_MS' | 'DATA_VERSION_POLL_MS' | 'DATA_VERSION_LISTEN' | 'LOG_LEVEL' | 'METRICS_MAX_OPERATIONS'>;

/**
 * Every setting's default (src/config.ts; the held-connection bound from this process's open-file limit), read
 * here once: a gateway built from a partial config (tests, tools) gets them for what it leaves out, and the parts
 * below are handed complete values (none of them reads the config schema).
 */
const configDefaults: Config = loadConfig({});

type GatewayTarget = { url?: string; socketPath?: string; notifications?: NotificationSource };
type Paging = { defaultPageSize: number; maxPageSize: number; historyMaxOffset: number };
type ResultLimits = { maxNodes: number; maxBytes: number };

/** Everything but listening: tests build their own gateway on their own database. */
export function createGateway(
  config: GatewayConfig,
  target: GatewayTarget,
  hooks: {
    onQuery?: (text: string, params?: readonly unknown[]) => void; onError?: (error: unknown, where: string) => void; logger?: Logger;
    /** Render and compress GraphiQL at start (src/main.ts), not on its first load. */
    warmGraphiql?: boolean;
  } = {},
): Gateway {
  // read first: a broken operation file stops the start before anything is opened
  const manifest = config.PERSISTED_OPERATIONS_DIR ? loadManifest(config.PERSISTED_OPERATIONS_DIR) : undefined;
  const settings: Config = { ...configDefaults, ...stripUndefined(config) };
  const logger = hooks.logger ?? createLogger({ level: settings.LOG_LEVEL });
  const sources = openSources(settings, target, logger, hooks.onQuery);
  const sql = sources.primary.sql;
  // not ready until the schema is at this build's version (a rollout that ran ahead of its migrations)
  const schema = createSchemaCheck({ sql: sources.primaryStateSql, readMs: sources.stateReadMs, logger });
  const paging: Paging = { defaultPageSize: settings.DEFAULT_PAGE_SIZE, maxPageSize: settings.MAX_PAGE_SIZE, historyMaxOffset: settings.HISTORY_MAX_OFFSET };
  const resultLimits: ResultLimits = { maxNodes: settings.GRAPHQL_MAX_RESULT_NODES, maxBytes: settings.GRAPHQL_MAX_RESPONSE_BYTES };
  const watcher = sources.watcher;
  // in-flight statements of this gateway's pools, counted by the statement runner in the request scopes (src/request/scope.ts)
  const pool: PoolMeter = { inflight: 0 };
  let cache: CacheStore | null = null;
  const metrics = gatewayMetrics(settings, sources, logger, {
    pool, cacheStats: () => cache?.stats() ?? null, redisState: () => cache?.redisState() ?? null,
    // the store's admission gate (built below, once the metrics can observe it)
    poolState: () => store.poolState(),
  });
  // Cache keys carry the data version of the source the request is pinned to (src/db/source-routing.ts): the
  // one it had when the request began. The store takes a key only while that source is still at that
  // version (a source that moved on during the request may have answered from newer data).
  const versionOf = (snapshot: { epoch: string; version: string } | null) => (snapshot ? keyVersion(snapshot) : null);
  const currentVersion = () => versionOf(sources.router.live());
  const pinnedVersion = () => versionOf(sources.router.pin().snapshot);
  cache = settings.CACHE ? responseCache(settings, paging, currentVersion, metrics, logger) : null;
  const snapshots = createRequestSnapshots(() => sources.router.pin().snapshot);
  // how the pool is shared between anonymous and keyed requests, set again at each reload of the keys
  const shares: PoolShares = { anonymous: 1 };
  const access = accessControl(settings, target, sources, metrics, logger, shares);
  const yogaPlugins = [
    // before the response cache: a key's raised page size is answered without it
    keyOverridesPlugin({ paging, maxCost: settings.GRAPHQL_MAX_COST, accessOf, noCache: (request) => snapshots.bypass(request) }),
    graphqlObservability({ snapshots, metrics, caching: cache !== null, fromCache: isServedFromCache }),
    ...(cache ? [graphqlResponseCache(cache, snapshots)] : []),
  ];
  // settles once the first data version is read (or failed) and the cache store is usable
  const opsReady = Promise.all([sources.start(), schema.start(), cache?.ready]).then(() => {
    logger.debug({ cache: cache?.kind ?? 'off', listening: watcher.listening(), dataVersion: currentVersion() }, 'operations ready');
  });
  const store = openStore(settings, sources, schema, shares, metrics);
  const { hub, source } = liveEvents(settings, target, sources, store, metrics, logger);
  // one byte budget per client address for answers and event streams alike (src/server/connections.ts)
  const budget = clientBudget({ bytesPerS: settings.HTTP_CLIENT_BYTES_PER_S, burstBytes: settings.HTTP_CLIENT_BURST_BYTES });
  const { streams, subscriptionLimits } = streamPlugins(settings, budget, shares, metrics);
  const yoga = graphqlServer(settings, {
    store, paging, resultLimits, manifest, logger, hub, plugins: yogaPlugins, subscriptionPlugins: [subscriptionLimits.plugin, streams.plugin],
  });
  const rpc = rpcHandler(settings, { store, paging, resultLimits, metrics, logger, onError: hooks.onError, cache: cache ? createRpcCache(cache, pinnedVersion, metrics) : null });
  const server = httpServer(settings, {
    store, yoga, rpc, metrics, logger, pool, watcher, access, budget, warmGraphiql: hooks.warmGraphiql, streamRefusal: subscriptionLimits.earlyRefusal,
  });
  return {
    sql, sources, store, yoga, server, access,
    ops: { logger, metrics, watcher, cache },
    live: { hub, source, open: subscriptionLimits.open, streams: streams.stats },
    // bounded like the sources' start-up steps: a LISTEN a pooler never answers
    ready: Promise.all([opsReady, access.start(), source && within(source.start(), sources.stateReadMs, 'live events LISTEN').catch((error: unknown) =>
      logger.warn({ err: (error as Error).message }, 'live events: no source'))]).then(() => {}),
    async close(options = {}) {
      // subscriptions end first (each stream sends `complete`), so that closing the server is not held up by them
      await hub.close();
      await source?.stop();
      await closeGracefully(server, options.drainIdleMs ?? 0);
      await opsReady.catch(() => {});
      schema.stop();
      await access.stop();
      await cache?.close();
      await sources.stop();
    },
  };
}

/**
 * The statement store over the primary and its replicas. The application-side limit backs up
 * statement_timeout (a little later, so the server's fires first), counted from the moment a statement
 * holds a connection; `limits` share the pool fairly between requests.
 */
function openStore(settings: Config, sources: Sources, schema: ReturnType<typeof createSchemaCheck>, shares: PoolShares, metrics: Metrics): Store {
  return observeBatches(createStore(sources.primary.sql, {
    timeoutMs: settings.DB_STATEMENT_TIMEOUT_MS + 1_000, limits: settings, router: sources.router, unready: () => whyUnready(schema.unready(), sources.unready()),
    servers: 1 + sources.replicas.length,
    // keyed clients keep the rest of the pool whatever anonymous traffic does, once any key exists
    shares,
  }), metrics.batchSize);
}

/** The listener of both surfaces, with one CORS policy for both (src/server/http.ts). */
function httpServer(settings: Config, parts: {
  store: Store; yoga: GraphqlServer; rpc: HttpDeps['rpc']; metrics: Metrics; logger: Logger; pool: PoolMeter; watcher: VersionWatcher;
  access: AccessControl; budget: ReturnType<typeof clientBudget>; warmGraphiql: boolean | undefined; streamRefusal: HttpDeps['streamRefusal'];
}): Server {
  const { store, yoga, rpc, metrics, logger, pool, watcher } = parts;
  const freshness = () => {
    const snapshot = watcher.current();
    return snapshot ? { dataVersion: snapshot.version, dataAgeSeconds: dataAgeSeconds(snapshot) } : null;
  };
  return createHttpServer({
    store, yoga, rpc, cors: corsPolicy(settings.CORS_ORIGIN, settings.CORS_CREDENTIALS),
    metrics: async () => ({ contentType: metrics.registry.contentType, body: await metrics.registry.metrics() }),
    observe: observeRequests({ logger, metrics, pool }), graphiql: settings.GRAPHQL_INTROSPECTION, freshness,
    compression: settings.HTTP_COMPRESSION ? { minBytes: settings.HTTP_COMPRESSION_MIN_BYTES } : undefined,
    errorBodies: { rpc: rpcRefusalBody, graphql: graphqlRefusalBody },
    access: parts.access.hook, warmGraphiql: parts.warmGraphiql,
    budget: parts.budget, streamRefusal: parts.streamRefusal,
    connectionStats: (read) => registerConnectionMetrics(metrics.registry, read),
  }, settings);
}

/** The primary and the read replicas; a multi-host DATABASE_URL's first host is the primary, the others replicas. */
function openSources(settings: Config, target: GatewayTarget, logger: Logger, onQuery: ((text: string, params?: readonly unknown[]) => void) | undefined): Sources {
  const [primaryUrl, ...moreHosts] = target.url ? expandHosts(target.url) : [];
  return createSources({
    primary: primaryUrl ? { url: primaryUrl } : { socketPath: target.socketPath },
    replicas: [...moreHosts, ...(settings.DATABASE_READ_URLS ? expandUrlList(settings.DATABASE_READ_URLS) : [])],
    replicaNames: settings.DATABASE_READ_NAMES,
    poolMax: settings.DB_POOL_MAX,
    statementTimeoutMs: settings.DB_STATEMENT_TIMEOUT_MS,
    connectTimeoutS: settings.DB_CONNECT_TIMEOUT_S,
    pooler: settings.DB_POOLER,
    allowUnsafeSession: settings.DB_ALLOW_UNSAFE_SESSION,
    maxLagMs: settings.MAX_REPLICA_LAG_MS,
    pollMs: settings.DATA_VERSION_POLL_MS,
    listen: settings.DATA_VERSION_LISTEN,
    logger,
    onQuery,
  });
}

/** The metrics, with the block times and replica gauges they read; parts built later are read through `late`. */
function gatewayMetrics(settings: Config, sources: Sources, logger: Logger, late: {
  pool: PoolMeter;
  cacheStats: () => { entries: number; bytes: number } | null;
  redisState: () => ReturnType<CacheStore['redisState']>;
  poolState: () => ReturnType<Store['poolState']>;
}): Metrics {
  // newest block time per chain, re-read on the primary's state connection when the data version changes
  // (the data-age gauge subtracts it from the time of the scrape)
  const blockTimes = blockTimesReader(sources.primaryStateSql,
    (error) => logger.debug({ err: (error as Error).message }, 'cannot read block times'));
  const metrics = createMetrics({
    // the gauges count statements over every source's pool
    pool: late.pool, poolMax: settings.DB_POOL_MAX * (1 + sources.replicas.length), freshness: () => sources.watcher.current(),
    maxOperations: settings.METRICS_MAX_OPERATIONS, cacheStats: late.cacheStats,
    poolState: late.poolState,
    build: buildInfo(),
    blockTimes: blockTimes.current,
    listening: () => sources.listenUp(),
    // the Redis gauges exist only when there is a Redis to report on
    ...(settings.CACHE && settings.REDIS_URL ? { redis: late.redisState } : {}),
  });
  sources.onVersionChange((next, previous, via) => {
    metrics.versionChanges.inc({ via });
    blockTimes.refresh();
    logger.debug({ dataVersion: next.version, previous: previous?.version, via }, 'data version');
  });
  replicaMetrics(metrics.registry, sources);
  return metrics;
}

function responseCache(settings: Config, paging: Paging, currentVersion: () => string | null, metrics: Metrics, logger: Logger): CacheStore {
  return createCacheStore({
    namespace: namespaceFor(buildFingerprint(printSdl(), paging, createRpcTables())),
    ttlMs: settings.CACHE_TTL_MS,
    maxEntries: settings.CACHE_MAX_ENTRIES,
    maxBytes: settings.CACHE_MAX_BYTES,
    maxEntryBytes: settings.CACHE_MAX_ENTRY_BYTES,
    redisUrl: settings.REDIS_URL,
    redisCommandTimeoutMs: settings.REDIS_COMMAND_TIMEOUT_MS,
    redisBreakerFailures: settings.REDIS_BREAKER_FAILURES,
    redisBreakerOpenMs: settings.REDIS_BREAKER_OPEN_MS,
    localMaxBytes: settings.CACHE_LOCAL_MAX_BYTES,
    currentVersion,
    metrics,
    logger,
  });
}

/**
 * API keys: the registry on the primary's state connection (LISTEN shares it; none on the embedded engine
 * or behind a transaction pooler: reloads only), the quota in Redis when there is one.
 */
function accessControl(settings: Config, target: GatewayTarget, sources: Sources, metrics: Metrics, logger: Logger, shares: PoolShares): AccessControl {
  return createAccessControl({
    anonymous: settings.ANONYMOUS_ACCESS, reloadMs: settings.API_KEYS_RELOAD_MS, gateways: settings.QUOTA_GATEWAYS,
    badKeyFree: settings.BAD_KEY_FREE_FAILURES, badKeyMaxBlockS: settings.BAD_KEY_MAX_BLOCK_S, redisUrl: settings.REDIS_URL,
    redisCommandTimeoutMs: settings.REDIS_COMMAND_TIMEOUT_MS, redisBreakerFailures: settings.REDIS_BREAKER_FAILURES, redisBreakerOpenMs: settings.REDIS_BREAKER_OPEN_MS,
  }, {
    sql: sources.primaryStateSql, readTimeoutMs: sources.stateReadMs, listen: !target.socketPath && settings.DATA_VERSION_LISTEN && settings.DB_POOLER !== 'pgbouncer',
    registry: metrics.registry, logger, clientKey,
    // ANONYMOUS_SHARE, in force once any API key exists (keyed clients then keep the rest)
    onKeys: (count) => void (shares.anonymous = count > 0 ? settings.ANONYMOUS_SHARE : 1),
  });
}

/** The subscriptions' fan-out, and where its notifications come from. */
function liveEvents(settings: Config, target: GatewayTarget, sources: Sources, store: Store, metrics: Metrics, logger: Logger) {
  const hub = createLiveHub({ store, maxQueue: settings.SUBSCRIPTIONS_MAX_QUEUE, logger });
  // the embedded engine's notifications come from the engine itself (target.notifications), never over
  // its socket; without them there (tests' in-memory engines), no source
  const embedded = target.socketPath !== undefined;
  const source = (embedded ? !target.notifications : !settings.DATA_VERSION_LISTEN) ? null : createLiveSource({
    sql: sources.primaryStateSql, notifications: target.notifications, redisUrl: embedded ? undefined : settings.REDIS_URL, logger,
    onPayload: (payload) => hub.dispatch(payload),
  });
  registerLiveMetrics(metrics.registry, hub, source);
  return { hub, source };
}

/** The event streams' byte limits and the subscriptions' count limits. */
function streamPlugins(settings: Config, budget: ReturnType<typeof clientBudget>, shares: PoolShares, metrics: Metrics) {
  const streams = streamsPlugin({
    maxPendingBytes: settings.SUBSCRIPTIONS_MAX_PENDING_BYTES,
    maxPendingTotalBytes: settings.SUBSCRIPTIONS_MAX_PENDING_TOTAL_BYTES,
    charge: (req, bytes) => budget.chargeNow(req, bytes),
  });
  registerStreamMetrics(metrics.registry, streams.stats);
  const subscriptionLimits = subscriptionLimitsPlugin({
    // streams hold their connections: at most a share of the connection table
    maxOpen: Math.min(settings.SUBSCRIPTIONS_MAX_OPEN, Math.floor(settings.SUBSCRIPTIONS_MAX_CONNECTION_SHARE * settings.HTTP_MAX_CONNECTIONS)),
    maxPerClient: settings.SUBSCRIPTIONS_MAX_PER_CLIENT,
    maxPerConnection: settings.SUBSCRIPTIONS_MAX_PER_CONNECTION,
    maxNewPerSecond: settings.SUBSCRIPTIONS_MAX_NEW_PER_S,
    clientKey,
    // a keyed stream counts against its key (max_streams, else the per-client cap), not its address
    keyedCap: (req) => {
      const who = accessOf(req);
      return who?.kind === 'key' ? { id: who.key.prefix, max: who.key.overrides.maxStreams ?? settings.SUBSCRIPTIONS_MAX_PER_CLIENT } : null;
    },
    anonymousShare: () => shares.anonymous,
  });
  return { streams, subscriptionLimits };
}

type YogaOptions = Parameters<typeof createGraphqlServer>[0];

function graphqlServer(settings: Config, parts: {
  store: Store; paging: Paging; resultLimits: ResultLimits; manifest: NonNullable<YogaOptions['persisted']>['manifest']; logger: Logger; hub: LiveHub;
  plugins: YogaOptions['plugins']; subscriptionPlugins: YogaOptions['subscriptionPlugins'];
}): GraphqlServer {
  return createGraphqlServer({
    store: parts.store,
    paging: parts.paging,
    introspection: settings.GRAPHQL_INTROSPECTION,
    maxBodyBytes: settings.GRAPHQL_MAX_BODY_BYTES,
    inputLimits: {
      maxVariablesBytes: settings.GRAPHQL_MAX_VARIABLES_BYTES,
      maxStringLength: settings.GRAPHQL_MAX_STRING_LENGTH,
      maxListLength: settings.GRAPHQL_MAX_LIST_LENGTH,
    },
    limits: {
      maxDepth: settings.GRAPHQL_MAX_DEPTH,
      maxAliases: settings.GRAPHQL_MAX_ALIASES,
      maxTokens: settings.GRAPHQL_MAX_TOKENS,
      maxCost: settings.GRAPHQL_MAX_COST,
    },
    resultLimits: parts.resultLimits,
    plugins: parts.plugins,
    persisted: {
      manifest: parts.manifest,
      only: settings.PERSISTED_OPERATIONS_ONLY,
      apqMaxEntries: settings.APQ_MAX_ENTRIES,
      apqMaxBytes: settings.APQ_MAX_BYTES,
      apqMaxDocumentBytes: settings.APQ_MAX_DOCUMENT_BYTES,
      apqClient: {
        clientMaxEntries: settings.APQ_CLIENT_MAX_ENTRIES, clientMaxBytes: settings.APQ_CLIENT_MAX_BYTES, idleTtlMs: settings.APQ_IDLE_TTL_S * 1000,
      },
      // a key's registrations count against the key, anonymous ones against the address
      clientOf: (req) => {
        const who = accessOf(req);
        if (who?.kind === 'key') return `key:${who.key.id}`;
        return req?.socket.remoteAddress === undefined ? 'unknown' : clientKey(req.socket.remoteAddress);
      },
    },
    cacheControl: settings.GRAPHQL_CACHE_CONTROL,
    logging: yogaLogger(parts.logger),
    live: parts.hub,
    subscriptionPlugins: parts.subscriptionPlugins,
  });
}

type RpcOptions = Parameters<typeof createRpcHandler>[0];

function rpcHandler(settings: Config, parts: {
  store: Store; paging: Paging; resultLimits: ResultLimits; metrics: Metrics; logger: Logger;
  onError: ((error: unknown, where: string) => void) | undefined; cache: RpcOptions['cache'];
}) {
  const { paging, logger } = parts;
  return createRpcHandler({
    tables: createRpcTables(),
    newContext: contextFactory(parts.store, paging, parts.resultLimits),
    limits: paging,
    maxBodyBytes: settings.RPC_MAX_BODY_BYTES,
    maxBatch: settings.RPC_MAX_BATCH,
    // a batch's elements run a few at a time, like the statements of one request
    batchConcurrency: settings.REQUEST_MAX_CONCURRENT_STATEMENTS,
    onError: parts.onError ?? ((error, method) => logFailure(logger, error, { rpcMethod: method }, 'rpc')),
    cache: parts.cache,
    metrics: parts.metrics,
    publicUrl: settings.PUBLIC_URL,
    maxAnswerBytesHeld: settings.REQUESTS_MAX_ANSWER_BYTES_HELD,
  });
}

function stripUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * The schema's own reasons (behind, not migrated) first; when the schema check only saw the database
 * unreachable, the sources know why (a pooler refusing startup parameters, a replica lag) and say it better.
 */
function whyUnready(schema: string | null, sources: string | null): string | null {
  if (schema?.startsWith('database schema')) return schema;
  return sources ?? schema;
}
