import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Fixture } from '../support/fixtures.js';
import { indexMint, waitFor } from '../support/ops.js';
import { gql, rpc } from '../support/http.js';
import { startRedis, type OwnRedis } from '../support/redis-server.js';
import { startTestGateway, type TestGateway, useDatabase } from '../support/gateway.js';

// The two-level cache: an in-process level in front of a real redis-server of the test's own. Answers go
// to both levels, a Redis hit is copied into the local one, and while Redis is killed or frozen the local
// level keeps answering what the gateway answered before, so those requests never reach the database.
// Both levels take and answer only keys of the current data version: after a write neither serves the
// old answer.

const holders = Array.from({ length: 6 }, (_, i) => `0x2e7e1${String(i).padStart(35, '0')}`);
const tick = { chain: 'avalanche', protocol: 'asc-20', tick: 'lvls' };
const balancesQuery = 'query B($address: String!) { balances(address: $address, first: 5) { edges { node { balance tick { tick } } } } }';
const balanceCall = (address: string) => ({ jsonrpc: '2.0', id: 1, method: 'inds_getBalancesByAddress', params: [5, 0, address, '', '', '', '', 2] });

async function counter(g: TestGateway, name: string): Promise<number> {
  const line = (await (await fetch(`${g.base}/metrics`)).text()).split('\n').find((l) => l.startsWith(`${name} `));
  return line === undefined ? Number.NaN : Number(line.slice(name.length + 1));
}

describe('two-level response cache (in-process in front of Redis)', () => {
  const db = useDatabase();
  let redis: OwnRedis;
  let a: TestGateway;
  let b: TestGateway;

  beforeAll(async () => {
    const f = new Fixture();
    const t = f.tick(tick);
    holders.forEach((address, i) => f.mint(t, address, String(10 * (i + 1))));
    f.block('avalanche', '42000000', '2024-01-15T09:00:00.000Z', '2024-01-15T09:00:02.000Z');
    await f.load(db.sql);
    redis = await startRedis();
    const config = { REDIS_URL: redis.url, REDIS_BREAKER_OPEN_MS: 300 };
    [a, b] = await Promise.all([startTestGateway(db, { CACHE: true, ...config }), startTestGateway(db, { CACHE: true, ...config })]);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close()]);
    await redis?.stop();
  });

  /**
   * A GraphQL query and a JSON-RPC call for `address` on `g`: their x-cache, and the balance both answered
   * ('differ' when they did not: a write landed between them).
   */
  async function both(g: TestGateway, address: string) {
    const query = await gql(g.base, balancesQuery, { address });
    const call = await rpc(g.base, balanceCall(address));
    expect(query.status).toBe(200);
    const [fromQuery, fromCall] = [query.json.data.balances.edges[0].node.balance as string, call.json.result.inscriptions[0].balance as string];
    return { cache: [query.headers.get('x-cache'), call.headers.get('x-cache')], balance: fromQuery === fromCall ? fromQuery : 'differ' };
  }

  it('Redis up: an answer stored by one gateway is a Redis hit on the other, then a local hit there', async () => {
    expect((await both(a, holders[0]!)).cache).toEqual(['miss', 'miss']);
    const statements = b.statements.length;
    const local = await counter(b, 'igw_cache_local_hits_total');
    expect((await both(b, holders[0]!)).cache).toEqual(['hit', 'hit']);
    expect(await counter(b, 'igw_cache_local_hits_total')).toBe(local); // both from Redis…
    expect((await both(b, holders[0]!)).cache).toEqual(['hit', 'hit']);
    expect(await counter(b, 'igw_cache_local_hits_total')).toBe(local + 2); // …then from its own level
    expect(b.statements.length).toBe(statements);
  });

  it('Redis killed: what a gateway answered before is answered from its local level, without the database; new answers are kept there', async () => {
    await both(a, holders[1]!);
    await both(a, holders[2]!);
    await redis.kill();
    try {
      await waitFor(async () => a.gateway.ops.cache!.redisState()?.up === false, 5_000, 20);
      const statements = a.statements.length;
      expect((await both(a, holders[1]!)).cache).toEqual(['hit', 'hit']);
      expect((await both(a, holders[2]!)).cache).toEqual(['hit', 'hit']);
      expect(a.statements.length).toBe(statements);
      // a new request: computed once, then a local hit
      expect((await both(a, holders[3]!)).cache).toEqual(['miss', 'miss']);
      const computed = a.statements.length;
      expect(computed).toBeGreaterThan(statements);
      expect((await both(a, holders[3]!)).cache).toEqual(['hit', 'hit']);
      expect(a.statements.length).toBe(computed);
    } finally {
      await redis.restart();
    }
    await waitFor(async () => a.gateway.ops.cache!.redisState()?.up === true, 10_000, 20);
  });

  it('never stale at either level: after a write neither the local level nor Redis serves the old answer', async () => {
    const address = holders[4]!;
    const before = (await both(a, address)).balance;
    expect((await both(a, address)).cache).toEqual(['hit', 'hit']); // local
    expect((await both(b, address)).cache).toEqual(['hit', 'hit']); // Redis, copied locally
    await indexMint(db.sql, tick, address, '7');
    const expected = String(Number(before) + 7);
    for (const g of [a, b]) {
      await waitFor(async () => (await both(g, address)).balance === expected, 3_000, 10);
      expect(await both(g, address)).toEqual({ cache: ['hit', 'hit'], balance: expected });
    }
    // and with Redis frozen (hung) the local level still answers only the current version
    redis.freeze();
    try {
      await indexMint(db.sql, tick, address, '1');
      const newest = String(Number(expected) + 1);
      await waitFor(async () => (await both(a, address)).balance === newest, 3_000, 10);
      expect(await both(a, address)).toEqual({ cache: ['hit', 'hit'], balance: newest });
    } finally {
      redis.thaw();
    }
  });
});
