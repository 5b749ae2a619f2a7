import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '../support/db.js';
import { Fixture } from '../support/fixtures.js';
import { findRedis, indexMint, sameData, waitFor } from '../support/ops.js';
import { gql, rpc } from '../support/http.js';
import { because, skipUnless } from '../support/skips.js';
import { startTestGateway, useDatabase, type TestGateway } from '../support/gateway.js';

// Two gateway replicas on one Redis: one cache (an entry stored by one is a hit on the other) and one
// invalidation (each learns the new data version from the database). Skipped without a Redis.

const redisUrl = await findRedis();
const holders = Array.from({ length: 8 }, (_, i) => `0xd00d${String(i).padStart(36, '0')}`);
const tick = { chain: 'avalanche', protocol: 'asc-20', tick: 'shrd' };
const balancesQuery = 'query B($address: String!) { balances(address: $address, first: 5) { edges { node { balance tick { tick } } } } }';
const balanceCall = (address: string, id = 1) => ({ jsonrpc: '2.0', id, method: 'inds_getBalancesByAddress', params: [5, 0, address, '', '', '', '', 2] });

/** The holders' balances, each `offset` above 100, 200 …; a `load` for useDatabase. */
const rows = (offset: number) => (db: TestDatabase): Promise<void> => {
  const f = new Fixture();
  const t = f.tick(tick);
  holders.forEach((address, i) => f.mint(t, address, String(100 * (i + 1) + offset)));
  f.block('avalanche', '42000000', '2024-01-15T09:00:00.000Z', '2024-01-15T09:00:02.000Z');
  return f.load(db.sql);
};

describe('response cache on Redis, shared by two gateways', skipUnless(redisUrl, because.noRedis), () => {
  const db = useDatabase({ load: rows(0) });
  let a: TestGateway;
  let b: TestGateway;
  let plain: TestGateway;
  let redis: Redis;

  beforeAll(async () => {
    const config = { REDIS_URL: redisUrl!, CACHE_TTL_MS: 30_000 };
    [a, b, plain] = await Promise.all([startTestGateway(db, { CACHE: true, ...config }), startTestGateway(db, { CACHE: true, ...config }), startTestGateway(db, { CACHE: false })]);
    redis = new Redis(redisUrl!);
  });
  afterAll(async () => {
    await Promise.all([a?.close(), b?.close(), plain?.close()]);
    redis?.disconnect();
  });

  it('uses Redis', () => {
    expect(a.gateway.ops.cache?.kind).toBe('redis');
    expect(b.gateway.ops.cache?.namespace).toBe(a.gateway.ops.cache?.namespace);
  });

  it('an entry stored by one gateway is a hit on the other (GraphQL and JSON-RPC)', async () => {
    const first = await gql(a.base, balancesQuery, { address: holders[0] });
    expect(first.headers.get('x-cache')).toBe('miss');
    const statements = b.statements.length;
    const onB = await gql(b.base, balancesQuery, { address: holders[0] });
    expect(onB.headers.get('x-cache')).toBe('hit');
    expect(sameData(onB.json)).toEqual(sameData(first.json));
    expect(b.statements.length, 'B answered without its database').toBe(statements);

    const call = await rpc(a.base, balanceCall(holders[0]!));
    const before = b.statements.length;
    const callOnB = await rpc(b.base, balanceCall(holders[0]!));
    expect(callOnB.text).toBe(call.text);
    expect(b.statements.length).toBe(before);
    const keys = await redis.keys(`${a.gateway.ops.cache!.namespace}:*`);
    expect(keys.some((k) => k.includes(':gql:'))).toBe(true);
    expect(keys.some((k) => k.includes(':rpc:'))).toBe(true);
    // entries expire; no per-type sets are left behind
    expect(await redis.pttl(keys[0]!)).toBeGreaterThan(0);
    expect(await redis.exists('Balance', 'Query', 'BalanceConnection')).toBe(0);
  });

  it('one write through the indexer path invalidates both within 1 s', async () => {
    const address = holders[1]!;
    for (const g of [a, b]) await gql(g.base, balancesQuery, { address });
    expect((await gql(b.base, balancesQuery, { address })).headers.get('x-cache')).toBe('hit');
    await indexMint(db.sql, tick, address, '9');
    const expected = '209';
    const balanceOn = async (g: TestGateway) => (await gql(g.base, balancesQuery, { address })).json.data.balances.edges[0].node.balance;
    const [msA, msB] = await Promise.all([a, b].map((g) => waitFor(async () => (await balanceOn(g)) === expected, 2_000, 5)));
    expect(msA).toBeLessThan(1_000);
    expect(msB).toBeLessThan(1_000);
    // and the fresh answer is shared again
    const fresh = await gql(a.base, balancesQuery, { address: holders[2] });
    expect(fresh.headers.get('x-cache')).toBe('miss');
    expect((await gql(b.base, balancesQuery, { address: holders[2] })).headers.get('x-cache')).toBe('hit');
  });

  it('never serves one address the answer for another, across replicas', async () => {
    const truth = await Promise.all(holders.map((address, i) => rpc(plain.base, balanceCall(address, i))));
    for (let round = 0; round < 3; round++) {
      const replies = await Promise.all(holders.map((address, i) => rpc((i + round) % 2 ? a.base : b.base, balanceCall(address, i))));
      replies.forEach((reply, i) => expect(reply.text, `round ${round} ${holders[i]}`).toBe(truth[i]!.text));
      const graphs = await Promise.all(holders.map((address, i) => gql((i + round) % 2 ? b.base : a.base, balancesQuery, { address })));
      graphs.forEach((reply, i) => expect(reply.json.data.balances.edges[0].node.balance).toBe(truth[i]!.json.result.inscriptions[0].balance));
    }
  });

  it('two databases on one Redis do not share entries', async () => {
    const other = await createTestDatabase();
    await rows(1)(other); // same rows, every balance one higher
    const g = await startTestGateway(other, { CACHE: true, REDIS_URL: redisUrl!, CACHE_TTL_MS: 30_000 });
    try {
      await gql(a.base, balancesQuery, { address: holders[3] });
      const reply = await gql(g.base, balancesQuery, { address: holders[3] });
      expect(reply.headers.get('x-cache')).toBe('miss');
      expect(reply.json.data.balances.edges[0].node.balance).toBe('401');
    } finally {
      await g.close();
      await other.close();
    }
  });
});

describe('response cache with Redis unreachable', () => {
  const db = useDatabase({ load: rows(0) });
  let g: TestGateway;
  beforeAll(async () => {
    // no local level in front: what reaches the database when Redis cannot be used (the local level: test/cache/two-level.test.ts)
    g = await startTestGateway(db, { CACHE: true, REDIS_URL: 'redis://127.0.0.1:1', CACHE_LOCAL_MAX_BYTES: 0 });
  });
  afterAll(async () => {
    await g?.close();
  });

  it('answers correctly without it and counts the failures', async () => {
    for (let i = 0; i < 2; i++) {
      const reply = await gql(g.base, balancesQuery, { address: holders[4] });
      expect(reply.status).toBe(200);
      expect(reply.json.data.balances.edges[0].node.balance).toBe('500');
      // answered without the cache: neither looked up nor stored
      expect(reply.headers.get('x-cache')).toBe('bypass');
      const call = await rpc(g.base, balanceCall(holders[4]!));
      expect(call.json.result.inscriptions[0].balance).toBe('500');
      expect(call.headers.get('x-cache')).toBe('bypass');
    }
    const scrape = await (await fetch(`${g.base}/metrics`)).text();
    expect(scrape).toMatch(/igw_cache_errors_total\{op="(get|set|connect|connection)"\} [1-9]/);
  });
});
