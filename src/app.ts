import type { Server } from 'node:http';
import { configSchema, type Config } from './config.js';
import type { Sql } from './db/client.js';
import { within } from './db/deadline.js';
import { createSources, type Sources } from './db/sources.js';
import { expandHosts, expandUrlList } from './db/urls.js';
import { createStore, storeLimitDefaults, type Store, type StoreLimits } from './db/store.js';
import { dataAgeSeconds } from './db/version.js';
import { createContext } from './graphql/context.js';
import { graphqlRefusalBody } from './graphql/errors.js';
import { subscriptionLimitsPlugin } from './graphql/subscriptions.js';
import { createLiveHub, type LiveHub } from './live/hub.js';
import { registerLiveMetrics } from './live/metrics.js';
import { createLiveSource, type LiveSource } from './live/source.js';
import { buildFingerprint } from './cache/keys.js';
import { printSdl } from './graphql/schema.js';
import { loadManifest } from './graphql/persisted.js';
import { createGraphqlServer, type GraphqlServer } from './graphql/yoga.js';
import { createLogger, logFailure, yogaLogger, type Logger } from './observability/logger.js';
import { dbRequestScope } from './observability/scope.js';
import { createOperations, operationsDefaults, type Operations, type OperationsConfig } from './observability/operations.js';
import { rpcRefusalBody } from './rpc/errors.js';
import { createRpcHandler } from './rpc/server.js';
import { createRpcTables } from './rpc/tables.js';
import { clientKey, type HttpSettings } from './server/connections.js';
import { corsPolicy } from './server/cors.js';
import { createHttpServer } from './server/http.js';

export interface Gateway {
  /** The primary's query pool. */
  sql: Sql;
  /** The primary and the read replicas. */
  sources: Sources;
  store: Store;
  yoga: GraphqlServer;
  server: Server;
  /** Logger, metrics, data-version watcher, response cache. */
  ops: Operations;
  /** Live events of subscriptions: the fan-out and where its notifications come from (src/live). */
  live: { hub: LiveHub; source: LiveSource | null; open(): number };
  /** Settles once the data version is known (before it, answers bypass the cache). */
  ready: Promise<void>;
  close(): Promise<void>;
}

export type GatewayConfig = Pick<Config,
  'DB_POOL_MAX' | 'DB_STATEMENT_TIMEOUT_MS' | 'DB_CONNECT_TIMEOUT_S' | 'DEFAULT_PAGE_SIZE' | 'MAX_PAGE_SIZE' |
  'GRAPHQL_INTROSPECTION' | 'CORS_ORIGIN' | 'RPC_MAX_BODY_BYTES' | 'RPC_MAX_BATCH' |
  'GRAPHQL_MAX_BODY_BYTES' | 'GRAPHQL_MAX_DEPTH' | 'GRAPHQL_MAX_ALIASES' | 'GRAPHQL_MAX_TOKENS' | 'GRAPHQL_MAX_COST' |
  'GRAPHQL_MAX_RESULT_NODES' | 'GRAPHQL_MAX_RESPONSE_BYTES'> &
  Partial<Pick<Config, 'PERSISTED_OPERATIONS_DIR' | 'PERSISTED_OPERATIONS_ONLY' | 'APQ_MAX_ENTRIES' | 'APQ_MAX_BYTES' |
    'GRAPHQL_CACHE_CONTROL' | 'HTTP_COMPRESSION' | 'HTTP_COMPRESSION_MIN_BYTES'>> &
  Partial<Pick<Config, 'DATABASE_READ_URLS' | 'MAX_REPLICA_LAG_MS' | 'DB_POOLER' | 'DB_ALLOW_UNSAFE_SESSION'>> &
  Partial<Pick<Config, 'SUBSCRIPTIONS_MAX_PER_CLIENT' | 'SUBSCRIPTIONS_MAX_PER_CONNECTION' | 'SUBSCRIPTIONS_MAX_QUEUE'>> &
  Partial<OperationsConfig> & StoreLimits & Partial<HttpSettings> & Partial<Pick<Config, 'CORS_CREDENTIALS'>>;

/** The defaults of src/config.ts for the clients' caches settings (gateways built from a partial config). */
const clientDefaults = configSchema.pick({
  PERSISTED_OPERATIONS_ONLY: true, APQ_MAX_ENTRIES: true, APQ_MAX_BYTES: true, GRAPHQL_CACHE_CONTROL: true,
  HTTP_COMPRESSION: true, HTTP_COMPRESSION_MIN_BYTES: true,
}).parse({});

const rpcCors = { methods: 'POST, OPTIONS', allowHeaders: 'content-type, x-request-id' };

/** Everything but listening: tests build their own gateway on their own database. */
export function createGateway(
  config: GatewayConfig,
  target: { url?: string; socketPath?: string },
  hooks: { onQuery?: (text: string, params?: readonly unknown[]) => void; onError?: (error: unknown, where: string) => void; logger?: Logger } = {},
): Gateway {
  // read first: a broken operation file stops the start before anything is opened
  const manifest = config.PERSISTED_OPERATIONS_DIR ? loadManifest(config.PERSISTED_OPERATIONS_DIR) : undefined;
  const logger = hooks.logger ?? createLogger({ level: config.LOG_LEVEL ?? operationsDefaults.LOG_LEVEL });
  // a multi-host DATABASE_URL: its first host is the primary, the others are read replicas
  const [primaryUrl, ...moreHosts] = target.url ? expandHosts(target.url) : [];
  const sources = createSources({
    primary: primaryUrl ? { url: primaryUrl } : target,
    replicas: [...moreHosts, ...(config.DATABASE_READ_URLS ? expandUrlList(config.DATABASE_READ_URLS) : [])],
    poolMax: config.DB_POOL_MAX,
    statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS,
    connectTimeoutS: config.DB_CONNECT_TIMEOUT_S,
    pooler: config.DB_POOLER ?? 'none',
    allowUnsafeSession: config.DB_ALLOW_UNSAFE_SESSION ?? false,
    maxLagMs: config.MAX_REPLICA_LAG_MS ?? 5_000,
    pollMs: config.DATA_VERSION_POLL_MS ?? operationsDefaults.DATA_VERSION_POLL_MS,
    listen: config.DATA_VERSION_LISTEN ?? operationsDefaults.DATA_VERSION_LISTEN,
    logger,
    onQuery: hooks.onQuery,
    scope: dbRequestScope,
  });
  const sql = sources.primary.sql;
  const paging = { defaultPageSize: config.DEFAULT_PAGE_SIZE, maxPageSize: config.MAX_PAGE_SIZE };
  const resultLimits = { maxNodes: config.GRAPHQL_MAX_RESULT_NODES, maxBytes: config.GRAPHQL_MAX_RESPONSE_BYTES };
  const ops = createOperations({ config, sources, logger, build: buildFingerprint(printSdl(), paging, createRpcTables()) });
  // the application-side limit backs up statement_timeout (a little later, so the server's fires first)
  // (counted from the moment a statement holds a connection); `limits` share the pool fairly between requests
  const store = ops.instrumentStore(createStore(sql, {
    timeoutMs: config.DB_STATEMENT_TIMEOUT_MS + 1_000, limits: config, router: sources.router, unready: sources.unready, scope: dbRequestScope,
  }));
  ops.attachPool(store.poolState);
  const hub = createLiveHub({ store, maxQueue: config.SUBSCRIPTIONS_MAX_QUEUE ?? 1_000, logger: ops.logger });
  // the embedded engine delivers no notifications (as for the data version): no source there
  const source = target.socketPath || config.DATA_VERSION_LISTEN === false ? null : createLiveSource({
    sql: sources.primaryStateSql, redisUrl: config.REDIS_URL, logger: ops.logger,
    onPayload: (payload) => hub.dispatch(payload),
  });
  registerLiveMetrics(ops.metrics.registry, hub, source);
  const subscriptionLimits = subscriptionLimitsPlugin({
    maxPerClient: config.SUBSCRIPTIONS_MAX_PER_CLIENT ?? 32,
    maxPerConnection: config.SUBSCRIPTIONS_MAX_PER_CONNECTION ?? 4,
    clientKey,
  });
  const yoga = createGraphqlServer({
    store,
    paging,
    introspection: config.GRAPHQL_INTROSPECTION,
    maxBodyBytes: config.GRAPHQL_MAX_BODY_BYTES,
    limits: {
      maxDepth: config.GRAPHQL_MAX_DEPTH,
      maxAliases: config.GRAPHQL_MAX_ALIASES,
      maxTokens: config.GRAPHQL_MAX_TOKENS,
      maxCost: config.GRAPHQL_MAX_COST,
    },
    resultLimits,
    plugins: ops.yogaPlugins,
    persisted: {
      manifest,
      only: config.PERSISTED_OPERATIONS_ONLY ?? clientDefaults.PERSISTED_OPERATIONS_ONLY,
      apqMaxEntries: config.APQ_MAX_ENTRIES ?? clientDefaults.APQ_MAX_ENTRIES,
      apqMaxBytes: config.APQ_MAX_BYTES ?? clientDefaults.APQ_MAX_BYTES,
    },
    cacheControl: config.GRAPHQL_CACHE_CONTROL ?? clientDefaults.GRAPHQL_CACHE_CONTROL,
    logging: yogaLogger(ops.logger),
    live: hub,
    subscriptionPlugin: subscriptionLimits.plugin,
  });
  // one CORS policy for both surfaces (src/server/cors.ts)
  const cors = corsPolicy(config.CORS_ORIGIN, config.CORS_CREDENTIALS ?? false);
  const rpc = createRpcHandler({
    tables: createRpcTables(),
    newContext: () => createContext(store, paging, resultLimits),
    limits: paging,
    maxBodyBytes: config.RPC_MAX_BODY_BYTES,
    maxBatch: config.RPC_MAX_BATCH,
    // a batch's elements run a few at a time, like the statements of one request
    batchConcurrency: config.REQUEST_MAX_CONCURRENT_STATEMENTS ?? storeLimitDefaults.REQUEST_MAX_CONCURRENT_STATEMENTS,
    cors: (req) => cors.headers(req.headers, rpcCors),
    onError: hooks.onError ?? ((error, method) => logFailure(ops.logger, error, { rpcMethod: method }, 'rpc')),
    cache: ops.rpcCache,
    onCall: ops.onRpcCall,
  });
  const freshness = () => {
    const snapshot = ops.watcher.current();
    return snapshot ? { dataVersion: snapshot.version, dataAgeSeconds: dataAgeSeconds(snapshot) } : null;
  };
  const compression = (config.HTTP_COMPRESSION ?? clientDefaults.HTTP_COMPRESSION)
    ? { minBytes: config.HTTP_COMPRESSION_MIN_BYTES ?? clientDefaults.HTTP_COMPRESSION_MIN_BYTES } : undefined;
  const server = createHttpServer({
    store, yoga, rpc, metrics: ops.scrape, wrap: ops.wrapHttp, cors, compression, graphiql: config.GRAPHQL_INTROSPECTION, freshness,
    errorBodies: { rpc: rpcRefusalBody, graphql: graphqlRefusalBody },
  }, config);
  return {
    sql,
    sources,
    store,
    yoga,
    server,
    ops,
    live: { hub, source, open: subscriptionLimits.open },
    // bounded like the sources' start-up steps (src/db/deadline.ts): a LISTEN a pooler never answers
    ready: Promise.all([ops.ready, source && within(source.start(), config.DB_CONNECT_TIMEOUT_S * 1_000 + 5_000, 'live events LISTEN').catch((error: unknown) =>
      ops.logger.warn({ err: (error as Error).message }, 'live events: no source'))]).then(() => {}),
    async close() {
      // subscriptions end first (each stream sends `complete`), so that closing the server is not held up by them
      await hub.close();
      await source?.stop();
      await new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
      await ops.close();
      await sources.stop();
    },
  };
}
