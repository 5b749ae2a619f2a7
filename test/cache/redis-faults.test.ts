import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Fixture } from '../support/fixtures.js';
import { capturingLogger, waitFor } from '../support/ops.js';
import { gql, rpc } from '../support/http.js';
import { startRedis, type OwnRedis } from '../support/redis-server.js';
import { startTestGateway, type TestGateway, useDatabase } from '../support/gateway.js';

// The shared cache fails soft: a real redis-server of the test's own, frozen with SIGSTOP (hung: the port
// accepts, nothing answers) or killed. The gateway answers every request correctly without it (x-cache:
// bypass), its circuit breaker opens (metric, log line), and once Redis is back the breaker closes and
// caching resumes. Also: x-cache on JSON-RPC replies.

const holders = Array.from({ length: 12 }, (_, i) => `0xfa11${String(i).padStart(36, '0')}`);
const tick = { chain: 'avalanche', protocol: 'asc-20', tick: 'soft' };
const balancesQuery = 'query B($address: String!) { balances(address: $address, first: 5) { edges { node { balance tick { tick } } } } }';
const balanceCall = (address: string, id = 1) => ({ jsonrpc: '2.0', id, method: 'inds_getBalancesByAddress', params: [5, 0, address, '', '', '', '', 2] });

async function metric(g: TestGateway, name: string): Promise<number | undefined> {
  const scrape = await (await fetch(`${g.base}/metrics`)).text();
  const line = scrape.split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

describe('shared cache failing soft', () => {
  const db = useDatabase();
  let redis: OwnRedis;
  let g: TestGateway;
  let plain: TestGateway;
  const log = capturingLogger();
  const truth = new Map<string, string>();

  beforeAll(async () => {
    const f = new Fixture();
    const t = f.tick(tick);
    holders.forEach((address, i) => f.mint(t, address, String(10 * (i + 1))));
    f.block('avalanche', '42000000', '2024-01-15T09:00:00.000Z', '2024-01-15T09:00:02.000Z');
    await f.load(db.sql);
    redis = await startRedis();
    [g, plain] = await Promise.all([
      // without the local level in front of Redis, so that what Redis itself costs shows (the local level: cache.two-level)
      startTestGateway(db, { CACHE: true, REDIS_URL: redis.url, REDIS_BREAKER_FAILURES: 3, REDIS_BREAKER_OPEN_MS: 300, CACHE_LOCAL_MAX_BYTES: 0 }, { logger: log.logger }),
      startTestGateway(db, { CACHE: false }),
    ]);
    for (const address of holders) truth.set(address, (await rpc(plain.base, balanceCall(address))).text);
  });
  afterAll(async () => {
    await Promise.all([g?.close(), plain?.close()]);
    await redis?.stop();
  });

  /** One JSON-RPC call and one GraphQL query for `address`, both checked against the cache-less gateway. */
  async function both(address: string): Promise<string[]> {
    const call = await rpc(g.base, balanceCall(address));
    expect(call.status).toBe(200);
    expect(call.text, address).toBe(truth.get(address));
    const query = await gql(g.base, balancesQuery, { address });
    expect(query.status).toBe(200);
    expect(query.json.data.balances.edges[0].node.balance).toBe(JSON.parse(truth.get(address)!).result.inscriptions[0].balance);
    return [call.headers.get('x-cache')!, query.headers.get('x-cache')!];
  }

  it('JSON-RPC replies carry x-cache: miss, hit; bypass without a cache', async () => {
    expect(g.gateway.ops.cache?.kind).toBe('redis');
    expect(await both(holders[0]!)).toEqual(['miss', 'miss']);
    expect(await both(holders[0]!)).toEqual(['hit', 'hit']);
    // a batch: hit when every call was, miss when one was not; an unknown method looks nothing up
    const batch = await rpc(g.base, [balanceCall(holders[0]!, 1), balanceCall(holders[1]!, 2)]);
    expect(batch.headers.get('x-cache')).toBe('miss');
    expect((await rpc(g.base, [balanceCall(holders[0]!, 1), balanceCall(holders[1]!, 2)])).headers.get('x-cache')).toBe('hit');
    expect((await rpc(g.base, { jsonrpc: '2.0', id: 1, method: 'nope', params: [] })).headers.get('x-cache')).toBe('bypass');
    expect((await rpc(plain.base, balanceCall(holders[0]!))).headers.get('x-cache')).toBe('bypass');
    expect(await metric(g, 'igw_redis_up')).toBe(1);
    expect(await metric(g, 'igw_redis_breaker_open')).toBe(0);
  });

  it('hung (SIGSTOP): every request answered correctly without it, the breaker opens, and closes after SIGCONT', async () => {
    redis.freeze();
    try {
      const seen = new Set<string>();
      for (const address of holders.slice(2, 6)) for (const outcome of await both(address)) seen.add(outcome);
      expect([...seen]).toEqual(['bypass']);
      expect(g.gateway.ops.cache!.redisState()).toEqual({ up: false, breaker: expect.stringMatching(/^(open|half-open)$/) });
      expect(await metric(g, 'igw_redis_breaker_open')).toBe(1);
      expect(await metric(g, 'igw_redis_up')).toBe(0);
      expect(await metric(g, 'igw_redis_breaker_transitions_total{to="open"}')).toBeGreaterThanOrEqual(1);
      expect(log.lines.some((l) => l.level === 'warn' && l.msg.startsWith('Redis circuit open'))).toBe(true);
      // while open, requests do not touch Redis at all: no further command fails
      const errors = await metric(g, 'igw_cache_errors_total{op="get"}');
      for (const address of holders.slice(2, 8)) expect(await both(address)).toEqual(['bypass', 'bypass']);
      expect(await metric(g, 'igw_cache_errors_total{op="get"}')).toBe(errors);
    } finally {
      redis.thaw();
    }
    await waitFor(async () => g.gateway.ops.cache!.redisState()?.breaker === 'closed', 10_000, 20);
    expect(log.lines.some((l) => l.level === 'info' && l.msg.startsWith('Redis circuit closed'))).toBe(true);
    expect(await metric(g, 'igw_redis_up')).toBe(1);
    expect(await both(holders[8]!)).toEqual(['miss', 'miss']);
    expect(await both(holders[8]!)).toEqual(['hit', 'hit']);
  });

  it('killed: answered without it, the breaker opens, and closes once a new Redis listens', async () => {
    await redis.kill();
    const seen = new Set<string>();
    for (const address of holders.slice(9, 12)) for (const outcome of await both(address)) seen.add(outcome);
    expect([...seen]).toEqual(['bypass']);
    await waitFor(async () => (await metric(g, 'igw_redis_breaker_open')) === 1, 5_000, 20);
    expect(await metric(g, 'igw_redis_up')).toBe(0);
    await redis.restart();
    await waitFor(async () => g.gateway.ops.cache!.redisState()?.breaker === 'closed' && (await metric(g, 'igw_redis_up')) === 1, 10_000, 20);
    expect(await both(holders[9]!)).toEqual(['miss', 'miss']);
    expect(await both(holders[9]!)).toEqual(['hit', 'hit']);
  });
});
