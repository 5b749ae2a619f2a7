import http from 'node:http';
import { createClient, type Client } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/access/key-format.js';
import { insertApiKey, revokeApiKey } from '../../src/db/api-keys.js';
import { Fixture } from '../support/fixtures.js';
import { capturingLogger, waitFor } from '../support/ops.js';
import { gql, request, rpc } from '../support/http.js';
import { startRedis, type OwnRedis } from '../support/redis-server.js';
import { startTestGateway, type TestGateway, useDatabase } from '../support/gateway.js';

// API keys on every surface of two listening gateways sharing one PostgreSQL database and one private
// Redis: 401 in each surface's shape for unknown, revoked and expired keys, 429 over the quota (GraphQL
// TOO_MANY_REQUESTS, JSON-RPC -32005 with data.retryAfter) with Retry-After, the RateLimit fields on keyed
// answers, one quota shared by both gateways, a key created and revoked reaching the second gateway,
// ANONYMOUS_ACCESS=deny, the per-key overrides (page size, cost, streams), and no key in any log line.

const db = useDatabase();
let redis: OwnRedis;
let a: TestGateway;
let b: TestGateway;
const logs = capturingLogger('debug');
const keys: Record<string, string> = {};
const clients: Client[] = [];

async function addKey(name: string, extra: Partial<Parameters<typeof insertApiKey>[1]> = {}): Promise<string> {
  const g = generateKey();
  await insertApiKey(db.sql, { name, prefix: g.prefix, secretSha256: g.secretSha256, ratePerS: 100, burst: 100, ...extra });
  keys[name] = g.key;
  return g.key;
}

const bearer = (key: string) => ({ authorization: `Bearer ${key}` });
const ticksQuery = '{ ticks(first: 3, orderBy: ID) { edges { node { tick } } } }';
const ticksOf = (json: any) => json.data.ticks.edges.map((e: any) => e.node.tick);

function sse(base: string, headers: Record<string, string> = {}): Client {
  const client = createClient({ url: `${base}/graphql`, retryAttempts: 0, headers });
  clients.push(client);
  return client;
}

function subscribe(client: Client) {
  const state = { events: 0, error: null as unknown, done: false };
  const stop = client.subscribe({ query: 'subscription { blocks { height } }' }, {
    next: () => void state.events++,
    error: (error) => { state.error = error; state.done = true; },
    complete: () => { state.done = true; },
  });
  return { state, stop };
}

beforeAll(async () => {
  const f = new Fixture();
  for (const tick of ['aaa', 'bbb', 'ccc']) f.mint(f.tick({ chain: 'eth', protocol: 'erc-20', tick, total_supply: '1000' }), '0xAbCd000000000000000000000000000000000001', '1');
  f.block('eth', '100', '2024-01-15T09:00:00.000Z', '2024-01-15T09:00:01.000Z');
  await f.load(db.sql);
  redis = await startRedis();
  await addKey('partner', { maxPageSize: 10, maxStreams: 3 });
  await addKey('rich', { maxCost: 1_000_000 });
  await addKey('slow', { ratePerS: 0.1, burst: 2 });
  await addKey('gone');
  await addKey('old');
  await db.sql`UPDATE api_keys SET revoked_at = now() WHERE name = 'gone'`;
  await db.sql`UPDATE api_keys SET expires_at = now() - interval '1 minute' WHERE name = 'old'`;
  const settings = {
    REDIS_URL: redis.url, QUOTA_GATEWAYS: 2, MAX_PAGE_SIZE: 2, GRAPHQL_MAX_COST: 15, SUBSCRIPTIONS_MAX_PER_CLIENT: 1, BAD_KEY_FREE_FAILURES: 1_000,
  };
  a = await startTestGateway(db, { CACHE: true, ...settings }, { logger: logs.logger });
  b = await startTestGateway(db, { CACHE: true, ...settings });
});

afterAll(async () => {
  for (const c of clients) c.dispose();
  await a?.close();
  await b?.close();
  await redis?.stop();
});

describe('API keys on the surfaces', () => {
  it('an unknown, revoked or expired key gets 401 in each surface\'s shape', async () => {
    for (const key of [generateKey().key, keys.gone!, keys.old!]) {
      const g = await gql(a.base, '{ chains { chain } }', undefined, bearer(key));
      expect(g.status).toBe(401);
      expect(g.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(g.json.errors[0]).toMatchObject({ message: expect.stringMatching(/^Unauthenticated: /), extensions: { code: 'UNAUTHENTICATED' } });
      const get = await request(`${a.base}/graphql?query=${encodeURIComponent('{ chains { chain } }')}`, { headers: { accept: 'application/json', 'x-api-key': key } });
      expect(get.status).toBe(401);
      for (const [path, method] of [['/v2/rpc', 'inds_getTicks'], ['/v1/rpc', 'block.LastNumber']] as const) {
        const r = await rpc(a.base, { jsonrpc: '2.0', id: 1, method, params: [] }, path, { 'x-api-key': key });
        expect(r.status).toBe(401);
        expect(r.json).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32001, message: 'Unauthorized', data: { reason: expect.any(String) } } });
      }
      // a subscription (graphql-sse): refused before any stream
      const sub = subscribe(sse(a.base, { 'x-api-key': key }));
      await waitFor(async () => sub.state.done, 5_000);
      expect(String((sub.state.error as Error)?.message ?? sub.state.error)).toMatch(/401/);
    }
  });

  it('a valid key is served on GraphQL and JSON-RPC with the RateLimit fields; anonymous still served (allow)', async () => {
    const g = await gql(a.base, '{ chains { chain } }', undefined, bearer(keys.partner!));
    expect(g.status).toBe(200);
    expect(g.json.data.chains).toContainEqual({ chain: 'eth' });
    expect(g.headers.get('ratelimit-policy')).toBe('"burst";q=100;w=1');
    expect(g.headers.get('ratelimit')).toMatch(/^"burst";r=\d+;t=\d+$/);
    const r = await rpc(b.base, { jsonrpc: '2.0', id: 1, method: 'inds_getTicks', params: [] }, '/v2/rpc', { 'x-api-key': keys.partner! });
    expect(r.status).toBe(200);
    expect(r.json.error).toBeUndefined();
    expect(r.headers.get('ratelimit')).toMatch(/^"burst";r=\d+;t=\d+$/);
    const anonymous = await gql(a.base, '{ chains { chain } }');
    expect(anonymous.status).toBe(200);
    expect(anonymous.headers.get('ratelimit')).toBeNull();
    // a browser may send the key to JSON-RPC across origins: the preflight allows the headers
    const preflight = await request(`${a.base}/v2/rpc`, { method: 'OPTIONS', headers: { origin: 'https://x.example', 'access-control-request-method': 'POST' } });
    expect(preflight.headers.get('access-control-allow-headers')).toMatch(/authorization, x-api-key/);
  });

  it('over the quota: 429 with Retry-After, GraphQL TOO_MANY_REQUESTS, JSON-RPC -32005 with data.retryAfter', async () => {
    const key = keys.slow!;
    await gql(a.base, '{ chains { chain } }', undefined, bearer(key));
    await gql(b.base, '{ chains { chain } }', undefined, bearer(key));
    const g = await gql(a.base, '{ chains { chain } }', undefined, bearer(key));
    expect(g.status).toBe(429);
    expect(Number(g.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(g.headers.get('ratelimit')).toMatch(/^"burst";r=0;t=\d+$/);
    expect(g.json.errors[0]).toMatchObject({ message: expect.stringMatching(/^Too many requests: rate limit of key slow/), extensions: { code: 'TOO_MANY_REQUESTS', retryAfter: expect.any(Number) } });
    const r = await rpc(b.base, { jsonrpc: '2.0', id: 1, method: 'inds_getTicks', params: [] }, '/v2/rpc', bearer(key));
    expect(r.status).toBe(429);
    expect(r.json.error).toMatchObject({ code: -32005, message: 'Too many requests', data: { retryAfter: Number(r.headers.get('retry-after')) } });
  });

  it('two gateways share one quota: together they admit about rate x seconds + burst', async () => {
    const key = await addKey('shared', { ratePerS: 1, burst: 3 });
    await waitFor(async () => a.gateway.access.registry.prefixes().has(key.slice(0, 11)) && b.gateway.access.registry.prefixes().has(key.slice(0, 11)), 2_000);
    const started = performance.now();
    const end = started + 2_000;
    let admitted = 0;
    let limited = 0;
    await Promise.all([a, b].flatMap((g) => Array.from({ length: 3 }, async () => {
      while (performance.now() < end) {
        const reply = await gql(g.base, '{ __typename }', undefined, bearer(key));
        if (reply.status === 200) admitted++;
        else if (reply.status === 429) limited++;
        else throw new Error(`unexpected ${reply.status}`);
      }
    })));
    const seconds = (performance.now() - started) / 1000;
    expect(limited).toBeGreaterThan(0);
    // two separate buckets would admit up to twice that (2 x (3 + 2))
    expect(admitted).toBeLessThanOrEqual(Math.floor(1 * seconds + 3) + 1);
    expect(admitted).toBeGreaterThanOrEqual(3);
  });

  it('a key created and revoked reaches the second gateway within 2 s', async () => {
    const key = generateKey();
    await insertApiKey(db.sql, { name: 'late', prefix: key.prefix, secretSha256: key.secretSha256, ratePerS: 100, burst: 100 });
    const created = await waitFor(async () => (await gql(b.base, '{ __typename }', undefined, bearer(key.key))).status === 200, 2_000, 20);
    await revokeApiKey(db.sql, 'late');
    const revoked = await waitFor(async () => (await gql(b.base, '{ __typename }', undefined, bearer(key.key))).status === 401, 2_000, 20);
    expect(Math.max(created, revoked)).toBeLessThan(2_000);
  });

  it('ANONYMOUS_ACCESS=deny: a request without a key gets 401, with a key it is served', async () => {
    const deny = await startTestGateway(db, { CACHE: true, ANONYMOUS_ACCESS: 'deny' });
    try {
      const g = await gql(deny.base, '{ chains { chain } }');
      expect(g.status).toBe(401);
      expect(g.json.errors[0]).toMatchObject({ message: expect.stringMatching(/API key is required/), extensions: { code: 'UNAUTHENTICATED' } });
      const r = await rpc(deny.base, { jsonrpc: '2.0', id: 1, method: 'inds_getTicks', params: [] });
      expect(r.json.error.code).toBe(-32001);
      expect((await gql(deny.base, '{ chains { chain } }', undefined, bearer(keys.partner!))).status).toBe(200);
      const rr = await rpc(deny.base, { jsonrpc: '2.0', id: 1, method: 'inds_getTicks', params: [] }, '/v2/rpc', bearer(keys.partner!));
      expect(rr.json.result).toBeDefined();
    } finally {
      await deny.close();
    }
  });

  it('bad keys from one loopback address slow that address down (429), not another address', async () => {
    const strict = await startTestGateway(db, { CACHE: true, BAD_KEY_FREE_FAILURES: 2, BAD_KEY_MAX_BLOCK_S: 30 });
    const from = (localAddress: string, key: string) => new Promise<{ status: number; retryAfter?: string; body: string }>((resolve, reject) => {
      const url = new URL(`${strict.base}/v2/rpc`);
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'inds_getTicks', params: [] });
      const req = http.request({ host: url.hostname, port: url.port, path: url.pathname, method: 'POST', localAddress, agent: false,
        headers: { 'content-type': 'application/json', 'x-api-key': key } }, (res) => {
        let text = '';
        res.on('data', (c) => { text += c; });
        res.on('end', () => resolve({ status: res.statusCode!, retryAfter: res.headers['retry-after'] as string | undefined, body: text }));
      });
      req.on('error', reject);
      req.end(body);
    });
    try {
      const bad = generateKey().key;
      expect((await from('127.0.0.2', bad)).status).toBe(401);
      expect((await from('127.0.0.2', bad)).status).toBe(401);
      expect((await from('127.0.0.2', bad)).status).toBe(401); // the third: answered, and the address waits 1 s
      const blocked = await from('127.0.0.2', keys.partner!);
      expect(blocked).toMatchObject({ status: 429, retryAfter: '1' });
      expect(JSON.parse(blocked.body).error).toMatchObject({ code: -32005, data: { retryAfter: 1 } });
      expect((await from('127.0.0.3', keys.partner!)).status).toBe(200);
    } finally {
      await strict.close();
    }
  });

  it('a key\'s max page size raises the clamp, and its answers are not shared through the cache', async () => {
    const anonymous = ticksOf((await gql(a.base, ticksQuery)).json);
    expect(anonymous).toHaveLength(2);
    const wide = await gql(a.base, ticksQuery, undefined, bearer(keys.partner!));
    expect(ticksOf(wide.json)).toHaveLength(3);
    expect(ticksOf(wide.json)).toEqual(expect.arrayContaining(anonymous));
    expect(wide.headers.get('x-cache')).not.toBe('hit');
    // the anonymous answer after it is still the clamped one, and a key without the override gets it too
    expect(ticksOf((await gql(a.base, ticksQuery)).json)).toEqual(anonymous);
    expect(ticksOf((await gql(a.base, ticksQuery, undefined, bearer(keys.rich!))).json)).toEqual(anonymous);
    // asked again with the key: still the wide answer (never the clamped one from the cache)
    expect(ticksOf((await gql(a.base, ticksQuery, undefined, bearer(keys.partner!))).json)).toHaveLength(3);
  });

  it('a key\'s max page size raises the JSON-RPC clamp too, never through the shared cache', async () => {
    const call = { jsonrpc: '2.0', id: 1, method: 'inds_getTicks', params: [10, 0, 'eth', '', '', '', 0, 1] };
    const names = (reply: { json: any }) => reply.json.result.inscriptions.map((t: { tick: string }) => t.tick);
    const anonymous = names(await rpc(a.base, call));
    expect(anonymous).toHaveLength(2);
    const wide = await rpc(a.base, call, '/v2/rpc', bearer(keys.partner!));
    expect(names(wide)).toHaveLength(3);
    expect(wide.headers.get('x-cache')).toBe('bypass');
    expect(names(await rpc(a.base, call))).toEqual(anonymous);
    expect(names(await rpc(a.base, call, '/v2/rpc', bearer(keys.rich!)))).toEqual(anonymous);
  });

  it('a key\'s cost limit raises GRAPHQL_MAX_COST', async () => {
    const heavy = '{ ticks(first: 2) { edges { node { tick holders(first: 2) { edges { node { address } } } } } } }';
    const anonymous = await gql(a.base, heavy);
    expect(anonymous.json.errors?.[0]?.message).toMatch(/Query Cost limit of 15 exceeded/);
    const rich = await gql(a.base, heavy, undefined, bearer(keys.rich!));
    expect(rich.json.errors).toBeUndefined();
    expect(rich.json.data.ticks.edges).toHaveLength(2);
  });

  it('a key\'s stream count replaces the per-address subscription cap', async () => {
    const anon = [subscribe(sse(a.base)), subscribe(sse(a.base))];
    await waitFor(async () => anon.some((s) => s.state.done), 5_000);
    expect(anon.filter((s) => !s.state.done)).toHaveLength(1);
    const keyed = [1, 2, 3, 4].map(() => subscribe(sse(a.base, bearer(keys.partner!))));
    await waitFor(async () => keyed.filter((s) => s.state.done).length === 1, 5_000);
    await new Promise((r) => setTimeout(r, 300));
    expect(keyed.filter((s) => !s.state.done)).toHaveLength(3);
    for (const s of [...anon, ...keyed]) s.stop();
  });

  it('never writes a key into a log line or a metric; names the key in the per-key series', async () => {
    const metrics = await (await fetch(`${a.base}/metrics`)).text();
    expect(metrics).toMatch(/igw_key_requests_total\{key="partner"\} \d+/);
    expect(metrics).toMatch(/igw_key_response_bytes_total\{key="partner"\} \d+/);
    expect(metrics).toMatch(/igw_key_limited_total\{key="slow",limit="rate"\} \d+/);
    const everything = `${logs.raw.join('\n')}\n${metrics}`;
    expect(logs.raw.length).toBeGreaterThan(10);
    for (const key of Object.values(keys)) expect(everything).not.toContain(key.slice(12));
    expect(everything).not.toMatch(/igw[0-9a-f]{8}_[A-Za-z0-9_-]{43}/);
    // the request lines name the key a request came with, by its name
    const lines = logs.raw.map((l) => JSON.parse(l)).filter((l) => l.msg === 'request');
    expect(lines.some((l) => l.key === 'partner')).toBe(true);
    expect(lines.some((l) => l.key === undefined && l.surface === 'graphql')).toBe(true);
  });
});
