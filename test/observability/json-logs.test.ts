import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findServer } from '../support/db.js';
import { useDatabase } from '../support/gateway.js';
import { alice, Fixture } from '../support/fixtures.js';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.js';
import { gql, gqlGet, request, rpc } from '../support/http.js';
import { because, skipUnless } from '../support/skips.js';

// With LOG_FORMAT=json every line the gateway process writes, on stdout and on stderr, is one JSON object:
// a spread of requests (GraphQL misses and hits, JSON-RPC, errors, hostile input) and a shutdown must not
// make any library print a line of its own. (Every GraphQL cache miss once printed
// "[useResponseCache] The cached execute function was not called…": 9 of 69 lines in one run.)

const onServer = (await findServer()) !== null;

describe('the gateway process logs JSON lines only', skipUnless(onServer, because.noServerForChild), () => {
  const db = useDatabase();
  let gateway: GatewayProcess;

  beforeAll(async () => {
    const f = new Fixture();
    const t = f.tick({ chain: 'eth', protocol: 'erc-20', tick: 'json' });
    for (let i = 0; i < 20; i++) f.mint(t, `0x150a${String(i).padStart(36, '0')}`, String(100 + i));
    f.mint(t, alice, '42');
    f.block('eth', '19000000', '2024-01-15T09:00:00.000Z', '2024-01-15T09:00:05.000Z');
    await f.load(db.sql);
    gateway = await startGatewayProcess({ DATABASE_URL: db.target.url!, LOG_LEVEL: 'debug', CACHE_MAX_ENTRY_BYTES: '1024' });
  });
  afterAll(async () => {
    if (gateway?.child.exitCode === null) await gateway.stop();
  });

  it('answers a spread of requests and shuts down writing nothing but JSON objects', async () => {
    const base = gateway.base;
    const holders = 'query H($n: Int!) { tick(chain: "eth", protocol: "erc-20", tick: "json") { holders(first: $n) { totalCount edges { node { address balance } } } } }';
    // GraphQL: misses and hits (jit-compiled and not: a union), an answer too big to store, GET, errors, hostile input
    for (let i = 0; i < 2; i++) {
      expect((await gql(base, holders, { n: 3 })).headers.get('x-cache')).toBe(i === 0 ? 'miss' : 'hit');
      expect((await gql(base, '{ search(keyword: "js") { __typename } }')).status).toBe(200);
      expect((await gql(base, holders, { n: 21 })).headers.get('x-cache')).toBe('miss');
    }
    const etag = (await gql(base, holders, { n: 3 })).headers.get('etag')!;
    expect((await gqlGet(base, holders, { n: 3 }, { 'if-none-match': etag })).status).toBe(304);
    expect((await request(`${base}/graphql?query=${encodeURIComponent('{ chains { chain } }')}`)).status).toBe(200);
    expect((await gql(base, '{ nope }')).json.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect((await gql(base, '{ ticks(')).json.errors[0].extensions.code).toBe('GRAPHQL_PARSE_FAILED');
    expect((await gql(base, `{ balances(address: "0x\\u0000") { totalCount } }`)).json.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    expect((await gql(base, '{ ticks(first: 2, after: "\\u0000abc") { totalCount } }')).json.errors[0].extensions.code).toBe('BAD_USER_INPUT');
    expect((await request(`${base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query": ' })).status).toBe(400);
    expect((await request(`${base}/graphql`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ query: '{ __typename }', operationName: { x: 1 } }) })).status).toBe(400);
    // JSON-RPC: miss, hit, errors, a batch, a parse error, a notification, a wrong verb
    const call = { jsonrpc: '2.0', id: 1, method: 'inds_getHoldersByTick', params: [5, 0, 'eth', 'erc-20', 'json', 2] };
    expect((await rpc(base, call)).json.result.total).toBe(21);
    expect((await rpc(base, call)).json.result.total).toBe(21);
    expect((await rpc(base, { ...call, params: [100, 0, 'eth', 'erc-20', 'json', 2] })).json.result.holders).toHaveLength(21);
    expect((await rpc(base, { jsonrpc: '2.0', id: 2, method: 'inds_getTicks', params: ['x'] })).json.error.code).toBe(-32602);
    expect((await rpc(base, { jsonrpc: '2.0', id: 3, method: 'inds_getBalancesByAddress', params: [10, 0, `${alice}\u0000`, '', '', '', '', 2] })).json.error.code).toBe(-32602);
    expect((await rpc(base, { jsonrpc: '2.0', id: 4, method: 'index_getInscriptionByTick', params: ['eth', 'erc-20', 'none'] })).json.error.code).toBe(-32603);
    expect((await rpc(base, [call, { jsonrpc: '2.0', id: 5, method: 'nope' }])).json).toHaveLength(2);
    expect((await rpc(base, '{"jsonrpc": "2.0", ')).json.error.code).toBe(-32700);
    expect((await rpc(base, { jsonrpc: '2.0', method: 'inds_getAllChains', params: [[]] })).status).toBe(204);
    expect((await request(`${base}/v2/rpc`)).status).toBe(405);
    // the rest of the surface
    for (const path of ['/healthz', '/readyz', '/metrics', '/nowhere']) await request(`${base}${path}`);

    const stopped = await gateway.stop();
    expect(stopped.code).toBe(0);
    const lines = gateway.output().split('\n').filter((line) => line.trim() !== '');
    expect(lines.length).toBeGreaterThan(30);
    const notJson = lines.filter((line) => {
      try {
        const value: unknown = JSON.parse(line);
        return typeof value !== 'object' || value === null || Array.isArray(value);
      } catch {
        return true;
      }
    });
    expect(notJson).toEqual([]);
    // and those lines are the gateway's own: a level, a time, a message
    for (const line of lines) expect(JSON.parse(line)).toMatchObject({ level: expect.any(String), time: expect.any(String), msg: expect.any(String) });
  });
});
