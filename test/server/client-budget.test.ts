import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.js';
import { Fixture } from '../support/fixtures.js';
import { call } from '../support/http.js';
import { exchange } from '../support/sockets.js';
import { useDatabase, useGateways } from '../support/gateway.js';

// One client asking for big answers back to back cannot take the gateway's thread from everyone else:
// each client address has a budget of response bytes (HTTP_CLIENT_BYTES_PER_S, burst HTTP_CLIENT_BURST_BYTES).
// A client from 127.0.0.2 that spends it gets 429 with Retry-After and an error body of its surface, while
// 127.0.0.1 is served; after the wait it is served again.

const tick = { chain: 'eth', protocol: 'erc-20', tick: 'bulk' };

const db = useDatabase({
  load: async (db) => {
    const f = new Fixture();
    const t = f.tick(tick);
    for (let i = 0; i < 400; i++) f.mint(t, `0x${(0xb0000 + i).toString(16).padStart(40, '0')}`, '1');
    await f.load(db.sql);
  },
});
// cache off: every answer is computed and charged
const gatewayWith = useGateways(db, { CACHE: false });

const rpcRequest = (body: unknown) => {
  const text = JSON.stringify(body);
  return `POST /v2/rpc HTTP/1.1\r\nhost: gw\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`;
};
const graphqlRequest = (query: string) => {
  const text = JSON.stringify({ query });
  return `POST /graphql HTTP/1.1\r\nhost: gw\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(text)}\r\nconnection: close\r\n\r\n${text}`;
};
const holdersPage = rpcRequest({ jsonrpc: '2.0', id: 1, method: 'inds_getHoldersByTick', params: [400, 0, tick.chain, tick.protocol, tick.tick, 2] });

describe('per-client byte budget', () => {
  it('defaults: 4 MiB/s with a 16 MiB burst; 0 turns it off; bad values are named', () => {
    const config = loadConfig({});
    expect([config.HTTP_CLIENT_BYTES_PER_S, config.HTTP_CLIENT_BURST_BYTES]).toEqual([4 * 1024 * 1024, 16 * 1024 * 1024]);
    expect(loadConfig({ HTTP_CLIENT_BYTES_PER_S: '0' }).HTTP_CLIENT_BYTES_PER_S).toBe(0);
    expect(() => loadConfig({ HTTP_CLIENT_BYTES_PER_S: '-1' })).toThrow('HTTP_CLIENT_BYTES_PER_S');
    expect(() => loadConfig({ HTTP_CLIENT_BURST_BYTES: 'lots' })).toThrow('HTTP_CLIENT_BURST_BYTES');
  });

  it('a client over its budget gets 429 + Retry-After with a body of its surface; another address is served; it recovers', async () => {
    // a 400-row page is ~60 KB: the burst holds two, the refill one every ~3 s
    const { port } = await gatewayWith({ HTTP_CLIENT_BYTES_PER_S: 20_000, HTTP_CLIENT_BURST_BYTES: 100_000 });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) statuses.push((await exchange(port, holdersPage, '127.0.0.2'))!.status);
    expect(statuses.slice(0, 2)).toEqual([200, 200]);
    expect(statuses.at(-1)).toBe(429);

    const rpc = (await exchange(port, holdersPage, '127.0.0.2'))!;
    expect(rpc.status).toBe(429);
    expect(Number(rpc.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(rpc.body)).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32005, message: 'limit exceeded', data: { retryAfter: Number(rpc.headers['retry-after']) } } });
    expect(JSON.parse(rpc.body).error.data.retryable).toBeUndefined();
    expect(JSON.parse(rpc.body).error.data.reason).toMatch(/too much data answered to this client address: retry after \d+ s/);
    const gql = (await exchange(port, graphqlRequest('{ chains { chain } }'), '127.0.0.2'))!;
    expect(gql.status).toBe(429);
    expect(JSON.parse(gql.body).errors[0].extensions.code).toBe('LIMIT_EXCEEDED');

    // another client address is untouched, and probes are never refused
    const other = await call(`http://127.0.0.1:${port}`, 'inds_getHoldersByTick', [400, 0, tick.chain, tick.protocol, tick.tick, 2]);
    expect(other.result.holders).toHaveLength(400);
    expect((await exchange(port, 'GET /healthz HTTP/1.1\r\nhost: gw\r\nconnection: close\r\n\r\n', '127.0.0.2'))!.status).toBe(200);
    expect((await exchange(port, 'GET /readyz HTTP/1.1\r\nhost: gw\r\nconnection: close\r\n\r\n', '127.0.0.2'))!.status).toBe(200);

    // after the advertised wait the client is served again
    await new Promise((resolve) => setTimeout(resolve, Number(rpc.headers['retry-after']) * 1_000 + 200));
    expect((await exchange(port, holdersPage, '127.0.0.2'))!.status).toBe(200);
  }, 60_000);

  it('HTTP_CLIENT_BYTES_PER_S=0: no budget', async () => {
    const { port } = await gatewayWith({ HTTP_CLIENT_BYTES_PER_S: 0, HTTP_CLIENT_BURST_BYTES: 1_024 });
    for (let i = 0; i < 5; i++) expect((await exchange(port, holdersPage, '127.0.0.2'))!.status).toBe(200);
  });
});
