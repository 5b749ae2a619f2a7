import { connect } from 'node:net';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildInfo } from '../../src/observability/build.js';
import { Fixture } from '../support/fixtures.js';
import { waitFor } from '../support/ops.js';
import { rpc } from '../support/http.js';
import { startRedis, type OwnRedis } from '../support/redis-server.js';
import { startTestGateway, type TestGateway, useDatabase } from '../support/gateway.js';

// The metrics an operator runs production on, each read from a real gateway's /metrics with a sensible
// value: build, data age per chain, LISTEN state, Redis state, requests in flight, the pool's real state.

const holders = Array.from({ length: 6 }, (_, i) => `0x9a9e${String(i).padStart(36, '0')}`);
const tick = { chain: 'avalanche', protocol: 'asc-20', tick: 'mtrx' };
const balanceCall = (address: string, id = 1) => ({ jsonrpc: '2.0', id, method: 'inds_getBalancesByAddress', params: [5, 0, address, '', '', '', '', 2] });

async function scrape(g: TestGateway): Promise<string> {
  return (await fetch(`${g.base}/metrics`)).text();
}

function value(text: string, series: string): number | undefined {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

describe('production metrics', () => {
  const db = useDatabase();
  let redis: OwnRedis;
  let g: TestGateway;
  let polling: TestGateway;
  let small: TestGateway;

  beforeAll(async () => {
    const f = new Fixture();
    const t = f.tick(tick);
    holders.forEach((address, i) => f.mint(t, address, String(i + 1)));
    f.block('avalanche', '42000000', '2024-01-15T09:00:00.000Z', '2024-01-15T09:00:02.000Z');
    f.block('eth', '19000000', '2024-01-15T08:00:00.000Z', '2024-01-15T08:00:01.000Z');
    await f.load(db.sql);
    redis = await startRedis();
    [g, polling, small] = await Promise.all([
      startTestGateway(db, { CACHE: true, REDIS_URL: redis.url }),
      startTestGateway(db, { CACHE: true, DATA_VERSION_LISTEN: false, DATA_VERSION_POLL_MS: 100 }),
      startTestGateway(db, { CACHE: false, DB_POOL_MAX: 2, REQUEST_MAX_CONCURRENT_STATEMENTS: 1 }),
    ]);
  });
  afterAll(async () => {
    await Promise.all([g?.close(), polling?.close(), small?.close()]);
    await redis?.stop();
  });

  it('igw_build_info: the package version and the commit', async () => {
    const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
    const text = await scrape(g);
    const match = /^igw_build_info\{version="([^"]+)",commit="([^"]+)"\} 1$/m.exec(text);
    expect(match?.[1]).toBe(version);
    expect(match?.[2]).toBe(buildInfo().commit);
    // from this checkout: git's commit; in an image: the environment's
    expect(buildInfo().commit).toMatch(/^[0-9a-f]{12}$|^unknown$/);
    expect(buildInfo({ GIT_COMMIT: 'abc1234' })).toEqual({ version, commit: 'abc1234' });
    expect(buildInfo({ BUILD_COMMIT: 'def5678' }).commit).toBe('def5678');
    expect(buildInfo({ GIT_COMMIT: 'not a "commit"' }).commit).not.toContain('"');
  });

  it('igw_data_age_seconds per chain: now minus the newest indexed block time, following the indexer', async () => {
    const expectedAge = (iso: string) => (Date.now() - Date.parse(iso)) / 1000;
    const text = await scrape(g);
    const avalanche = value(text, 'igw_data_age_seconds{chain="avalanche"}')!;
    expect(avalanche).toBeGreaterThan(expectedAge('2024-01-15T09:00:00.000Z') - 60);
    expect(avalanche).toBeLessThanOrEqual(expectedAge('2024-01-15T09:00:00.000Z') + 1);
    // eth's block is an hour older
    expect(value(text, 'igw_data_age_seconds{chain="eth"}')! - avalanche).toBeGreaterThan(3_590);
    // chains without an indexed block have no age
    expect(text).not.toMatch(/igw_data_age_seconds\{chain="btc"\}/);
    // the indexer catches up: a block 30 s old
    await db.sql`UPDATE indexed_blocks SET block_number = block_number + 1, block_time = now() - interval '30 seconds' WHERE chain = 'avalanche'`;
    await waitFor(async () => (value(await scrape(g), 'igw_data_age_seconds{chain="avalanche"}') ?? Infinity) < 3_600, 5_000, 20);
    const age = value(await scrape(g), 'igw_data_age_seconds{chain="avalanche"}')!;
    expect(age).toBeGreaterThanOrEqual(29);
    expect(age).toBeLessThan(90);
  });

  it('igw_listen_up: 1 while LISTENing, 0 when polling', async () => {
    expect(value(await scrape(polling), 'igw_listen_up')).toBe(0);
    // the embedded engine cannot deliver notifications: it always polls
    expect(value(await scrape(g), 'igw_listen_up')).toBe(db.engine === 'server' ? 1 : 0);
  });

  it('igw_redis_up and igw_redis_breaker_open, only with a Redis', async () => {
    const text = await scrape(g);
    expect(value(text, 'igw_redis_up')).toBe(1);
    expect(value(text, 'igw_redis_breaker_open')).toBe(0);
    const without = await scrape(polling);
    expect(without).not.toMatch(/^igw_redis_up /m);
    expect(without).not.toMatch(/^igw_redis_breaker_open /m);
  });

  it('igw_http_requests_in_flight counts a request not yet answered', async () => {
    expect(value(await scrape(g), 'igw_http_requests_in_flight')).toBe(1); // the scrape itself
    const body = JSON.stringify(balanceCall(holders[0]!));
    const socket = connect({ host: '127.0.0.1', port: Number(new URL(g.base).port) });
    const reply = new Promise<string>((resolve) => {
      let text = '';
      socket.on('data', (chunk) => { text += chunk.toString(); if (text.includes('"jsonrpc"')) resolve(text); });
    });
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    // headers and half the body: the request has arrived and waits for the rest
    socket.write(`POST /v2/rpc HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n${body.slice(0, 10)}`);
    await waitFor(async () => value(await scrape(g), 'igw_http_requests_in_flight') === 2, 5_000, 20);
    socket.write(body.slice(10));
    expect(await reply).toContain('"result"');
    socket.destroy();
    await waitFor(async () => value(await scrape(g), 'igw_http_requests_in_flight') === 1, 5_000, 20);
  });

  it('igw_db_pool_in_use / _waiting / _size: the admission gate as it is', async () => {
    let text = await scrape(small);
    expect(value(text, 'igw_db_pool_size')).toBe(2);
    expect(value(text, 'igw_db_pool_in_use')).toBe(0);
    expect(value(text, 'igw_db_pool_waiting')).toBe(0);
    // a writer holds the balances table: four requests' statements take both connections, two wait
    let release!: () => void;
    const held = new Promise<void>((resolve) => { release = resolve; });
    let locked!: () => void;
    const lockTaken = new Promise<void>((resolve) => { locked = resolve; });
    const writer = db.sql.begin(async (tx) => {
      await tx`LOCK TABLE balances IN ACCESS EXCLUSIVE MODE`;
      locked();
      await held;
    });
    await lockTaken;
    const calls = holders.slice(0, 4).map((address, i) => rpc(small.base, balanceCall(address, i)));
    try {
      await waitFor(async () => {
        text = await scrape(small);
        return value(text, 'igw_db_pool_in_use') === 2 && value(text, 'igw_db_pool_waiting') === 2;
      }, 5_000, 20);
    } finally {
      release();
      await writer;
    }
    for (const reply of await Promise.all(calls)) expect(reply.json.result.inscriptions).toHaveLength(1);
    text = await scrape(small);
    expect(value(text, 'igw_db_pool_in_use')).toBe(0);
    expect(value(text, 'igw_db_pool_waiting')).toBe(0);
  });
});
