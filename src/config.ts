import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { expandHosts, expandUrlList } from './domain/database-urls.js';

// Every setting comes from the environment and is validated once at start, with messages that name
// the variable, so a typo fails loudly instead of silently falling back.
const bool = z
  .enum(['true', 'false', '1', '0', 'yes', 'no', 'on', 'off'])
  .transform((v) => ['true', '1', 'yes', 'on'].includes(v));
const int = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

export const configSchema = z.object({
  PORT: int(0, 65535).default(8080).describe('port the HTTP server listens on'),
  HOST: z.string().min(1).default('127.0.0.1').describe('address the HTTP server listens on (`0.0.0.0`: every interface)'),
  PUBLIC_URL: z.string().regex(/^https?:\/\/[^\s/?#]+(\/[^\s?#]*)?$/, 'must be an http:// or https:// URL without query or fragment')
    .transform((url) => url.replace(/\/+$/, '')).optional().describe(
      'the base URL clients reach the gateway at (`https://api.example`, or with a path prefix), which `rpc.discover` advertises (`<PUBLIC_URL>/v2/rpc`); unset = `http://` and the Host header of the request. Set it behind a proxy that terminates TLS'),
  DATABASE_URL: postgresUrls(expandHosts).optional().describe(
    'the primary PostgreSQL server; unset = the embedded engine. A libpq multi-host URL (`postgres://u@h1:5432,h2:5433/db`) is accepted: its first host is the primary, the others are read replicas'),
  DATABASE_READ_URLS: postgresUrls(expandUrlList).optional().describe(
    'read replicas, comma-separated URLs (each may be multi-host); needs `DATABASE_URL`. Queries go to those within `MAX_REPLICA_LAG_MS`'),
  DATABASE_READ_NAMES: z.string().regex(/^[A-Za-z0-9_.-]{1,64}(,[A-Za-z0-9_.-]{1,64})*$/,
    'must be a comma-separated list of names of letters, digits, "_", "." or "-" (at most 64 each)')
    .transform((v) => v.split(',')).optional().describe(
      'the replicas\' names in metrics (`igw_replica_*{replica="…"}`), comma-separated, one per replica host in their order (the extra hosts of `DATABASE_URL` first); unset = their position, from `0`'),
  MAX_REPLICA_LAG_MS: int(0, 86_400_000).default(5_000).describe(
    'no answer from a replica is older than this: a replica is used only while it is proven within it (its data version against the primary\'s), checked when a request starts and before each statement'),
  DB_POOLER: z.enum(['none', 'pgbouncer']).default('none').describe(
    '`pgbouncer`: a transaction pooler in front of the servers (no prepared statements, no startup parameters, read-only and `statement_timeout` set per transaction, no LISTEN)'),
  DB_ALLOW_UNSAFE_SESSION: bool.default(false).describe('serve even when the start-up check finds a session writable or without `statement_timeout`'),
  EMBEDDED_DATA_DIR: z.string().min(1).default('.data/pglite').describe('data directory of the embedded engine'),
  DEMO_PLAYER: z.enum(['auto', 'true', 'false']).default('auto').describe(
    'the demo player (src/db/seed/player.ts): new demo blocks and mints every `DEMO_PLAYER_INTERVAL_MS`, so subscriptions and queries see the data move; `auto`: on with the embedded engine\'s demo data (the quick start), never with a `DATABASE_URL`'),
  DEMO_PLAYER_INTERVAL_MS: int(100, 3_600_000).default(3_000).describe(
    'between two demo player steps (each: a block on every chain, a mint on one of them in turn)'),
  DEMO_PLAYER_MAX_MINTS: int(10, 10_000_000).default(20_000).describe(
    'played mints kept; one more and they are all taken back in one transaction (the demo data stays bounded)'),
  SEED: z.enum(['auto', 'true', 'false']).default('auto').describe(
    '`auto`: seed the embedded database when empty; `true`: migrate and seed (also on `DATABASE_URL`); `false`: never'),
  DB_POOL_MAX: int(1, 200).default(10).describe(
    'connections of the query pool, per server (the primary and each replica), plus one for the data-version watcher and one for its LISTEN (and, without `DB_POOLER`, two short-lived ones per server at start for the pooler probe, `application_name` `inscription-gateway-probe`)'),
  DB_STATEMENT_TIMEOUT_MS: int(100, 600_000).default(5_000).describe(
    'PostgreSQL `statement_timeout` of every gateway session, backed by an application timer that starts when the statement has a connection → `-32000` / `SERVICE_UNAVAILABLE` "query timed out"'),
  DB_CONNECT_TIMEOUT_S: int(1, 120).default(5).describe('connect timeout'),
  DB_MAX_QUEUE: int(0, 1_000_000).default(1_000).describe(
    'statements waiting for a pool connection; one more → `-32000` / `SERVICE_UNAVAILABLE` "server busy"'),
  DB_QUEUE_TIMEOUT_MS: int(10, 600_000).default(2_000).describe(
    'a statement that waits longer for a connection → `-32000` / `SERVICE_UNAVAILABLE` "server busy"'),
  REQUEST_MAX_ROWS: int(1, 100_000_000).default(20_000).describe(
    'rows one HTTP request (a whole JSON-RPC batch, a GraphQL document) may fetch; its later statements → `-32005` "limit exceeded" / `LIMIT_EXCEEDED`, reason "request row budget exceeded" (a client error, not retryable as sent)'),
  REQUESTS_MAX_ROWS_HELD: int(1, 100_000_000).default(60_000).describe(
    'rows held by all HTTP requests in progress together (fetched, not yet answered) past which a request that already holds 1,000 rows or more is refused its further statements: `-32005` "limit exceeded" / `LIMIT_EXCEEDED`, reason "server overloaded: rows held by all requests …" (a client error, the heaviest first); requests holding fewer rows are never refused. Bounds the heap that answers being built take, whatever the number of clients'),
  REQUESTS_MAX_ANSWER_BYTES_HELD: int(1_024, 100 * 1024 * 1024 * 1024).default(32 * 1024 * 1024).describe(
    'bytes of JSON-RPC replies held by all HTTP requests in progress together (built, not yet written) past which a batch already holding 256 KiB or more is answered `-32005` "limit exceeded", reason "server overloaded: answer bytes held by all requests …", for its remaining elements (cached results count too, which fetch no rows); requests holding less are never refused. Bounds the heap and the writes that many clients\' big batches take at once'),
  DB_REQUEST_TIME_BUDGET_MS: int(10, 3_600_000).default(2_000).describe(
    'database time one HTTP request (a whole JSON-RPC batch, a GraphQL document; one subscription event) may spend: the sum of its statements\' times with a connection. Its later statements → `-32005` "limit exceeded" / `LIMIT_EXCEEDED`, reason "request database time budget exceeded", so aliases and batch elements cannot multiply one request\'s cost'),
  HISTORY_MAX_OFFSET: int(0, 100_000_000).default(10_000).describe(
    '`offset` of a list at a block height (`atBlock`), which scans the skipped history: above it → `LIMIT_EXCEEDED` "history offset too deep" (page on with `after` cursors, which cost what the first page does)'),
  REQUEST_MAX_CONCURRENT_STATEMENTS: int(1, 200).default(3).describe(
    'statements of one request in flight at once (queued or running), and JSON-RPC batch elements answered at once'),
  DEFAULT_PAGE_SIZE: int(1, 10_000).default(10).describe('list page size when none is given'),
  MAX_PAGE_SIZE: int(1, 100_000).default(1_000).describe(
    '`limit` / `first` / `last` above it are clamped (RPC echoes the effective `limit`)'),
  RPC_MAX_BODY_BYTES: int(1_024, 100 * 1024 * 1024).default(1024 * 1024).describe('JSON-RPC body; over it → HTTP 413 with a `-32600` body'),
  RPC_MAX_BATCH: int(1, 10_000).default(100).describe('JSON-RPC batch elements; over it → one `-32600`'),
  GRAPHQL_INTROSPECTION: bool.default(true).describe(
    '`false`: no GraphiQL, `__schema`/`__type` rejected (`__typename` still works), no "Did you mean …" in errors'),
  GRAPHQL_MAX_BODY_BYTES: int(1_024, 100 * 1024 * 1024).default(1024 * 1024).describe(
    'GraphQL body (counted as it arrives, also without Content-Length) → 413 `REQUEST_ENTITY_TOO_LARGE`'),
  GRAPHQL_MAX_VARIABLES_BYTES: int(1_024, 100 * 1024 * 1024).default(128 * 1024).describe(
    "an operation's variables, as JSON (queries and subscriptions, POST, GET and SSE) → 400 `BAD_USER_INPUT`; a subscription keeps its variables for its lifetime"),
  GRAPHQL_MAX_STRING_LENGTH: int(64, 100 * 1024 * 1024).default(16_384).describe(
    'characters of one string argument, in the variables or a literal of the document (hex call data of 4096 bytes is 8 194) → 400 `BAD_USER_INPUT` (variables) or `GRAPHQL_VALIDATION_FAILED` (literals)'),
  GRAPHQL_MAX_LIST_LENGTH: int(1, 10_000_000).default(1_000).describe(
    'items of one list argument (`blocks(chains:)`, `nodes(ids:)`, `ticksByDeployHash(selectors:)`), in the variables or the document → the same errors'),
  GRAPHQL_MAX_DEPTH: int(1, 1_000).default(15).describe(
    "selection depth, fragments flattened, introspection included (GraphiQL's own query is 15)"),
  GRAPHQL_MAX_ALIASES: int(0, 1_000).default(15).describe('aliases per operation'),
  GRAPHQL_MAX_TOKENS: int(10, 1_000_000).default(2_000).describe('lexer tokens per document (stops parsing early)'),
  GRAPHQL_MAX_COST: int(1, 1_000_000_000_000).default(250_000).describe(
    "estimated fields of the result, computed per operation with its variables: every field 1, a list's selection × its length (a connection's effective page size), so nested pages multiply (a full 1000-row `inds_getTicks` page costs 18 001)"),
  GRAPHQL_MAX_RESULT_NODES: int(100, 100_000_000).default(100_000).describe(
    "objects and list items one operation's result may hold, counted while it runs (a 1000-row page with its nested tick stats ≈ 3 000) → `BAD_USER_INPUT` / `-32602` \"Response too large\""),
  GRAPHQL_MAX_RESPONSE_BYTES: int(65_536, 1024 * 1024 * 1024).default(16 * 1024 * 1024).describe(
    "estimated bytes of one operation's result, counted from the rows as they arrive (a full 1000-row tick page ≈ 1 MB) → the same error"),
  SHUTDOWN_TIMEOUT_MS: int(0, 600_000).default(10_000).describe(
    'drain time on SIGTERM/SIGINT: how long in-flight requests may take to finish before connections are cut'),
  CORS_ORIGIN: z.string().regex(/^(\*|[a-z][a-z0-9+.-]*:\/\/[^\s/,*]+(,[a-z][a-z0-9+.-]*:\/\/[^\s/,*]+)*)$/i,
    'must be * or a comma-separated list of origins such as https://app.example').default('*').describe(
    '`*` (any origin, never with credentials) or a comma-separated list of exact origins (`https://app.example,http://localhost:3000`); both surfaces answer a listed origin by echoing it (`Vary: Origin`) and any other with no CORS grant'),
  CORS_CREDENTIALS: bool.default(false).describe(
    '`Access-Control-Allow-Credentials: true` for the listed origins; refused at start with `CORS_ORIGIN=*`'),
  HTTP_HEADERS_TIMEOUT_MS: int(100, 600_000).default(10_000).describe(
    'request line and headers (an idle new connection included) → 408 with a body, closed'),
  HTTP_REQUEST_TIMEOUT_MS: int(100, 600_000).default(30_000).describe(
    'the whole request, body included (≥ the headers timeout) → 408 with an error body of its surface, closed'),
  HTTP_MIN_BODY_BYTES_PER_S: int(0, 1_000_000_000).default(1_024).describe(
    "minimum body rate: after the grace period a body may take `grace + received ÷ rate` (Apache's `MinRate` rule); slower → 408 with an error body of its surface, closed. `0`: off"),
  HTTP_BODY_GRACE_MS: int(0, 600_000).default(5_000).describe('time a body may take before the minimum rate applies'),
  HTTP_IDLE_TIMEOUT_MS: int(100, 600_000).default(30_000).describe(
    'a socket with no traffic either way (a stalled upload, a client that stops reading the answer) is closed; keep it above the 12 s heartbeat of subscriptions'),
  HTTP_KEEP_ALIVE_TIMEOUT_MS: int(100, 600_000).default(5_000).describe('an idle kept-alive connection is closed'),
  HTTP_MAX_REQUESTS_PER_SOCKET: int(0, 1_000_000).default(1_000).describe(
    'requests per kept-alive connection: the last one is answered with `Connection: close`, one pipelined past it with 503 and a body. `0`: unlimited'),
  HTTP_MAX_CONNECTIONS: int(1, 1_000_000).default(4_096).describe(
    'open connections in all; one over it is closed on accept (no reply: no JavaScript runs for it). Keep it well under `ulimit -n` (the start logs a warning when it is within 256 of it)'),
  HTTP_ACCEPT_HANDLES: int(1, 64).default(8).describe(
    'listening handles on the gateway\'s socket (`npm start`): Node 20 accepts one connection per event-loop turn per handle, so with 8 a flood of reconnecting clients cannot keep the kernel\'s accept queue full while the loop is busy. The extra handles are duplicates of the socket, obtained at start through a short-lived child process; `1`: the socket\'s own handle only'),
  HTTP_PRESSURE_THRESHOLD_PERCENT: int(1, 100).default(90).describe(
    'percent of `HTTP_MAX_CONNECTIONS` above which the table is under pressure: each new connection makes room by cutting an older one that has not completed a request (still sending headers or a body; oldest first), else the longest idle kept-alive one (a connection whose request is complete is never cut), and headers and bodies get `HTTP_PRESSURE_TIMEOUT_MS`. `100`: off'),
  HTTP_PRESSURE_TIMEOUT_MS: int(100, 600_000).default(2_000).describe(
    'under pressure (`HTTP_PRESSURE_THRESHOLD_PERCENT`), the time a connection has to complete its request (headers and body) before it is cut'),
  SHED_EVENT_LOOP_LAG_MS: int(0, 60_000).default(200).describe(
    'load shedding: while the event loop is later than this (`perf_hooks.monitorEventLoopDelay`, read every 250 ms), the clients whose recent answers cost the most (response bytes per address, half-life 10 s) are refused first, most expensive first: 429 with `Retry-After`, JSON-RPC `-32005` "limit exceeded", GraphQL `LIMIT_EXCEEDED`; probes exempt. `0`: off'),
  SHED_CLIENT_MIN_BYTES: int(0, 10_000_000_000).default(8_388_608).describe(
    'load shedding never refuses a client whose recent answers (decayed, half-life 10 s) total less than this: cheap clients are always served (a steady 20 requests/s of 5 KB pages is about 1.4 MB; a client pulling 5 MB answers passes it in two)'),
  SHED_TOTAL_BYTES_PER_S: int(0, 10_000_000_000).default(16_777_216).describe(
    'load shedding by summed cost: answer bytes per second over all client addresses together (averaged over about 2 s, so that the burst of one client is not pressure) past which the clients whose recent answers cost the most are refused first (as for `SHED_EVENT_LOOP_LAG_MS`), so many addresses each within `HTTP_CLIENT_BYTES_PER_S` cannot together take the one thread. `0`: no such bound'),
  SHED_NEW_CONNECTIONS_PER_S: int(0, 1_000_000).default(1_000).describe(
    'load shedding of connections: new connections per second over all client addresses together (averaged over about 2 s) past which (or while the event loop is later than `SHED_EVENT_LOOP_LAG_MS`) the addresses that opened the most recently are answered 429 with `Retry-After` on accept, before any request is read, most first, never one under `SHED_CLIENT_MIN_CONNECTIONS`. Off when `HTTP_MAX_CONNECTIONS_PER_CLIENT` is `0` (behind a proxy). `0`: off'),
  SHED_CLIENT_MIN_CONNECTIONS: int(1, 1_000_000).default(128).describe(
    'connection shedding never refuses an address whose recent new connections (decayed, half-life 10 s) number less than this: about 9 new connections a second sustained; a client that keeps its connections alive stays far below it'),
  HTTP_HOLD_REFUSED_MS: int(0, 60_000).default(20_000).describe(
    'a refused or cut connection (429 over the per-client cap or shed, 408 too slow, 503 no room for another stream) gets its answer at once, with `connection: close`, but is closed only after this long, reading and dropping what it sends: an HTTP client closes it as soon as it has read the answer, while a client that reconnects the moment it is closed waits, instead of making the gateway accept, parse and answer it every few milliseconds. Keep it under `HTTP_IDLE_TIMEOUT_MS` and `HTTP_REQUEST_TIMEOUT_MS`. `0`: closed at once'),
  HTTP_MAX_HELD_CONNECTIONS: int(0, 1_000_000).optional().describe(
    'connections held by `HTTP_HOLD_REFUSED_MS` at once, outside `HTTP_MAX_CONNECTIONS` (Node\'s own bound on open sockets is the sum of the two, the connections waiting for their address\'s turn, and this); past it a refused one is closed as soon as its answer is written, and a client that reconnects at once is back in the accept queue. Unset: what the open-file limit (`ulimit -n`) leaves after the table, the waiting connections and 1,024 descriptors for the rest, between 1,024 and 16,384 (8,192 when the limit cannot be read), since many addresses reconnecting together reach 8,192 within seconds (`bench/README.md`); a held connection costs about 3 KB of heap'),
  HTTP_MAX_INCOMPLETE_PER_CLIENT: int(0, 1_000_000).default(8).describe(
    'connections one client address may hold that have not completed a request (still sending headers or a body); one more waits, accepted but unread, until one of them completes or closes (at most `HTTP_MAX_CONNECTIONS` wait in all; past that it is closed on accept). `0`: no limit (behind a proxy, whose one address carries everyone)'),
  HTTP_MAX_CONNECTIONS_PER_CLIENT: int(0, 1_000_000).default(64).describe(
    'open connections per client address (IPv4 address, IPv6 /64); one over it gets 429 with `Retry-After: 1` and a body, unread, and is closed after `HTTP_HOLD_REFUSED_MS`. Behind a proxy, at least its connection pool. `0`: off'),
  HTTP_CLIENT_BYTES_PER_S: int(0, 10_000_000_000).default(4 * 1024 * 1024).describe(
    'response bytes per client address (a token bucket; probes exempt): a client answered more than its burst plus the refill gets 429 with `Retry-After` and an error body of its surface (`-32005` "limit exceeded" with `data.reason` "too much data answered to this client address" and `data.retryAfter`, GraphQL `LIMIT_EXCEEDED`) until its bucket is positive again. `0`: off'),
  HTTP_CLIENT_BURST_BYTES: int(1_024, 10_000_000_000).default(16 * 1024 * 1024).describe(
    "the byte budget's burst: what a client address may be answered at once before `HTTP_CLIENT_BYTES_PER_S` applies"),
  HEAP_MAX_MB: int(64, 65_536).default(512).describe(
    'V8 heap limit of `npm start` (`--max-old-space-size`); the limit in effect is logged at start, and a process started without one logs a warning'),
  STOP_WITH_PARENT: z.enum(['auto', 'true', 'false']).default('auto').describe(
    'drain and exit once the parent process has exited; `auto`: when started by npm (`npm start`), so that a supervisor stopping npm stops the gateway'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info').describe('log level'),
  LOG_FORMAT: z.enum(['auto', 'json', 'pretty']).default('auto').describe(
    '`json` lines, human-readable `pretty` lines, or `auto` (pretty on a terminal)'),
  CACHE: bool.default(true).describe('response cache (GraphQL and JSON-RPC, keyed on the data version) on or off'),
  CACHE_TTL_MS: int(1_000, 86_400_000).default(60_000).describe('entry lifetime'),
  CACHE_MAX_ENTRIES: int(10, 10_000_000).default(1_000).describe('in-memory entries (LRU); Redis is bounded by its own `maxmemory`'),
  CACHE_MAX_BYTES: int(64 * 1024, 64 * 1024 * 1024 * 1024).default(64 * 1024 * 1024).describe(
    'in-memory response cache, keys and response text together (64 MiB); least recently used entries are evicted'),
  CACHE_MAX_ENTRY_BYTES: int(1_024, 1024 * 1024 * 1024).default(1024 * 1024).describe(
    'a response larger than this (1 MiB) is answered but not cached (in memory or on Redis)'),
  REDIS_URL: z.string().regex(/^rediss?:\/\/\S+$/, 'must be a redis:// or rediss:// URL').optional().describe(
    '`redis://` or `rediss://`: a response cache shared by all gateways, with a local level in front (`CACHE_LOCAL_MAX_BYTES`)'),
  CACHE_LOCAL_MAX_BYTES: int(0, 64 * 1024 * 1024 * 1024).default(16 * 1024 * 1024).describe(
    'with `REDIS_URL`: the in-process level in front of Redis (16 MiB, at most `CACHE_MAX_ENTRIES` entries), which keeps answering while Redis is down; `0`: none'),
  REDIS_COMMAND_TIMEOUT_MS: int(1, 60_000).default(50).describe(
    'per-command timeout; a slower answer counts as a failure (and the request bypasses the cache)'),
  REDIS_BREAKER_FAILURES: int(1, 10_000).default(5).describe(
    'failed Redis commands in a row (spanning at least one command timeout) that open the circuit breaker; a lost connection opens it at once'),
  REDIS_BREAKER_OPEN_MS: int(10, 3_600_000).default(2_000).describe('how long an open breaker skips Redis before probing it (one PING)'),
  DATA_VERSION_POLL_MS: int(50, 60_000).default(500).describe(
    "poll interval of the data version when notifications cannot arrive, and of each replica's state"),
  DATA_VERSION_LISTEN: bool.default(true).describe(
    'LISTEN for version changes on the primary (off by itself with `DB_POOLER=pgbouncer`, and when a self-notification does not arrive at start); replicas are always polled'),
  PERSISTED_OPERATIONS_DIR: z.string().min(1).optional().describe(
    'directory of trusted `.graphql` operations (recursive), hashed with sha256 at start'),
  PERSISTED_OPERATIONS_ONLY: bool.default(false).describe(
    "`true`: only the manifest's operations run (needs `PERSISTED_OPERATIONS_DIR`; no APQ registration)"),
  APQ_MAX_ENTRIES: int(1, 10_000_000).default(1_000).describe("entries of the automatic persisted queries' LRU (per process)"),
  APQ_MAX_BYTES: int(1_024, 1024 * 1024 * 1024).default(4 * 1024 * 1024).describe("bytes of the automatic persisted queries' LRU (per process)"),
  APQ_MAX_DOCUMENT_BYTES: int(256, 16 * 1024 * 1024).default(32 * 1024).describe(
    'a larger APQ document (UTF-8 bytes) is answered but not registered; only documents that parse and validate against the schema are registered'),
  APQ_CLIENT_MAX_ENTRIES: int(1, 10_000_000).default(100).describe(
    'APQ entries one client (its API key, else its address: IPv4 or IPv6 /64) may hold; past it, its own oldest entry makes room, never another client\'s'),
  APQ_CLIENT_MAX_BYTES: int(1_024, 1024 * 1024 * 1024).default(256 * 1024).describe(
    'APQ bytes (documents in memory) one client may hold, likewise; a full store takes no registration from a client that holds nothing'),
  APQ_IDLE_TTL_S: int(1, 30 * 86_400).default(3_600).describe('an APQ entry not used for this long expires (how a full store frees room)'),
  GRAPHQL_CACHE_CONTROL: z.string().regex(/^[\x20-\x7e]+$/, 'must be a Cache-Control value').default('public, max-age=5, stale-while-revalidate=30').describe(
    '`Cache-Control` of GET query answers without errors (POST and errors: `no-store`); `no-store` turns shared caching off'),
  HTTP_COMPRESSION: bool.default(true).describe('brotli/gzip/deflate compression of answers (a proxy in front may do it instead)'),
  HTTP_COMPRESSION_MIN_BYTES: int(0, 1024 * 1024 * 1024).default(1_024).describe('smaller bodies are sent as they are'),
  SUBSCRIPTIONS_MAX_PER_CLIENT: int(0, 1_000_000).default(32).describe(
    'open subscriptions per client address (IPv4, or IPv6 /64, as the HTTP per-client caps); over it: one error event (`TOO_MANY_REQUESTS`), then `complete`. `0`: none'),
  SUBSCRIPTIONS_MAX_PER_CONNECTION: int(1, 10_000).default(4).describe(
    'open subscriptions per connection (same answer); over HTTP/1.1 a connection carries one stream at a time, so this guards a transport that multiplexes'),
  SUBSCRIPTIONS_MAX_QUEUE: int(1, 100_000).default(1_000).describe(
    'events a subscription may leave unread; one more and it is dropped: its last event is an error (`SLOW_CONSUMER`), then `complete`, and a client that still reads nothing is disconnected 5 s later'),
  SUBSCRIPTIONS_MAX_PENDING_BYTES: int(1_024, 1024 * 1024 * 1024).default(4 * 1024 * 1024).describe(
    'rendered event bytes one stream may have waiting for its client (not yet taken by the socket; one event of any size passes when nothing waits); one more event and the stream gets a last error event (`SLOW_CONSUMER`), then `complete`, and its connection is closed 5 s later if it does not take them. The bytes a stream writes are charged to `HTTP_CLIENT_BYTES_PER_S` as they go: a client in debt is cut the same way'),
  SUBSCRIPTIONS_MAX_PENDING_TOTAL_BYTES: int(1_024, 64 * 1024 * 1024 * 1024).default(128 * 1024 * 1024).describe(
    'the same over every stream (an event rendered once for many streams counts once): an event that would take it past this cuts its stream the same way (`SLOW_CONSUMER`)'),
  SUBSCRIPTIONS_MAX_OPEN: int(0, 1_000_000).default(10_000).describe(
    'open subscriptions in all, at most `SUBSCRIPTIONS_MAX_CONNECTION_SHARE` × `HTTP_MAX_CONNECTIONS`; one more gets HTTP 503 with `Retry-After` and an error (`TOO_MANY_SUBSCRIPTIONS`)'),
  SUBSCRIPTIONS_MAX_NEW_PER_S: int(0, 1_000_000).default(100).describe(
    'new subscriptions per second over every client without an API key (a bucket of one second\'s worth), since each costs a full GraphQL request to set up: one more gets HTTP 503 with `Retry-After: 1` and an error (`TOO_MANY_SUBSCRIPTIONS`), before its body is read. A request presenting a key is not paced (its key is checked before anything runs, and its streams are capped per key). `0`: none'),
  SUBSCRIPTIONS_MAX_CONNECTION_SHARE: z.coerce.number().min(0).max(1).default(0.5).describe(
    'share of `HTTP_MAX_CONNECTIONS` that streams may hold (each stream holds its connection), so idle streams cannot fill the connection table; past it the same answer as `SUBSCRIPTIONS_MAX_OPEN`'),
  METRICS_MAX_OPERATIONS: int(1, 10_000).default(100).describe(
    'distinct GraphQL operation names used as metric labels (then `other`; each cut to 64 characters)'),
  ANONYMOUS_ACCESS: z.enum(['allow', 'deny']).default('allow').describe(
    'requests without an API key: served with the per-address limits (`allow`) or answered 401 (`deny`); see [API keys](api-keys.md)'),
  ANONYMOUS_SHARE: z.coerce.number().gt(0).max(1).default(0.75).describe(
    'while any API key exists, requests without a key together hold at most this share of each database pool and of the open subscriptions, so keyed clients keep the rest (1: no reservation); see [API keys](api-keys.md)'),
  API_KEYS_RELOAD_MS: int(100, 3_600_000).default(30_000).describe(
    'the gateway reloads the API keys on their NOTIFY (within a second or two) and, should one be lost, this often'),
  QUOTA_GATEWAYS: int(1, 1_000).default(1).describe(
    'gateways sharing the API keys\' quotas: while Redis fails each admits 1/`QUOTA_GATEWAYS` of a key\'s rate, burst and remaining day (without `REDIS_URL` every gateway has the full quota)'),
  BAD_KEY_FREE_FAILURES: int(0, 1_000_000).default(10).describe(
    'bad API keys one client address may send before its keyed requests wait (429): 1 s, doubling with each further bad key'),
  BAD_KEY_MAX_BLOCK_S: int(1, 86_400).default(60).describe('the longest wait of an address sending bad API keys'),
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

export function loadConfig(env: Record<string, string | undefined> = process.env, fileLimit: number | null = openFileLimit()): Config {
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
  if (config.DEMO_PLAYER === 'true' && config.DATABASE_URL) {
    conflicts.push('  DEMO_PLAYER: the demo player writes into the embedded engine\'s demo data only (no DATABASE_URL)');
  }
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
  const replicas = replicaCount(config);
  if (config.DATABASE_READ_NAMES && config.DATABASE_READ_NAMES.length !== replicas) {
    conflicts.push(`  DATABASE_READ_NAMES: ${config.DATABASE_READ_NAMES.length} names for ${replicas} replica hosts`);
  } else if (config.DATABASE_READ_NAMES && new Set(config.DATABASE_READ_NAMES).size !== replicas) {
    conflicts.push('  DATABASE_READ_NAMES: names must differ (each replica gets its own metric series)');
  }
  if (conflicts.length > 0) throw new ConfigError(`Invalid configuration:\n${conflicts.join('\n')}`);
  config.HTTP_MAX_HELD_CONNECTIONS ??= heldConnectionsDefault(config, fileLimit);
  return config;
}

/** This process's open-file limit (`ulimit -n`, as Node raised it at start), or null where it cannot be read. */
export function openFileLimit(): number | null {
  try {
    const soft = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'))?.[1];
    return soft ? Number(soft) : null;
  } catch {
    return null;
  }
}

type SocketSettings = Pick<Config, 'HTTP_MAX_CONNECTIONS' | 'HTTP_MAX_CONNECTIONS_PER_CLIENT'> & Partial<Pick<Config, 'HTTP_MAX_INCOMPLETE_PER_CLIENT'>>;

/** Connections accepted but unread while their address has HTTP_MAX_INCOMPLETE_PER_CLIENT in progress: at most the table again. */
export function waitingAtMost(settings: SocketSettings): number {
  const off = settings.HTTP_MAX_CONNECTIONS_PER_CLIENT === 0 || (settings.HTTP_MAX_INCOMPLETE_PER_CLIENT ?? 0) === 0;
  return off ? 0 : settings.HTTP_MAX_CONNECTIONS;
}

/**
 * HTTP_MAX_HELD_CONNECTIONS when it is not set: the descriptors `fileLimit` leaves after the table, the waiting
 * connections and 1,024 for the rest (pool, files), between 1,024 and 16,384; 8,192 without a limit to read.
 * The connection attacks together reached 8,192 held within 12 s; at 11,000 the accept queue overflowed half as
 * often and the probe was never late after the first second (bench/README.md, issue 23's rows).
 */
export function heldConnectionsDefault(settings: SocketSettings, fileLimit: number | null): number {
  if (fileLimit === null) return 8_192;
  const left = fileLimit - settings.HTTP_MAX_CONNECTIONS - waitingAtMost(settings) - 1_024;
  return Math.min(16_384, Math.max(1_024, left));
}

/** The read replica hosts: a multi-host DATABASE_URL's hosts after the first, then DATABASE_READ_URLS'. */
function replicaCount(config: Config): number {
  const extra = config.DATABASE_URL ? expandHosts(config.DATABASE_URL).length - 1 : 0;
  return extra + (config.DATABASE_READ_URLS ? expandUrlList(config.DATABASE_READ_URLS).length : 0);
}
