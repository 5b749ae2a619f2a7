import { performance } from 'node:perf_hooks';
import { describe, expect, it } from 'vitest';
import { findServer } from '../support/db.js';
import { Fixture } from '../support/fixtures.js';
import { dataVersion, indexMint, sameData, waitFor } from '../support/ops.js';
import { gql } from '../support/http.js';
import { because, skipUnless } from '../support/skips.js';
import { startTestGateway, type TestGateway, useDatabase, useGateway } from '../support/gateway.js';

// The GraphQL response cache on a real database: hits, invalidation by a write through the indexer's
// path (LISTEN/NOTIFY, and the polling fallback alone), isolation between requests, switching it off.

const onServer = (await findServer()) !== null;

const holders = Array.from({ length: 12 }, (_, i) => `0xcafe${String(i).padStart(36, '0')}`);
// look-alikes of holders[1]: a prefix, a case variant, a longer one
const lookalikes = [holders[1]!.slice(0, -1), holders[1]!.toUpperCase().replace('0X', '0x'), `${holders[1]}0`];
const tick = { chain: 'eth', protocol: 'erc-20', tick: 'cach' };

const balancesQuery = `query Balances($address: String!) {
  balances(address: $address, first: 10) { totalCount edges { node { address balance tick { tick } } } }
}`;

const db = useDatabase({
  load: async (db) => {
    const f = new Fixture();
    const t = f.tick(tick);
    const other = f.tick({ chain: 'eth', protocol: 'erc-20', tick: 'othr' });
    holders.forEach((address, i) => {
      f.mint(t, address, String(1000 + i));
      if (i % 3 === 0) f.mint(other, address, String(7 * (i + 1)));
    });
    f.block('eth', '19000000', '2024-01-15T09:00:00.000Z', '2024-01-15T09:00:05.000Z');
    f.block('bsc', '35000000', '2024-01-15T09:00:00.000Z', '2024-01-15T09:00:03.000Z');
    await f.load(db.sql);
  },
});
// the poll timer (500 ms by default) could see a write before its NOTIFY arrives on a loaded machine and
// take the credit; at 60 s the LISTEN test below measures LISTEN/NOTIFY alone (the fallback has its own test)
const cached = useGateway({ db, config: { CACHE: true, DATA_VERSION_POLL_MS: 60_000 } });
const plain = useGateway({ db, config: { CACHE: false } });

describe('GraphQL response cache', () => {
  it('serves a repeated query from the cache, without a statement', async () => {
    const first = await gql(cached.base, balancesQuery, { address: holders[0] });
    expect(first.status).toBe(200);
    expect(first.headers.get('x-cache')).toBe('miss');
    const statements = cached.statements.length;
    const second = await gql(cached.base, balancesQuery, { address: holders[0] });
    expect(second.headers.get('x-cache')).toBe('hit');
    expect(cached.statements.length, 'a hit sends nothing to the database').toBe(statements);
    expect(sameData(second.json)).toEqual(sameData(first.json));
    expect(second.json.data.balances.edges.map((e: any) => e.node.balance)).toEqual(['1000', '7']);
  });

  it('never serves the answer for one address to another', async () => {
    const addresses = [...holders, ...lookalikes];
    const truth = new Map<string, unknown>();
    for (const address of addresses) truth.set(address, (await gql(plain.base, balancesQuery, { address })).json.data);
    // three rounds in shuffled order, concurrently: the first fills the cache, the others are served from it
    for (let round = 0; round < 3; round++) {
      const order = [...addresses].sort(() => Math.random() - 0.5);
      const replies = await Promise.all(order.map((address) => gql(cached.base, balancesQuery, { address })));
      replies.forEach((reply, i) => {
        expect(reply.json.data, `round ${round}, ${order[i]}`).toEqual(truth.get(order[i]!));
        if (round > 0) expect(reply.headers.get('x-cache')).toBe('hit');
      });
    }
    // the same request spelled as a literal, or with another operation name, is another entry — never a wrong one
    for (const address of addresses.slice(0, 4)) {
      const literal = await gql(cached.base, `{ balances(address: "${address}", first: 10) { totalCount edges { node { address balance tick { tick } } } } }`);
      expect(literal.json.data).toEqual(truth.get(address));
    }
    expect(new Set([...truth.values()].map((d) => JSON.stringify(d))).size, 'the addresses really differ').toBeGreaterThan(10);
  });

  it('keys on the variables, whatever their order, and on nothing a client can confuse', async () => {
    const q = 'query Two($a: String!, $b: String!) { x: balances(address: $a, first: 1) { totalCount } y: balances(address: $b, first: 1) { totalCount } }';
    const ab = await gql(cached.base, q, { a: holders[0], b: holders[2] });
    const ba = await gql(cached.base, q, { b: holders[2], a: holders[0] });
    expect(ba.headers.get('x-cache')).toBe('hit');
    expect(ba.json.data).toEqual(ab.json.data);
    const swapped = await gql(cached.base, q, { a: holders[2], b: holders[0] });
    expect(swapped.headers.get('x-cache')).toBe('miss');
    expect(swapped.json.data).toEqual({ x: ab.json.data.y, y: ab.json.data.x });
  });

  it('adds the data version and the indexed height per chain to every response, cached or not', async () => {
    const version = await dataVersion(db.sql);
    for (let i = 0; i < 2; i++) {
      const reply = await gql(cached.base, '{ chains { chain } }');
      expect(reply.headers.get('x-cache')).toBe(i === 0 ? 'miss' : 'hit');
      expect(reply.json.extensions.freshness).toEqual({
        dataVersion: version,
        indexedHeights: { eth: '19000000', avalanche: null, arbitrum: null, bsc: '35000000', fantom: null, polygon: null, btc: null },
        dataAgeSeconds: expect.any(Number),
      });
    }
  });

  it('does not cache errors', async () => {
    const bad = '{ balances(address: "0x1", first: -5) { totalCount } }';
    const first = await gql(cached.base, bad);
    const second = await gql(cached.base, bad);
    expect(first.json.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    expect(second.headers.get('x-cache')).toBe('miss');
  });

  it('a write through the indexer path invalidates within 1 s (LISTEN/NOTIFY)', skipUnless(onServer, because.noNotify), async () => {
    await expectInvalidation(cached, holders[4]!);
    const scrape = await (await fetch(`${cached.base}/metrics`)).text();
    expect(scrape).toMatch(/igw_data_version_changes_total\{via="notify"\} [1-9]/);
  });

  it('with LISTEN off, the polling fallback alone invalidates within 1 s', async () => {
    const polling = await startTestGateway(db, { CACHE: true, DATA_VERSION_LISTEN: false, DATA_VERSION_POLL_MS: 200 });
    try {
      expect(polling.gateway.ops.watcher.listening()).toBe(false);
      await expectInvalidation(polling, holders[5]!);
      const scrape = await (await fetch(`${polling.base}/metrics`)).text();
      expect(scrape).toMatch(/igw_data_version_changes_total\{via="poll"\} [1-9]/);
      expect(scrape).not.toMatch(/via="notify"/);
    } finally {
      await polling.close();
    }
  });

  it('answers an old ETag with fresh data, not 304, once the data changed', async () => {
    const first = await gql(cached.base, balancesQuery, { address: holders[6] });
    const etag = first.headers.get('etag');
    expect(etag).toBeTruthy();
    // revalidated by GET (If-None-Match on a POST is ignored: src/cache/graphql.ts)
    const revalidate = (tag: string) => fetch(`${cached.base}/graphql?query=${encodeURIComponent(balancesQuery)}` +
      `&variables=${encodeURIComponent(JSON.stringify({ address: holders[6] }))}`, { headers: { accept: 'application/json', 'if-none-match': tag } });
    const unchanged = await revalidate(etag!);
    expect(unchanged.status).toBe(304);
    await indexMint(db.sql, tick, holders[6]!, '1');
    await waitFor(async () => (await gql(cached.base, '{ __typename }')).json.extensions.freshness.dataVersion === (await dataVersion(db.sql)));
    const after = await revalidate(etag!);
    expect(after.status).toBe(200);
    expect((await after.json()).data.balances.edges[0].node.balance).toBe('1007');
  });

  it('can be switched off (CACHE=false): every request runs', async () => {
    const before = plain.statements.length;
    const a = await gql(plain.base, balancesQuery, { address: holders[7] });
    const middle = plain.statements.length;
    const b = await gql(plain.base, balancesQuery, { address: holders[7] });
    expect(a.headers.get('x-cache')).toBe('bypass');
    expect(b.headers.get('x-cache')).toBe('bypass');
    expect(middle).toBeGreaterThan(before);
    expect(plain.statements.length).toBeGreaterThan(middle);
    expect(plain.gateway.ops.cache).toBeNull();
    expect(b.json.data).toEqual(a.json.data);
    expect(b.json.extensions.freshness.dataVersion).toBe(await dataVersion(db.sql));
    const scrape = await (await fetch(`${plain.base}/metrics`)).text();
    expect(scrape).not.toMatch(/igw_cache_lookups_total\{/);
  });
});

/** Fills the cache for `address`, mints to it the indexer's way, and times how long stale answers last. */
async function expectInvalidation(live: TestGateway, address: string) {
  const balanceOf = (json: any) => json.data.balances.edges.find((e: any) => e.node.tick.tick === tick.tick)?.node.balance;
  const before = await gql(live.base, balancesQuery, { address });
  const again = await gql(live.base, balancesQuery, { address });
  expect(again.headers.get('x-cache')).toBe('hit');
  const old = BigInt(balanceOf(before.json));
  await indexMint(db.sql, tick, address, '5');
  const committed = performance.now();
  let fresh: any;
  const ms = await waitFor(async () => {
    fresh = (await gql(live.base, balancesQuery, { address })).json;
    return balanceOf(fresh) !== old.toString();
  }, 2_000, 5);
  expect(performance.now() - committed).toBeLessThan(1_000);
  expect(BigInt(balanceOf(fresh))).toBe(old + 5n);
  expect(fresh.extensions.freshness.dataVersion).toBe(await dataVersion(db.sql));
  expect(fresh.extensions.freshness.indexedHeights.eth).not.toBe(before.json.extensions.freshness.indexedHeights.eth);
  // and the new answer is cached in turn
  expect((await gql(live.base, balancesQuery, { address })).headers.get('x-cache')).toBe('hit');
  return ms;
}
