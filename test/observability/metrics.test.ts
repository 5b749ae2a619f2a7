import { describe, expect, it } from 'vitest';
import { createMetrics } from '../../src/observability/metrics.js';
import { Fixture } from '../support/fixtures.js';
import { gql, request, rpc } from '../support/http.js';
import { startTestGateway, type TestGateway, useDatabase, useGateway } from '../support/gateway.js';

// GET /metrics: prom-client exposition with the yoga Prometheus plugin's GraphQL metrics and the
// gateway's own: requests and latency per operation and per RPC method, errors by code, DataLoader batch
// sizes, pool in-use/waiting, cache hits/misses, indexed height per chain. One registry per gateway.

const db = useDatabase({
  load: async (db) => {
    const f = new Fixture();
    for (let i = 0; i < 6; i++) {
      const t = f.tick({ chain: 'eth', protocol: 'erc-20', tick: `met${i}` });
      for (let h = 0; h < 3; h++) f.mint(t, `0xfeed${String(i * 10 + h).padStart(36, '0')}`, String(10 + h));
    }
    f.block('eth', '19000123', '2024-01-15T09:00:00.000Z', '2024-01-15T09:00:05.000Z');
    f.block('btc', '830001', '2024-01-15T09:00:00.000Z', '2024-01-15T09:00:05.000Z');
    await f.load(db.sql);
  },
});
const live = useGateway({ db, config: { CACHE: true } });
const second = useGateway({ db, config: { CACHE: true } });

const scrape = async (g: TestGateway) => {
  const reply = await request(`${g.base}/metrics`);
  expect(reply.status).toBe(200);
  expect(reply.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return reply.text;
};
/** The value of one sample, by metric name and labels (in any order). */
function sample(text: string, name: string, labels: Record<string, string> = {}): number | undefined {
  for (const line of text.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const body = line.slice(name.length);
    if (Object.entries(labels).every(([k, v]) => body.includes(`${k}="${v}"`))) return Number(line.split(' ').at(-1));
  }
  return undefined;
}

const nested = `query TicksWithHolders { ticks(first: 6, orderBy: ID, direction: ASC) {
  edges { node { tick holders(first: 2) { edges { node { address balance } } } } } } }`;

describe('GET /metrics', () => {
  it('reports GraphQL operations (cached ones too), RPC methods, errors, batches, cache, pool and heights', async () => {
    for (let i = 0; i < 3; i++) await gql(live.base, nested);
    await gql(live.base, '{ nope }');
    await rpc(live.base, { jsonrpc: '2.0', id: 1, method: 'inds_getTicks', params: [5, 0, '', '', '', '', 0, 2] });
    await rpc(live.base, { jsonrpc: '2.0', id: 2, method: 'inds_getTicks', params: [5, 0, '', '', '', '', 0, 2] });
    await rpc(live.base, { jsonrpc: '2.0', id: 3, method: 'inds_nope', params: [] });
    await rpc(live.base, { jsonrpc: '2.0', id: 4, method: 'inds_getTicks', params: ['x'] });
    const text = await scrape(live);

    // per GraphQL operation, whether or not it was executed
    expect(sample(text, 'igw_requests_total', { surface: 'graphql', operation: 'TicksWithHolders', outcome: 'ok' })).toBe(3);
    expect(sample(text, 'igw_request_duration_seconds_count', { surface: 'graphql', operation: 'TicksWithHolders', cache: 'miss' })).toBe(1);
    expect(sample(text, 'igw_request_duration_seconds_count', { surface: 'graphql', operation: 'TicksWithHolders', cache: 'hit' })).toBe(2);
    expect(sample(text, 'igw_request_duration_seconds_bucket', { surface: 'graphql', operation: 'TicksWithHolders', cache: 'hit', le: '+Inf' })).toBe(2);
    // the yoga plugin's own, for executed operations
    expect(sample(text, 'graphql_envelop_phase_execute_count', { operationName: 'TicksWithHolders' })).toBe(1);
    // HTTP time by operation type and status only (per operation: igw_request_duration_seconds); the plugin
    // sees parsed requests: the miss and `{ nope }`, not the two hits
    expect(sample(text, 'graphql_yoga_http_duration_count', { operationType: 'query', statusCode: '200' })).toBe(2);
    expect(text).not.toMatch(/graphql_yoga_http_duration_count\{[^}]*(url|operationName)=/);
    // `{ nope }` failed validation: one error of that phase, and the parse and context phases timed for the miss only
    expect(sample(text, 'graphql_envelop_error_result', { operationName: 'Anonymous', phase: 'validate' })).toBe(1);
    expect(sample(text, 'graphql_envelop_phase_context_count', { operationType: 'query' })).toBe(1);
    expect(sample(text, 'graphql_envelop_phase_parse_count', { operationType: 'query' })).toBe(2);
    // per RPC method (interface:method), errors by code
    expect(sample(text, 'igw_requests_total', { surface: 'rpc', operation: 'v2:inds_getTicks', outcome: 'ok' })).toBe(2);
    expect(sample(text, 'igw_request_duration_seconds_count', { surface: 'rpc', operation: 'v2:inds_getTicks', cache: 'hit' })).toBe(1);
    expect(sample(text, 'igw_requests_total', { surface: 'rpc', operation: 'v2:(unknown)', outcome: 'error' })).toBe(1);
    expect(sample(text, 'igw_errors_total', { surface: 'rpc', code: '-32601' })).toBe(1);
    expect(sample(text, 'igw_errors_total', { surface: 'rpc', code: '-32602' })).toBe(1);
    expect(sample(text, 'igw_errors_total', { surface: 'graphql', code: 'GRAPHQL_VALIDATION_FAILED' })).toBe(1);
    // one batch of the six ticks' holders
    expect(sample(text, 'igw_dataloader_batch_size_count', { batch: 'balances.holdersOfTicks' })).toBe(1);
    expect(sample(text, 'igw_dataloader_batch_size_sum', { batch: 'balances.holdersOfTicks' })).toBe(6);
    // cache, pool, freshness
    expect(sample(text, 'igw_cache_lookups_total', { surface: 'graphql', result: 'hit' })).toBe(2);
    expect(sample(text, 'igw_cache_lookups_total', { surface: 'rpc', result: 'miss' })).toBe(1);
    expect(sample(text, 'igw_cache_lookups_total', { surface: 'rpc', result: 'hit' })).toBe(1);
    expect(sample(text, 'igw_db_pool_in_use')).toBe(0);
    expect(sample(text, 'igw_db_pool_waiting')).toBe(0);
    expect(sample(text, 'igw_db_pool_size')).toBe(4);
    expect(sample(text, 'igw_indexed_block_height', { chain: 'eth' })).toBe(19000123);
    expect(sample(text, 'igw_indexed_block_height', { chain: 'btc' })).toBe(830001);
    expect(sample(text, 'igw_indexed_block_height', { chain: 'bsc' })).toBeUndefined();
    expect(sample(text, 'igw_data_version')).toBeGreaterThan(0);
    expect(sample(text, 'igw_http_responses_total', { surface: 'graphql', status: '200' })).toBeGreaterThanOrEqual(3);
    expect(sample(text, 'igw_request_db_seconds_count', { surface: 'graphql' })).toBeGreaterThanOrEqual(4);
    expect(sample(text, 'process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('keeps one registry per gateway: two in one process neither clash nor mix', async () => {
    await gql(second.base, 'query OnlyOnSecond { __typename }');
    const [mine, theirs] = [await scrape(live), await scrape(second)];
    expect(sample(theirs, 'igw_requests_total', { operation: 'OnlyOnSecond' })).toBe(1);
    expect(sample(mine, 'igw_requests_total', { operation: 'OnlyOnSecond' })).toBeUndefined();
    expect(sample(theirs, 'igw_requests_total', { operation: 'TicksWithHolders' })).toBeUndefined();
  });

  it('takes an operationName that is not a string as an error, not as a label (it once crashed the process)', async () => {
    for (const operationName of [{ toString: 1 }, ['Op'], 42, true]) {
      const reply = await request(`${second.base}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ query: '{ __typename }', operationName }),
      });
      expect(reply.status).toBe(400);
      expect((reply.json as any).errors[0].extensions.code).toBeDefined();
    }
    const text = await scrape(second);
    expect(text).toMatch(/igw_http_responses_total\{surface="graphql",status="400"\} [1-9]/);
    expect((await request(`${second.base}/healthz`)).status).toBe(200);
  });

  it('caps client-chosen operation names', async () => {
    await Promise.all(Array.from({ length: 230 }, (_, i) => gql(second.base, `query Op${i} { __typename }`)));
    const text = await scrape(second);
    const names = new Set([...text.matchAll(/igw_requests_total\{surface="graphql",operation="([^"]+)"/g)].map((m) => m[1]));
    expect(names.size).toBeLessThanOrEqual(201);
    expect(names.has('other')).toBe(true);
  });
});

describe('pool gauges', () => {
  it('report in-flight statements up to the pool size as in use, the rest as waiting', async () => {
    const pool = { inflight: 7 };
    const metrics = createMetrics({ pool, poolMax: 4, freshness: () => null });
    const text = await metrics.registry.metrics();
    expect(sample(text, 'igw_db_pool_in_use')).toBe(4);
    expect(sample(text, 'igw_db_pool_waiting')).toBe(3);
    pool.inflight = 2;
    const after = await metrics.registry.metrics();
    expect(sample(after, 'igw_db_pool_in_use')).toBe(2);
    expect(sample(after, 'igw_db_pool_waiting')).toBe(0);
  });

  it('see the statements of requests in flight', async () => {
    const small = await startTestGateway(db, { DB_POOL_MAX: 1, CACHE: false });
    try {
      // a lock held by another session keeps the gateway's statements in flight until the test lets go,
      // so what the gauges show does not depend on how fast the machine is
      let queries: Promise<unknown>[] = [];
      let peakInUse = 0;
      let peakWaiting = 0;
      await db.sql.begin(async (tx) => {
        await tx`LOCK TABLE ticks IN ACCESS EXCLUSIVE MODE`;
        queries = Array.from({ length: 12 }, (_, i) => gql(small.base, `query Q${i} { ticks(first: ${i + 1}) { totalCount edges { node { tick } } } }`));
        for (let i = 0; i < 100 && peakWaiting === 0; i++) {
          const text = await scrape(small);
          peakInUse = Math.max(peakInUse, sample(text, 'igw_db_pool_in_use') ?? 0);
          peakWaiting = Math.max(peakWaiting, sample(text, 'igw_db_pool_waiting') ?? 0);
          if (peakWaiting === 0) await new Promise((r) => setTimeout(r, 20));
        }
      });
      await Promise.all(queries);
      expect(peakInUse).toBe(1);
      expect(peakWaiting).toBeGreaterThan(0);
      expect(sample(await scrape(small), 'igw_db_pool_in_use')).toBe(0);
    } finally {
      await small.close();
    }
  });
});
