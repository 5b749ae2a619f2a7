import { z } from 'zod';
import { expandHosts, expandUrlList } from './db/urls.js';

// Every setting comes from the environment and is validated once at start, with messages that name
// the variable, so a typo fails loudly instead of silently falling back.
const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off'])
  .transform((v) => ['true', '1', 'yes', 'on'].includes(v));
const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

export const configSchema = z.object({
  PORT: int(0, 65535).default(8080),
  HOST: z.string().min(1).default('127.0.0.1'),
  // the primary (libpq multi-host URLs accepted: the first host is the primary, the others read replicas)
  DATABASE_URL: postgresUrls(expandHosts).optional(),
  // read replicas: comma-separated URLs (each may be multi-host); queries go to those within the lag budget
  DATABASE_READ_URLS: postgresUrls(expandUrlList).optional(),
  MAX_REPLICA_LAG_MS: int(0, 86_400_000).default(5_000),
  // pgbouncer: transaction pooling in front (no prepared statements, no startup parameters, read-only and
  // statement_timeout set in a transaction around each statement, no LISTEN)
  DB_POOLER: z.enum(['none', 'pgbouncer']).default('none'),
  // serve even when a source's session turns out writable or without statement_timeout (start-up check)
  DB_ALLOW_UNSAFE_SESSION: bool.default(false),
  EMBEDDED_DATA_DIR: z.string().min(1).default('.data/pglite'),
  SEED: z.enum(['auto', 'true', 'false']).default('auto'),
  DB_POOL_MAX: int(1, 200).default(10),
  DB_STATEMENT_TIMEOUT_MS: int(100, 600_000).default(5_000),
  DB_CONNECT_TIMEOUT_S: int(1, 120).default(5),
  // fair use of the pool (src/db/client.ts): statements waiting for a connection are bounded in number
  // and in wait ("server busy"); one request may fetch so many rows and run so many statements at once
  DB_MAX_QUEUE: int(0, 1_000_000).default(1_000),
  DB_QUEUE_TIMEOUT_MS: int(10, 600_000).default(2_000),
  REQUEST_MAX_ROWS: int(1, 100_000_000).default(20_000),
  REQUEST_MAX_CONCURRENT_STATEMENTS: int(1, 200).default(3),
  DEFAULT_PAGE_SIZE: int(1, 10_000).default(10),
  MAX_PAGE_SIZE: int(1, 100_000).default(1_000),
  RPC_MAX_BODY_BYTES: int(1_024, 100 * 1024 * 1024).default(1024 * 1024),
  RPC_MAX_BATCH: int(1, 10_000).default(100),
  GRAPHQL_INTROSPECTION: bool.default(true),
  // hostile-query guards: nesting depth, aliases, lexer tokens (graphql-armor) and estimated cost per operation
  // (with its variables: src/graphql/cost.ts)
  GRAPHQL_MAX_BODY_BYTES: int(1_024, 100 * 1024 * 1024).default(1024 * 1024),
  GRAPHQL_MAX_DEPTH: int(1, 1_000).default(15),
  GRAPHQL_MAX_ALIASES: int(0, 1_000).default(15),
  GRAPHQL_MAX_TOKENS: int(10, 1_000_000).default(2_000),
  GRAPHQL_MAX_COST: int(1, 1_000_000_000_000).default(250_000),
  // the hard cap while an operation runs (GraphQL and each JSON-RPC call): objects and list items, and
  // estimated bytes of its result (src/graphql/context.ts)
  GRAPHQL_MAX_RESULT_NODES: int(100, 100_000_000).default(100_000),
  GRAPHQL_MAX_RESPONSE_BYTES: int(65_536, 1024 * 1024 * 1024).default(16 * 1024 * 1024),
  // SIGTERM/SIGINT: how long in-flight requests may take to finish before connections are cut
  SHUTDOWN_TIMEOUT_MS: int(0, 600_000).default(10_000),
  // `*` (any origin, never with credentials) or a comma-separated list of exact origins (scheme://host[:port])
  CORS_ORIGIN: z.string().regex(/^(\*|[a-z][a-z0-9+.-]*:\/\/[^\s/,*]+(,[a-z][a-z0-9+.-]*:\/\/[^\s/,*]+)*)$/i,
    'must be * or a comma-separated list of origins such as https://app.example').default('*'),
  // Access-Control-Allow-Credentials for the listed origins; refused with CORS_ORIGIN=* (see loadConfig)
  CORS_CREDENTIALS: bool.default(false),
  // slow and greedy clients (src/server/connections.ts): every connection and request ends in bounded time
  HTTP_HEADERS_TIMEOUT_MS: int(100, 600_000).default(10_000),
  HTTP_REQUEST_TIMEOUT_MS: int(100, 600_000).default(30_000),
  HTTP_MIN_BODY_BYTES_PER_S: int(0, 1_000_000_000).default(1_024), // 0: no minimum rate
  HTTP_BODY_GRACE_MS: int(0, 600_000).default(5_000),
  HTTP_IDLE_TIMEOUT_MS: int(100, 600_000).default(30_000),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: int(100, 600_000).default(5_000),
  HTTP_MAX_REQUESTS_PER_SOCKET: int(0, 1_000_000).default(1_000), // 0: unlimited
  HTTP_MAX_CONNECTIONS: int(1, 1_000_000).default(4_096),
  HTTP_MAX_CONNECTIONS_PER_CLIENT: int(0, 1_000_000).default(64), // 0: no per-client cap
  // response bytes per client address (token bucket): src/server/connections.ts; 0: no budget
  HTTP_CLIENT_BYTES_PER_S: int(0, 10_000_000_000).default(4 * 1024 * 1024),
  HTTP_CLIENT_BURST_BYTES: int(1_024, 10_000_000_000).default(16 * 1024 * 1024),
  // V8 heap limit of `npm start` (node --max-old-space-size); main.ts logs the limit in effect
  HEAP_MAX_MB: int(64, 65_536).default(512),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  // auto: JSON lines, human-readable when stdout is a terminal
  LOG_FORMAT: z.enum(['auto', 'json', 'pretty']).default('auto'),
  // response cache (GraphQL and JSON-RPC), keyed on the data version: see src/cache/
  CACHE: bool.default(true),
  CACHE_TTL_MS: int(1_000, 86_400_000).default(60_000),
  CACHE_MAX_ENTRIES: int(10, 10_000_000).default(1_000), // in-memory store only (Redis: its own maxmemory)
  // in-memory store: total bytes of stored responses (LRU eviction by size); either store: larger
  // responses are answered but not stored
  CACHE_MAX_BYTES: int(64 * 1024, 64 * 1024 * 1024 * 1024).default(64 * 1024 * 1024),
  CACHE_MAX_ENTRY_BYTES: int(1_024, 1024 * 1024 * 1024).default(1024 * 1024),
  REDIS_URL: z.string().regex(/^rediss?:\/\/\S+$/, 'must be a redis:// or rediss:// URL').optional(),
  // Redis fails soft (src/cache/breaker.ts): a short timeout per command, and after this many failures in a
  // row (spanning at least one timeout) or a lost connection the cache is skipped for REDIS_BREAKER_OPEN_MS,
  // then probed (one PING) before it is used again
  REDIS_COMMAND_TIMEOUT_MS: int(1, 60_000).default(50),
  REDIS_BREAKER_FAILURES: int(1, 10_000).default(5),
  REDIS_BREAKER_OPEN_MS: int(10, 3_600_000).default(2_000),
  DATA_VERSION_POLL_MS: int(50, 60_000).default(500),
  DATA_VERSION_LISTEN: bool.default(true),
  // clients' caches (README "Clients and caching"): persisted operations (src/graphql/persisted.ts), HTTP
  // caching headers (src/graphql/http-caching.ts) and compression (src/server/http.ts)
  PERSISTED_OPERATIONS_DIR: z.string().min(1).optional(),
  PERSISTED_OPERATIONS_ONLY: bool.default(false),
  APQ_MAX_ENTRIES: int(1, 10_000_000).default(1_000),
  APQ_MAX_BYTES: int(1_024, 1024 * 1024 * 1024).default(4 * 1024 * 1024),
  // Cache-Control of successful GET query answers (POST answers and errors: no-store); "" is not allowed,
  // `no-store` turns shared caching off
  GRAPHQL_CACHE_CONTROL: z.string().regex(/^[\x20-\x7e]+$/, 'must be a Cache-Control value').default('public, max-age=5, stale-while-revalidate=30'),
  HTTP_COMPRESSION: bool.default(true),
  HTTP_COMPRESSION_MIN_BYTES: int(0, 1024 * 1024 * 1024).default(1_024),
  // live updates (GraphQL subscriptions over SSE, src/live): open subscriptions per client address and per
  // connection, and events a subscription may leave unread before it is dropped
  SUBSCRIPTIONS_MAX_PER_CLIENT: int(0, 1_000_000).default(32), // 0: no per-client cap
  SUBSCRIPTIONS_MAX_PER_CONNECTION: int(1, 10_000).default(4),
  SUBSCRIPTIONS_MAX_QUEUE: int(1, 100_000).default(1_000),
  // distinct GraphQL operation names reported as metric labels (then "other"; each cut to 64 characters)
  METRICS_MAX_OPERATIONS: int(1, 10_000).default(100),
  // API keys and quotas (src/access, docs/api-keys.md): requests without a key are served (allow) or 401 (deny)
  ANONYMOUS_ACCESS: z.enum(['allow', 'deny']).default('allow'),
  // the keys are reloaded on NOTIFY igw_api_keys and, in case one was lost, this often
  API_KEYS_RELOAD_MS: int(100, 3_600_000).default(30_000),
  // gateways sharing the keys' quotas: while Redis fails each admits 1/QUOTA_GATEWAYS of a key's rate, burst
  // and remaining day (without REDIS_URL each gateway has the full quota)
  QUOTA_GATEWAYS: int(1, 1_000).default(1),
  // bad keys one client address may send before its keyed requests wait (1 s, doubling up to the maximum)
  BAD_KEY_FREE_FAILURES: int(0, 1_000_000).default(10),
  BAD_KEY_MAX_BLOCK_S: int(1, 86_400).default(60),
});

export type Config = z.infer<typeof configSchema>;

/** A URL (or list of URLs) that `expand` can split into one URL per host; the message says what is wrong. */
function postgresUrls(expand: (value: string) => string[]) {
  return z.string().superRefine((value, ctx) => {
    try {
      expand(value);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message });
    }
  });
}

export class ConfigError extends Error {}

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  // Treat empty variables as unset: `DATABASE_URL= npm start` should mean "no database URL".
  const cleaned = Object.fromEntries(Object.entries(env).filter(([, v]) => v !== undefined && v !== ''));
  const parsed = configSchema.safeParse(cleaned);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.')}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join('\n')}`);
  }
  // settings that are only wrong together
  const config = parsed.data;
  const conflicts: string[] = [];
  if (config.CORS_CREDENTIALS && config.CORS_ORIGIN === '*') {
    conflicts.push('  CORS_CREDENTIALS: credentials cannot be allowed for any origin (CORS_ORIGIN=*): list the origins');
  }
  if (config.HTTP_HEADERS_TIMEOUT_MS > config.HTTP_REQUEST_TIMEOUT_MS) {
    conflicts.push('  HTTP_HEADERS_TIMEOUT_MS: must not exceed HTTP_REQUEST_TIMEOUT_MS');
  }
  if (config.PERSISTED_OPERATIONS_ONLY && !config.PERSISTED_OPERATIONS_DIR) {
    conflicts.push('  PERSISTED_OPERATIONS_ONLY: needs PERSISTED_OPERATIONS_DIR (else no operation could run)');
  }
  if (config.DATABASE_READ_URLS && !config.DATABASE_URL) {
    conflicts.push('  DATABASE_READ_URLS: needs DATABASE_URL (the primary); the embedded engine has no replicas');
  }
  if (conflicts.length > 0) throw new ConfigError(`Invalid configuration:\n${conflicts.join('\n')}`);
  return config;
}
