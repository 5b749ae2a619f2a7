import http from 'node:http';
import { createClient, type Client } from 'graphql-sse';
import { afterAll, describe, expect, it } from 'vitest';
import { alice, Fixture } from '../support/fixtures.js';
import { startGatewayProcess } from '../support/gateway-process.js';
import { startRedis } from '../support/redis-server.js';
import { findRedis, indexMint, waitFor } from '../support/ops.js';
import { because, skipUnless } from '../support/skips.js';
import { startTestGateway, type TestGateway, useDatabase, useGateway } from '../support/gateway.js';

// Live updates end to end: a real SSE client (graphql-sse, the protocol yoga serves) against a listening
// gateway, and writes made the way the indexer makes them (row by row, triggers on, one transaction).

const tick = { chain: 'eth', protocol: 'erc-20', tick: 'live' };

const db = useDatabase({
  load: (fresh) => {
    const f = new Fixture();
    f.mint(f.tick({ ...tick, total_supply: '1000000' }), alice, '10');
    f.block('eth', '100', '2024-01-15T09:00:00.000Z', '2024-01-15T09:00:01.000Z');
    return f.load(fresh.sql);
  },
});

const clients: Client[] = [];
function sse(base: string): Client {
  const client = createClient({ url: `${base}/graphql`, retryAttempts: 0 });
  clients.push(client);
  return client;
}
afterAll(() => clients.forEach((c) => c.dispose()));

/** Subscribes and collects events; `ready` once the gateway has admitted the subscription. */
function collect(client: Client, query: string, variables: Record<string, unknown> = {}) {
  const events: any[] = [];
  let done = false;
  let failure: unknown = null;
  const stop = client.subscribe({ query, variables }, {
    next: (value) => void events.push(value),
    error: (error) => { failure = error; done = true; },
    complete: () => { done = true; },
  });
  return { events, stop, done: () => done, failure: () => failure };
}

async function whenSubscribed(live: TestGateway, n: number) {
  await waitFor(async () => live.gateway.live.hub.stats().subscriptions === n, 5_000);
}

describe('subscriptions over SSE', () => {
  const live = useGateway({ db, config: { CACHE: true } });

  it('delivers a newly indexed block within 1 s of its commit', async () => {
    const sub = collect(sse(live.base), 'subscription { blocks(chains: ["ETH"]) { chainName height time transactionCount inscriptionCount tickCount addressCount chain { name } } }');
    await whenSubscribed(live, 1);
    const committed = performance.now();
    await indexMint(db.sql, tick, alice, '5');
    const ms = await waitFor(async () => sub.events.length > 0, 1_000, 5);
    expect(performance.now() - committed).toBeLessThan(1_000);
    expect(ms).toBeLessThan(1_000);
    expect(sub.events[0]).toEqual({
      data: { blocks: { chainName: 'eth', height: '101', time: expect.any(String), transactionCount: 1, inscriptionCount: 1,
        tickCount: 1, addressCount: 1, chain: { name: 'Ethereum' } } },
    });
    sub.stop();
    await whenSubscribed(live, 0);
  });

  it('streams the movements of an address and of a tick, the tick with its stats after the event', async () => {
    const byAddress = collect(sse(live.base), `subscription($a: String!) { addressActivity(address: $a, chain: "eth") {
      address amount event tick { tick } } }`, { a: alice.toLowerCase() });
    const byTick = collect(sse(live.base), `subscription { tickActivity(chain: "eth", protocol: "erc-20", tick: "LIVE") {
      movement { amount event } tick { stats { minted } } } }`);
    await whenSubscribed(live, 2);
    await indexMint(db.sql, tick, alice, '7');
    await waitFor(async () => byAddress.events.length > 0 && byTick.events.length > 0, 1_000, 5);
    expect(byAddress.events[0]).toEqual({ data: { addressActivity: { address: alice, amount: '7', event: 'MINT', tick: { tick: 'live' } } } });
    const { minted } = (await db.sql<{ minted: string }[]>`SELECT minted::text FROM ticks WHERE tick = 'live'`)[0]!;
    expect(byTick.events[0]).toEqual({ data: { tickActivity: { movement: { amount: '7', event: 'MINT' }, tick: { stats: { minted } } } } });
    // another address's movement is not delivered to the first
    await indexMint(db.sql, tick, '0x9999000000000000000000000000000000000009', '1');
    await waitFor(async () => byTick.events.length === 2, 1_000, 5);
    expect(byAddress.events).toHaveLength(1);
    byAddress.stop();
    byTick.stop();
    await whenSubscribed(live, 0);
  });

  it('answers a query over SSE as before, and never caches a subscription', async () => {
    const reply = await fetch(`${live.base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: '{ chains { chain } }' }),
    });
    expect(reply.headers.get('content-type')).toContain('text/event-stream');
    expect(reply.headers.get('x-accel-buffering')).toBe('no'); // nginx passes events on unbuffered
    expect(await reply.text()).toContain('event: complete');
    // the same subscription twice: each gets live events, none is answered from the cache
    for (let round = 0; round < 2; round++) {
      const sub = collect(sse(live.base), 'subscription { blocks { height } }');
      await whenSubscribed(live, 1);
      await indexMint(db.sql, tick, alice, '1');
      await waitFor(async () => sub.events.length > 0, 1_000, 5);
      const { h } = (await db.sql<{ h: string }[]>`SELECT block_number::text AS h FROM indexed_blocks WHERE chain = 'eth'`)[0]!;
      expect(sub.events[0]).toEqual({ data: { blocks: { height: h } } });
      sub.stop();
      await whenSubscribed(live, 0);
    }
  });
  it('streams events uncompressed to a client that accepts gzip and brotli (a compressor would hold them back)', async () => {
    const url = new URL(`${live.base}/graphql`);
    const body = JSON.stringify({ query: 'subscription { blocks { height } }' });
    let received = '';
    let headers: http.IncomingHttpHeaders = {};
    const req = http.request({
      host: url.hostname, port: url.port, path: url.pathname, method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream', 'accept-encoding': 'br, gzip', 'content-length': Buffer.byteLength(body) },
    }, (res) => {
      headers = res.headers;
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => { received += chunk; });
    });
    req.on('error', () => {});
    req.end(body);
    try {
      await whenSubscribed(live, 1);
      await indexMint(db.sql, tick, alice, '1');
      await waitFor(async () => received.includes('"blocks"'), 1_000, 5);
      // yoga marks event streams `content-encoding: none`; either way no compressor touched the stream
      expect([undefined, 'none']).toContain(headers['content-encoding']);
      expect(received).toMatch(/event: next\ndata: \{"data":\{"blocks":\{"height":"\d+"\}\}\}/);
    } finally {
      req.destroy();
      await whenSubscribed(live, 0);
    }
  });
});

describe('limits', () => {
  it('caps subscriptions per client address, and frees a place when one ends', async () => {
    const live = await startTestGateway(db, { CACHE: true, SUBSCRIPTIONS_MAX_PER_CLIENT: 2 });
    try {
      const first = collect(sse(live.base), 'subscription { blocks { height } }');
      const second = collect(sse(live.base), 'subscription { blocks { height } }');
      await whenSubscribed(live, 2);
      const third = collect(sse(live.base), 'subscription { blocks { height } }');
      await waitFor(async () => third.done(), 3_000);
      expect(third.events[0].errors[0].extensions.code).toBe('TOO_MANY_REQUESTS');
      expect(live.gateway.live.open()).toBe(2);
      first.stop();
      await waitFor(async () => live.gateway.live.open() === 1, 3_000);
      const fourth = collect(sse(live.base), 'subscription { blocks { height } }');
      await whenSubscribed(live, 2);
      expect(fourth.events).toEqual([]);
      second.stop();
      fourth.stop();
    } finally {
      await live.close();
    }
  });

  it('drops a subscriber that leaves more than SUBSCRIPTIONS_MAX_QUEUE events unread, with an error event', async () => {
    const live = await startTestGateway(db, { CACHE: true, SUBSCRIPTIONS_MAX_QUEUE: 5 });
    try {
      const sub = collect(sse(live.base), `subscription($a: String!) { addressActivity(address: $a) { id } }`, { a: alice });
      await whenSubscribed(live, 1);
      // one statement inserting 50 movements: one notification, 50 events at once
      await db.sql`INSERT INTO address_txs (tick_id, address, tx_hash, amount, event, operate, created_at, updated_at)
        SELECT (SELECT id FROM ticks WHERE tick = 'live'), ${alice}, 'burst' || g, 1, 3, 'transfer', now(), now()
          FROM generate_series(1, 50) g`;
      await waitFor(async () => sub.done(), 3_000);
      const last = sub.events.at(-1);
      expect(last.errors[0].extensions.code).toBe('SLOW_CONSUMER');
      expect(sub.events.length).toBeLessThanOrEqual(7);
      expect(live.gateway.live.hub.stats().subscriptions).toBe(0);
      const metrics = await (await fetch(`${live.base}/metrics`)).text();
      expect(metrics).toMatch(/^igw_subscriptions_dropped_total 1$/m);
      expect(metrics).toMatch(/^igw_subscriptions_open\{field="addressActivity"\} 0$/m);
      expect(metrics).toMatch(/^igw_live_source\{mode="listen"\} 1$/m);
    } finally {
      await live.close();
    }
  });

  it('keeps a quiet stream open past the HTTP request and idle timeouts (heartbeats), then delivers', async () => {
    const live = await startTestGateway(db, { CACHE: true, HTTP_HEADERS_TIMEOUT_MS: 300, HTTP_REQUEST_TIMEOUT_MS: 500, HTTP_IDLE_TIMEOUT_MS: 800 });
    try {
      const sub = collect(sse(live.base), 'subscription { blocks { height } }');
      await whenSubscribed(live, 1);
      await new Promise((r) => setTimeout(r, 2_000)); // the timeouts' span, several times over
      expect(sub.done()).toBe(false);
      await indexMint(db.sql, tick, alice, '1');
      await waitFor(async () => sub.events.length > 0, 1_000, 5);
      expect(sub.events[0].data.blocks.height).toMatch(/^\d+$/);
      sub.stop();
    } finally {
      await live.close();
    }
  });

  it('ends every subscription cleanly (complete) when the gateway closes', async () => {
    const live = await startTestGateway(db, { CACHE: true });
    const subs = [collect(sse(live.base), 'subscription { blocks { height } }'),
      collect(sse(live.base), `subscription { tickActivity(chain: "eth", protocol: "erc-20", tick: "live") { tick { tick } } }`)];
    await whenSubscribed(live, 2);
    await live.close();
    await waitFor(async () => subs.every((s) => s.done()), 3_000);
    expect(subs.map((s) => s.failure())).toEqual([null, null]);
    expect(live.gateway.server.listening).toBe(false);
  });

  it('applies the per-request row limit per event, not over the stream', async () => {
    const live = await startTestGateway(db, { CACHE: true, REQUEST_MAX_ROWS: 2 });
    try {
      const sub = collect(sse(live.base), 'subscription { tickActivity(chain: "eth", protocol: "erc-20", tick: "live") { tick { tick } } }');
      await whenSubscribed(live, 1);
      for (let i = 0; i < 4; i++) await indexMint(db.sql, tick, alice, '1');
      await waitFor(async () => sub.events.length === 4, 2_000);
      expect(sub.events).toEqual(Array(4).fill({ data: { tickActivity: { tick: { tick: 'live' } } } }));
      sub.stop();
    } finally {
      await live.close();
    }
  });

  it('rejects a subscription whose event selection is over the cost limit', async () => {
    const live = await startTestGateway(db, { CACHE: true, GRAPHQL_MAX_COST: 5 });
    try {
      const sub = collect(sse(live.base), 'subscription { blocks { height chain { name chain logo ext latestBlock { number } } } }');
      await waitFor(async () => sub.done(), 3_000);
      expect(sub.events[0].errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    } finally {
      await live.close();
    }
  });
});

describe('shared LISTEN through Redis', async () => {
  const redisUrl = await findRedis();
  it('one LISTEN for two gateways, both deliver; a dead Redis falls back to a direct LISTEN', skipUnless(redisUrl, because.noRedis), async () => {
    const a = await startTestGateway(db, { CACHE: true, REDIS_URL: redisUrl! });
    const b = await startTestGateway(db, { CACHE: true, REDIS_URL: redisUrl! });
    try {
      expect([a.gateway.live.source!.mode(), b.gateway.live.source!.mode()].sort()).toEqual(['redis-follower', 'redis-leader']);
      // only the lock holder LISTENs for live events
      expect([a.gateway.live.source!.listening(), b.gateway.live.source!.listening()].filter(Boolean)).toHaveLength(1);
      const subs = [collect(sse(a.base), 'subscription { blocks { height } }'), collect(sse(b.base), 'subscription { blocks { height } }')];
      await whenSubscribed(a, 1);
      await whenSubscribed(b, 1);
      await indexMint(db.sql, tick, alice, '1');
      await waitFor(async () => subs.every((s) => s.events.length === 1), 1_000, 5);
      expect(subs[0]!.events).toEqual(subs[1]!.events);
      subs.forEach((s) => s.stop());
    } finally {
      await a.close();
      await b.close();
    }
    const dead = await startTestGateway(db, { CACHE: true, REDIS_URL: 'redis://127.0.0.1:1' });
    try {
      expect(dead.gateway.live.source!.mode()).toBe('listen');
      expect(dead.gateway.live.source!.listening()).toBe(true);
      const sub = collect(sse(dead.base), 'subscription { blocks { height } }');
      await whenSubscribed(dead, 1);
      await indexMint(db.sql, tick, alice, '1');
      await waitFor(async () => sub.events.length === 1, 1_000, 5);
      sub.stop();
    } finally {
      await dead.close();
    }
  });
});

describe('shared LISTEN: handover and a Redis outage', () => {
  it('a stopped holder hands the LISTEN over; when Redis dies every gateway LISTENs itself and still delivers', async () => {
    const redis = await startRedis();
    const a = await startTestGateway(db, { CACHE: true, REDIS_URL: redis.url });
    const b = await startTestGateway(db, { CACHE: true, REDIS_URL: redis.url });
    const c = await startTestGateway(db, { CACHE: true, REDIS_URL: redis.url });
    try {
      const gateways = [a, b, c];
      const leader = gateways.find((g) => g.gateway.live.source!.mode() === 'redis-leader')!;
      const rest = gateways.filter((g) => g !== leader);
      expect(rest.map((g) => g.gateway.live.source!.mode())).toEqual(['redis-follower', 'redis-follower']);
      await leader.close(); // releases the lock: another gateway takes it at its next renewal (every 2 s)
      // a gateway reports itself the holder only once its LISTEN is open (it takes the lock first, then LISTENs)
      await waitFor(async () => rest.some((g) => g.gateway.live.source!.mode() === 'redis-leader'), 5_000);
      const holder = rest.find((g) => g.gateway.live.source!.mode() === 'redis-leader')!;
      expect(holder.gateway.live.source!.listening()).toBe(true);
      expect(rest.filter((g) => g.gateway.live.source!.listening())).toHaveLength(1);
      const subs = rest.map((g) => collect(sse(g.base), 'subscription { blocks { height } }'));
      for (const g of rest) await whenSubscribed(g, 1);
      await indexMint(db.sql, tick, alice, '1');
      await waitFor(async () => subs.every((s) => s.events.length === 1), 1_000, 5);

      await redis.kill();
      await waitFor(async () => rest.every((g) => g.gateway.live.source!.mode() === 'listen' && g.gateway.live.source!.listening()), 5_000);
      await indexMint(db.sql, tick, alice, '1');
      await waitFor(async () => subs.every((s) => s.events.length === 2), 1_000, 5);
      expect(subs[0]!.events).toEqual(subs[1]!.events);
      // Redis back: one holder again, and the follower hears it through its channel, subscribed anew
      await redis.restart();
      await waitFor(async () => rest.map((g) => g.gateway.live.source!.mode()).sort().join() === 'redis-follower,redis-leader', 15_000, 20);
      await indexMint(db.sql, tick, alice, '1');
      await waitFor(async () => subs.every((s) => s.events.length === 3), 3_000, 5);
      subs.forEach((s) => s.stop());
    } finally {
      await Promise.all([a.close(), b.close(), c.close()]).catch(() => {});
      await redis.stop();
    }
  });
});

describe('SIGTERM on the real process', () => {
  it('ends open subscriptions with complete and exits 0 (drained, not cut at the timeout)', async () => {
    const gateway = await startGatewayProcess({ DATABASE_URL: db.target.url!, CACHE: 'false', DB_POOL_MAX: '2', SHUTDOWN_TIMEOUT_MS: '20000' }, 60_000);
    try {
      const subs = [collect(sse(gateway.base), 'subscription { blocks { height } }'), collect(sse(gateway.base), 'subscription { blocks { height } }')];
      // admitted (the process's metrics say so), then delivering
      await waitFor(async () => /^igw_subscriptions_open\{field="blocks"\} 2$/m.test(await (await fetch(`${gateway.base}/metrics`)).text()), 10_000, 50);
      await indexMint(db.sql, tick, alice, '1');
      await waitFor(async () => subs.every((s) => s.events.length === 1), 10_000);
      // exit code 0: drained (a drain cut at SHUTDOWN_TIMEOUT_MS exits 1)
      expect(await gateway.stop(30_000)).toEqual({ code: 0, signal: null });
      await waitFor(async () => subs.every((s) => s.done()), 3_000);
      expect(subs.map((s) => s.failure())).toEqual([null, null]);
    } finally {
      await gateway.stop();
    }
  }, 90_000);
});

describe('bulk loads', () => {
  it('send no notification with session_replication_role = replica', async () => {
    const seen: string[] = [];
    const listener = await db.sql.listen('igw_live', (p) => void seen.push(p));
    await db.sql.begin(async (tx) => {
      await tx`SET LOCAL session_replication_role = replica`;
      await tx`UPDATE indexed_blocks SET block_number = block_number + 1 WHERE chain = 'eth'`;
    });
    await indexMint(db.sql, tick, alice, '1'); // a normal write after it: its notifications arrive, the bulk one did not
    await waitFor(async () => seen.length >= 2, 2_000);
    await listener.unlisten();
    expect(seen.map((p) => Object.keys(JSON.parse(p) as object)[0]).sort()).toEqual(['b', 'm']);
  });
});
