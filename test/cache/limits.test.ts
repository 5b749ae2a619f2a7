import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyVersion } from '../../src/cache/keys.js';
import { Fixture } from '../support/fixtures.js';
import { findRedis, sameData, sameText, waitFor } from '../support/ops.js';
import { gql, gqlGet, rpc } from '../support/http.js';
import { because, skipUnless } from '../support/skips.js';
import { startTestGateway, type TestGateway, useGateway } from '../support/gateway.js';

// The response cache is bounded in bytes: an answer over CACHE_MAX_ENTRY_BYTES is served but not stored
// (in memory or on Redis), the in-memory store never holds more than CACHE_MAX_BYTES (least recently
// used entries go first), and a hit is the stored text as it was sent the first time.

const redisUrl = await findRedis();
const tick = { chain: 'eth', protocol: 'erc-20', tick: 'huge' };
const holders = Array.from({ length: 300 }, (_, i) => `0xb16b${String(i).padStart(36, '0')}`);

const holdersQuery = `query Holders($n: Int!) {
  tick(chain: "eth", protocol: "erc-20", tick: "huge") { holders(first: $n) { edges { node { address balance } } } }
}`;
const small = '{ chains { chain } }';
const holdersCall = (n: number) => ({ jsonrpc: '2.0', id: 1, method: 'inds_getHoldersByTick', params: [n, 0, 'eth', 'erc-20', 'huge', 2] });

const scrape = async (live: TestGateway) => (await fetch(`${live.base}/metrics`)).text();
const sample = (text: string, name: string) => Number(/^(\S+) (\S+)$/m.exec(text.split('\n').filter((l) => l.startsWith(`${name} `))[0] ?? '')?.[2]);

// 64 KiB in all, 16 KiB per entry: 300 holders (~27 KB) are too big, 100 (~9 KB) fit, seven of them fill it
const limited = useGateway({
  load: async (db) => {
    const f = new Fixture();
    const t = f.tick(tick);
    holders.forEach((address, i) => f.mint(t, address, String(1_000_000 + i)));
    f.block('eth', '19000000', '2024-01-15T09:00:00.000Z', '2024-01-15T09:00:05.000Z');
    await f.load(db.sql);
  },
  config: { CACHE: true, CACHE_MAX_BYTES: 64 * 1024, CACHE_MAX_ENTRY_BYTES: 16 * 1024, MAX_PAGE_SIZE: 1000 },
});

describe('response cache limits (in memory)', () => {
  it('answers an answer over CACHE_MAX_ENTRY_BYTES in full but does not store it (GraphQL)', async () => {
    const first = await gql(limited.base, holdersQuery, { n: 300 });
    expect(first.status).toBe(200);
    expect(first.json.data.tick.holders.edges).toHaveLength(300);
    expect(first.text.length).toBeGreaterThan(16 * 1024);
    const again = await gql(limited.base, holdersQuery, { n: 300 });
    expect(again.headers.get('x-cache'), 'not stored: computed again').toBe('miss');
    // computed twice: the same data, and freshness.dataAgeSeconds may have crossed a second in between
    expect(sameData(again.json)).toEqual(sameData(first.json));
    // a small answer is stored as before
    await gql(limited.base, small);
    expect((await gql(limited.base, small)).headers.get('x-cache')).toBe('hit');
    expect(sample(await scrape(limited), 'igw_cache_oversized_total')).toBeGreaterThanOrEqual(2);
  });

  it('does not store an oversized JSON-RPC result either, and replies byte-identically', async () => {
    const big = await rpc(limited.base, holdersCall(300));
    expect(big.json.result.holders).toHaveLength(300);
    const bigAgain = await rpc(limited.base, holdersCall(300));
    expect(bigAgain.text).toBe(big.text);
    const smallCall = await rpc(limited.base, holdersCall(3));
    const smallAgain = await rpc(limited.base, holdersCall(3));
    expect(smallAgain.text).toBe(smallCall.text);
    const text = await scrape(limited);
    expect(text).toMatch(/igw_request_duration_seconds_count\{surface="rpc",operation="v2:inds_getHoldersByTick",cache="miss"\} 3/);
    expect(text).toMatch(/igw_request_duration_seconds_count\{surface="rpc",operation="v2:inds_getHoldersByTick",cache="hit"\} 1/);
  });

  it('keeps the in-memory total under CACHE_MAX_BYTES, evicting the least recently used entries', async () => {
    const sizes = Array.from({ length: 20 }, (_, i) => 80 + i);
    const firsts = new Map<number, string>();
    for (const n of sizes) {
      const reply = await gql(limited.base, holdersQuery, { n });
      expect(reply.headers.get('x-cache')).toBe('miss');
      firsts.set(n, reply.text);
      const stats = limited.gateway.ops.cache!.stats()!;
      expect(stats.bytes, `after ${n}`).toBeLessThanOrEqual(64 * 1024);
    }
    const stats = limited.gateway.ops.cache!.stats()!;
    expect(stats.entries).toBeGreaterThan(3);
    expect(stats.entries).toBeLessThan(sizes.length);
    // the newest are still there (and a hit is the very text first sent, its freshness that of the request),
    // the oldest were evicted
    const newest = await gql(limited.base, holdersQuery, { n: sizes.at(-1) });
    expect(newest.headers.get('x-cache')).toBe('hit');
    expect(sameText(newest.text)).toBe(sameText(firsts.get(sizes.at(-1)!)!));
    expect((await gql(limited.base, holdersQuery, { n: sizes[0] })).headers.get('x-cache')).toBe('miss');
    const text = await scrape(limited);
    expect(sample(text, 'igw_cache_bytes')).toBeLessThanOrEqual(64 * 1024);
    expect(sample(text, 'igw_cache_bytes')).toBeGreaterThan(32 * 1024);
  });

  it('serves a hit with the freshness of the request and an ETag, and 304 for a matching If-None-Match', async () => {
    const miss = await gql(limited.base, holdersQuery, { n: 5 });
    const hit = await gql(limited.base, holdersQuery, { n: 5 });
    expect(hit.headers.get('x-cache')).toBe('hit');
    expect(sameText(hit.text)).toBe(sameText(miss.text));
    expect(hit.json.extensions.freshness.indexedHeights.eth).toBe('19000000');
    const etag = hit.headers.get('etag')!;
    expect(etag).toBe(miss.headers.get('etag'));
    // (revalidation is a GET's: If-None-Match on a POST is ignored)
    expect((await gqlGet(limited.base, holdersQuery, { n: 5 }, { 'if-none-match': etag })).status).toBe(304);
    // another request's ETag is not this one's
    expect((await gqlGet(limited.base, holdersQuery, { n: 6 }, { 'if-none-match': etag })).status).toBe(200);
  });
});

describe('response cache limits (Redis)', skipUnless(redisUrl, because.noRedis), () => {
  let live: TestGateway;
  let redis: Redis;
  beforeAll(async () => {
    live = await startTestGateway(limited.db, { CACHE: true, REDIS_URL: redisUrl!, CACHE_MAX_ENTRY_BYTES: 16 * 1024 });
    redis = new Redis(redisUrl!);
  });
  afterAll(async () => {
    await live?.close();
    redis?.disconnect();
  });

  it('stores nothing over CACHE_MAX_ENTRY_BYTES on Redis', async () => {
    expect(live.gateway.ops.cache?.kind).toBe('redis');
    const prefix = `${live.gateway.ops.cache!.namespace}:${keyVersion(live.gateway.ops.watcher.current()!)}:`;
    const keys = async () => (await redis.keys(`${prefix}*`)).length;
    const before = await keys();
    await gql(live.base, holdersQuery, { n: 300 });
    await rpc(live.base, holdersCall(300));
    expect((await gql(live.base, holdersQuery, { n: 300 })).headers.get('x-cache')).toBe('miss');
    expect(await keys(), 'nothing stored for the two big answers').toBe(before);
    const small1 = await gql(live.base, holdersQuery, { n: 4 });
    await rpc(live.base, holdersCall(4));
    // writes to Redis are not awaited by the request
    await waitFor(async () => (await keys()) === before + 2);
    const hit = await gql(live.base, holdersQuery, { n: 4 });
    expect(hit.headers.get('x-cache')).toBe('hit');
    expect(sameText(hit.text)).toBe(sameText(small1.text));
    const stored = (await redis.keys(`${prefix}*`)).map((k) => redis.get(k));
    for (const text of await Promise.all(stored)) expect(text!.length).toBeLessThanOrEqual(16 * 1024);
  });
});
