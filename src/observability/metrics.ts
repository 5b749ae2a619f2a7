import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { PoolMeter } from '../request/scope.js';

// One prom-client registry per gateway (two gateways in one test process must not share or clash), with
// the process metrics, the yoga Prometheus plugin's GraphQL phase metrics (registered on it by
// src/graphql/yoga.ts) and the gateway's own metrics below, which cover what the plugin cannot see:
// requests answered from the cache (they never reach the execute phase), JSON-RPC methods, DataLoader
// batches, the pool and the indexed heights.

export interface MetricsSources {
  pool: PoolMeter;
  poolMax: number;
  /** The admission gate's real state (src/db/semaphore.ts): permits held and statements waiting. */
  poolState?: () => { inUse: number; waiting: number; size: number } | null;
  /** `igw_build_info` labels. */
  build?: { version: string; commit: string };
  /** Time (ms since epoch) of the newest indexed block per chain, as of the current data version. */
  blockTimes?: () => Record<string, number> | null;
  /** Whether the data-version watcher is LISTENing (else it learns versions by polling). */
  listening?: () => boolean;
  /** Redis: connection usable and the breaker's state; null without Redis. */
  redis?: () => { up: boolean; breaker: 'closed' | 'open' | 'half-open' } | null;
  /** Latest indexed block per chain and the data version, as last read by the watcher. */
  freshness: () => { version: string; heights: Record<string, string | null> } | null;
  /** Entries and bytes of the in-memory response cache (null: off or on Redis). */
  cacheStats?: () => { entries: number; bytes: number } | null;
  /** Distinct GraphQL operation names reported as label values (METRICS_MAX_OPERATIONS); default 100. */
  maxOperations?: number;
}

const latencyBuckets = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/** Longest label value taken from a client (longer ones are cut). */
export const maxLabelLength = 64;

/**
 * Client-chosen label values (GraphQL operation names) are capped: cut to 64 characters, and past `max`
 * distinct values new ones are reported as "other", so a client inventing names can neither add series
 * without end nor make one series huge. One guard serves every series that carries an operation name
 * (the gateway's and the yoga plugin's), so they all name the same operations.
 */
export function labelGuard(max: number) {
  const seen = new Set<string>();
  return (value: unknown): string => {
    const text = typeof value === 'string' ? value : 'invalid';
    const v = text.length > maxLabelLength ? text.slice(0, maxLabelLength) : text;
    if (seen.has(v)) return v;
    if (seen.size >= max) return 'other';
    seen.add(v);
    return v;
  };
}

type Registers = Registry[];

/** What each request and call is counted and timed by. */
function requestMetrics(registers: Registers) {
  const requests = new Counter({
    name: 'igw_requests_total',
    help: 'GraphQL operations and JSON-RPC calls answered, by surface, operation or method, and outcome (ok/error)',
    labelNames: ['surface', 'operation', 'outcome'] as const,
    registers,
  });
  const duration = new Histogram({
    name: 'igw_request_duration_seconds',
    help: 'Latency per GraphQL operation (whole HTTP request) and per JSON-RPC call, by cache outcome (hit/miss/bypass)',
    labelNames: ['surface', 'operation', 'cache'] as const,
    buckets: latencyBuckets,
    registers,
  });
  const errors = new Counter({
    name: 'igw_errors_total',
    help: 'Errors returned to clients by code (GraphQL extensions.code, JSON-RPC error.code)',
    labelNames: ['surface', 'code'] as const,
    registers,
  });
  const responses = new Counter({
    name: 'igw_http_responses_total',
    help: 'HTTP responses by surface and status code',
    labelNames: ['surface', 'status'] as const,
    registers,
  });
  const dbTime = new Histogram({
    name: 'igw_request_db_seconds',
    help: 'Database time per HTTP request: time during which a statement of it held a pool connection (queueing not included)',
    labelNames: ['surface'] as const,
    buckets: latencyBuckets,
    registers,
  });
  const queueTime = new Histogram({
    name: 'igw_request_queue_seconds',
    help: 'Time per HTTP request during which a statement of it waited for a pool connection',
    labelNames: ['surface'] as const,
    buckets: latencyBuckets,
    registers,
  });
  const batchSize = new Histogram({
    name: 'igw_dataloader_batch_size',
    help: 'Keys per DataLoader batch (one statement each), by batch function',
    labelNames: ['batch'] as const,
    buckets: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000],
    registers,
  });
  const inFlight = new Gauge({
    name: 'igw_http_requests_in_flight',
    help: 'HTTP requests received and not yet answered (every path, this scrape included)',
    registers,
  });
  return { requests, duration, errors, responses, dbTime, queueTime, batchSize, inFlight };
}

/** The response cache's and the data version's counters. */
function cacheCounters(registers: Registers) {
  const cacheLookups = new Counter({
    name: 'igw_cache_lookups_total',
    help: 'Response cache lookups by surface and result (hit/miss)',
    labelNames: ['surface', 'result'] as const,
    registers,
  });
  const cacheLocalHits = new Counter({
    name: 'igw_cache_local_hits_total',
    help: 'Response cache hits answered by the in-process level in front of Redis (no Redis round trip)',
    registers,
  });
  const cacheErrors = new Counter({
    name: 'igw_cache_errors_total',
    help: 'Cache store failures (treated as misses), by operation',
    labelNames: ['op'] as const,
    registers,
  });
  const cacheOversized = new Counter({
    name: 'igw_cache_oversized_total',
    help: 'Responses not stored in the cache because they exceed CACHE_MAX_ENTRY_BYTES',
    registers,
  });
  const versionChanges = new Counter({
    name: 'igw_data_version_changes_total',
    help: 'Data version changes learned, by how (notify = LISTEN/NOTIFY, poll = fallback poll, start)',
    labelNames: ['via'] as const,
    registers,
  });
  const redisBreakerTransitions = new Counter({
    name: 'igw_redis_breaker_transitions_total',
    help: 'Redis circuit breaker state changes (to: open = Redis skipped, closed = in use again)',
    labelNames: ['to'] as const,
    registers,
  });
  return { cacheLookups, cacheLocalHits, cacheErrors, cacheOversized, versionChanges, redisBreakerTransitions };
}

/** The pool's gauges, read at each scrape. */
function poolGauges(registers: Registers, sources: MetricsSources) {
  // the admission gate counts exactly; without it (a metrics registry on its own) in-flight statements
  const pool = () => sources.poolState?.() ??
    { inUse: Math.min(sources.pool.inflight, sources.poolMax), waiting: Math.max(0, sources.pool.inflight - sources.poolMax), size: sources.poolMax };
  new Gauge({
    name: 'igw_db_pool_in_use',
    help: 'Pool connections held by statements (permits of the admission gate in use)',
    registers,
    collect() {
      this.set(pool().inUse);
    },
  });
  new Gauge({
    name: 'igw_db_pool_waiting',
    help: 'Statements waiting at the admission gate for a pool connection',
    registers,
    collect() {
      this.set(pool().waiting);
    },
  });
  new Gauge({
    name: 'igw_db_pool_size',
    help: 'Pool connections over every server (DB_POOL_MAX × servers: permits of the admission gates)',
    registers,
    collect() {
      this.set(pool().size);
    },
  });
}

/** The build and how fresh the data answered from is, read at each scrape. */
function freshnessGauges(registers: Registers, sources: MetricsSources) {
  if (sources.build) {
    new Gauge({
      name: 'igw_build_info',
      help: 'Always 1; the labels name the running build (package version, git commit)',
      labelNames: ['version', 'commit'] as const,
      registers,
    }).set(sources.build, 1);
  }
  new Gauge({
    name: 'igw_data_age_seconds',
    help: 'Now minus the time of the newest indexed block, per chain (grows while the indexer is stalled)',
    labelNames: ['chain'] as const,
    registers,
    collect() {
      this.reset();
      const now = Date.now();
      for (const [chain, time] of Object.entries(sources.blockTimes?.() ?? {})) this.set({ chain }, Math.max(0, (now - time) / 1000));
    },
  });
  new Gauge({
    name: 'igw_listen_up',
    help: '1 while LISTEN on the data-version channel is connected, 0 while versions are learned by polling',
    registers,
    collect() {
      this.set(sources.listening?.() ? 1 : 0);
    },
  });
  new Gauge({
    name: 'igw_indexed_block_height',
    help: 'Latest indexed block per chain, as of the data version the gateway currently answers from',
    labelNames: ['chain'] as const,
    registers,
    collect() {
      this.reset();
      const snapshot = sources.freshness();
      for (const [chain, height] of Object.entries(snapshot?.heights ?? {})) {
        if (height !== null) this.set({ chain }, Number(height));
      }
    },
  });
  new Gauge({
    name: 'igw_data_version',
    help: 'Data version the gateway currently answers from (bumped by every write of the indexer)',
    registers,
    collect() {
      const snapshot = sources.freshness();
      if (snapshot) this.set(Number(snapshot.version));
    },
  });

}

/** Redis's and the in-memory cache's state, read at each scrape. */
function cacheGauges(registers: Registers, sources: MetricsSources) {
  if (sources.redis) {
    const redis = sources.redis;
    new Gauge({
      name: 'igw_redis_up',
      help: '1 when the shared cache (Redis) is connected and in use, 0 when it is down, hung or skipped (breaker open)',
      registers,
      collect() {
        const state = redis();
        if (state) this.set(state.up ? 1 : 0);
      },
    });
    new Gauge({
      name: 'igw_redis_breaker_open',
      help: '1 while the Redis circuit breaker skips Redis (open, or half-open: probing), 0 when closed',
      registers,
      collect() {
        const state = redis();
        if (state) this.set(state.breaker === 'closed' ? 0 : 1);
      },
    });
  }
  new Gauge({
    name: 'igw_cache_bytes',
    help: 'Bytes held in memory by the response cache (keys and response text; bounded by CACHE_MAX_BYTES, or with Redis CACHE_LOCAL_MAX_BYTES)',
    registers,
    collect() {
      const stats = sources.cacheStats?.();
      if (stats) this.set(stats.bytes);
    },
  });
  new Gauge({
    name: 'igw_cache_entries',
    help: 'Entries held in memory by the response cache (with Redis: its local level)',
    registers,
    collect() {
      const stats = sources.cacheStats?.();
      if (stats) this.set(stats.entries);
    },
  });
}

export function createMetrics(sources: MetricsSources) {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  const counters = { ...requestMetrics(registers), ...cacheCounters(registers) };
  poolGauges(registers, sources);
  freshnessGauges(registers, sources);
  cacheGauges(registers, sources);
  return {
    registry,
    ...counters,
    /** A GraphQL operation name made safe for a label. */
    operationLabel: labelGuard(sources.maxOperations ?? 100),
  };
}

export type Metrics = ReturnType<typeof createMetrics>;

/** The listener's connections, read at each scrape (src/server/pressure.ts, src/server/held.ts). */
export interface ConnectionStats { open: number; waiting: number; held: number; cut: number }

export function registerConnectionMetrics(registry: Registry, read: () => ConnectionStats): void {
  new Gauge({
    name: 'igw_http_connections',
    help: 'Connections by state: open (in the table, HTTP_MAX_CONNECTIONS), waiting (unread, for their address\'s turn: HTTP_MAX_INCOMPLETE_PER_CLIENT), held (refused or cut, answered, closed after HTTP_HOLD_REFUSED_MS: HTTP_MAX_HELD_CONNECTIONS)',
    labelNames: ['state'],
    registers: [registry],
    collect() {
      const stats = read();
      for (const state of ['open', 'waiting', 'held'] as const) this.set({ state }, stats[state]);
    },
  });
  let counted = 0;
  new Counter({
    name: 'igw_http_connections_cut_total',
    help: 'Connections cut to make room in a nearly full table (HTTP_PRESSURE_THRESHOLD_PERCENT)',
    registers: [registry],
    collect() {
      const cut = read().cut;
      this.inc(cut - counted);
      counted = cut;
    },
  });
}
