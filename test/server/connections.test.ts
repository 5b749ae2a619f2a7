import { afterAll, describe, expect, it } from 'vitest';
import type { GatewayConfig } from '../../src/app.js';
import { heldConnectionsDefault, loadConfig, openFileLimit } from '../../src/config.js';
import { clientKey, socketsAtMost } from '../../src/server/connections.js';
import { useDatabase, useGateways } from '../support/gateway.js';
import { Fixture } from '../support/fixtures.js';
import { call } from '../support/http.js';
import { exchange, openClient, parseResponse, type RawClient } from '../support/sockets.js';

// Slow and greedy clients cannot hold the listener: many slow connections from a second
// loopback address (127.0.0.2) hit the per-client cap while a client on 127.0.0.1 is still served, slow
// bodies and idle sockets are cut within the configured (here: small) timeouts with a 408 body of their
// surface, and the total connection cap holds. Every error answer has a body, also without Host.

const clients: RawClient[] = [];

const db = useDatabase({
  load: async (db) => {
    const f = new Fixture();
    f.mint(f.tick({ chain: 'eth', protocol: 'erc-20', tick: 'slow' }), '0xAAaa000000000000000000000000000000000001', '100');
    await f.load(db.sql);
  },
});
const gatewayWith = useGateways(db, {}, { ready: false });
// the clients go before the gateways close (hooks registered later run first)
afterAll(() => {
  for (const client of clients) client.destroy();
});

function client(port: number, localAddress: string, first?: string) {
  const c = openClient(port, localAddress, first);
  clients.push(c);
  return c;
}

const rpcHead = (length: number) =>
  `POST /v2/rpc HTTP/1.1\r\nhost: gw\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\n\r\n`;
const graphqlHead = (length: number) =>
  `POST /graphql HTTP/1.1\r\nhost: gw\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\n\r\n`;

/** A real answer from 127.0.0.1: an RPC call that reads the database. */
async function probe(base: string) {
  const reply = await call(base, 'inds_getTicks', [10, 0, '', '', '', '', 0, 1]);
  expect(reply.error).toBeUndefined();
  expect(reply.result.total).toBe(1);
  expect(reply.result.inscriptions[0].tick).toBe('slow');
}

describe('limits', () => {
  it('defaults: short timeouts, a minimum body rate and connection caps well under the fd limit', () => {
    const config = loadConfig({});
    expect({
      HTTP_HEADERS_TIMEOUT_MS: config.HTTP_HEADERS_TIMEOUT_MS, HTTP_REQUEST_TIMEOUT_MS: config.HTTP_REQUEST_TIMEOUT_MS,
      HTTP_MIN_BODY_BYTES_PER_S: config.HTTP_MIN_BODY_BYTES_PER_S, HTTP_BODY_GRACE_MS: config.HTTP_BODY_GRACE_MS,
      HTTP_IDLE_TIMEOUT_MS: config.HTTP_IDLE_TIMEOUT_MS, HTTP_KEEP_ALIVE_TIMEOUT_MS: config.HTTP_KEEP_ALIVE_TIMEOUT_MS,
      HTTP_MAX_REQUESTS_PER_SOCKET: config.HTTP_MAX_REQUESTS_PER_SOCKET, HTTP_MAX_CONNECTIONS: config.HTTP_MAX_CONNECTIONS,
      HTTP_MAX_CONNECTIONS_PER_CLIENT: config.HTTP_MAX_CONNECTIONS_PER_CLIENT,
    }).toEqual({
      HTTP_HEADERS_TIMEOUT_MS: 10_000, HTTP_REQUEST_TIMEOUT_MS: 30_000, HTTP_MIN_BODY_BYTES_PER_S: 1_024, HTTP_BODY_GRACE_MS: 5_000,
      HTTP_IDLE_TIMEOUT_MS: 30_000, HTTP_KEEP_ALIVE_TIMEOUT_MS: 5_000, HTTP_MAX_REQUESTS_PER_SOCKET: 1_000,
      HTTP_MAX_CONNECTIONS: 4_096, HTTP_MAX_CONNECTIONS_PER_CLIENT: 64,
    });
    expect(() => loadConfig({ HTTP_HEADERS_TIMEOUT_MS: '20000', HTTP_REQUEST_TIMEOUT_MS: '10000' })).toThrow(/HTTP_HEADERS_TIMEOUT_MS/);
    // held refusals: what the open-file limit leaves after the table (4,096), as many waiting and 1,024 spare
    expect(loadConfig({}, 20_000).HTTP_MAX_HELD_CONNECTIONS).toBe(20_000 - 2 * 4_096 - 1_024);
    expect(loadConfig({}, 1_048_576).HTTP_MAX_HELD_CONNECTIONS).toBe(16_384);
    expect(loadConfig({}, 4_096).HTTP_MAX_HELD_CONNECTIONS).toBe(1_024);
    expect(loadConfig({}, null).HTTP_MAX_HELD_CONNECTIONS).toBe(8_192);
    // without waiting connections (behind a proxy) the table alone is taken off; a value given is kept
    expect(loadConfig({ HTTP_MAX_CONNECTIONS_PER_CLIENT: '0' }, 20_000).HTTP_MAX_HELD_CONNECTIONS).toBe(20_000 - 4_096 - 1_024);
    expect(loadConfig({ HTTP_MAX_HELD_CONNECTIONS: '300' }, 20_000).HTTP_MAX_HELD_CONNECTIONS).toBe(300);
    expect(() => loadConfig({ HTTP_MAX_CONNECTIONS: '0' })).toThrow(/HTTP_MAX_CONNECTIONS/);
  });

  it('the listener is built with them', async () => {
    const { gateway } = await gatewayWith({ HTTP_MAX_CONNECTIONS: 77, HTTP_MAX_CONNECTIONS_PER_CLIENT: 16, HTTP_HEADERS_TIMEOUT_MS: 1_500, HTTP_REQUEST_TIMEOUT_MS: 2_500 });
    // HTTP_MAX_CONNECTIONS admitted, as many again waiting unread for their address's turn (HTTP_MAX_INCOMPLETE_PER_CLIENT),
    // and the refused and cut ones held open a while (HTTP_MAX_HELD_CONNECTIONS: what `ulimit -n` leaves, as the test
    // config was loaded)
    const held = loadConfig({}).HTTP_MAX_HELD_CONNECTIONS!;
    expect(held).toBe(heldConnectionsDefault(loadConfig({}), openFileLimit()));
    expect(gateway.server.maxConnections).toBe(2 * 77 + held);
    expect(socketsAtMost({ ...loadConfig({}, 20_000), HTTP_MAX_CONNECTIONS: 77 })).toBe(2 * 77 + 10_784);
    expect(gateway.server.headersTimeout).toBe(1_500);
    expect(gateway.server.requestTimeout).toBe(2_500);
    expect(gateway.server.keepAliveTimeout).toBe(5_000);
    expect(gateway.server.timeout).toBe(30_000);
  });

  it('clients are counted per IPv4 address and per IPv6 /64', () => {
    expect(clientKey('127.0.0.2')).toBe('127.0.0.2');
    expect(clientKey('::ffff:10.1.2.3')).toBe('10.1.2.3');
    expect(clientKey('2001:db8:1:2:aaaa::1')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8:1:2:bbbb:cccc:dddd:eeee')).toBe('2001:db8:1:2::/64');
    expect(clientKey('2001:db8::1')).toBe('2001:db8:0:0::/64');
    expect(clientKey('::1')).toBe('0:0:0:0::/64');
    expect(clientKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
  });
});

describe('the per-client cap', () => {
  it('slow connections from 127.0.0.2 hit the cap (429 with a body at once, the connection held for HTTP_HOLD_REFUSED_MS) while 127.0.0.1 is served', async () => {
    // timeouts long enough that nothing held here is cut during the test
    const { port, base } = await gatewayWith({
      HTTP_MAX_CONNECTIONS_PER_CLIENT: 8, HTTP_HEADERS_TIMEOUT_MS: 60_000, HTTP_REQUEST_TIMEOUT_MS: 60_000, HTTP_MIN_BODY_BYTES_PER_S: 0,
      HTTP_HOLD_REFUSED_MS: 1_000,
    });
    const held: RawClient[] = [];
    for (let i = 0; i < 8; i++) {
      // half trickle their headers a byte at a time, half send nothing at all
      const c = client(port, '127.0.0.2', i % 2 === 0 ? 'POST /v2/rpc HTTP/1.1\r\nhost: gw\r\n' : undefined);
      if (i % 2 === 0) c.trickle('x', 100);
      await c.connected;
      held.push(c);
    }
    await probe(base);
    // the 9th to 20th connection from the same address: refused with a body, without a request being read
    const refusedAt = performance.now();
    const refused = await Promise.all(Array.from({ length: 12 }, () => client(port, '127.0.0.2').closed));
    // held open for HTTP_HOLD_REFUSED_MS (1 s here): a client reconnecting as soon as it is closed waits that long
    expect(performance.now() - refusedAt).toBeGreaterThanOrEqual(900);
    for (const data of refused) {
      const response = parseResponse(data);
      expect(response?.status).toBe(429);
      expect(response?.headers['retry-after']).toBe('1');
      expect(JSON.parse(response!.body)).toEqual({ status: 'error', reason: 'too many connections from this client address' });
    }
    // a request sent on an over-cap connection gets the same answer, never a response of its own
    const asked = await exchange(port, `${rpcHead(2)}{}`, '127.0.0.2');
    expect(asked?.status).toBe(429);
    // the held connections are still open and 127.0.0.1 is still served, many times over
    for (const c of held) expect(c.socket.destroyed).toBe(false);
    await Promise.all(Array.from({ length: 5 }, () => probe(base))); // (127.0.0.1 has the same cap of 8)
    // released connections free the address's slots
    for (const c of held) c.destroy();
    let status = 0;
    for (let attempt = 0; attempt < 100 && status !== 200; attempt++) {
      status = (await exchange(port, 'GET /healthz HTTP/1.1\r\nhost: gw\r\nconnection: close\r\n\r\n', '127.0.0.2'))?.status ?? 0;
      if (status !== 200) await new Promise((r) => setTimeout(r, 20));
    }
    expect(status).toBe(200);
  });

  it('0 turns the per-client cap off', async () => {
    const { port } = await gatewayWith({ HTTP_MAX_CONNECTIONS_PER_CLIENT: 0, HTTP_HEADERS_TIMEOUT_MS: 60_000, HTTP_REQUEST_TIMEOUT_MS: 60_000 });
    const held = [];
    for (let i = 0; i < 70; i++) held.push(client(port, '127.0.0.5'));
    await Promise.all(held.map((c) => c.connected));
    const response = await exchange(port, 'GET /healthz HTTP/1.1\r\nhost: gw\r\nconnection: close\r\n\r\n', '127.0.0.5');
    expect(response?.status).toBe(200);
    for (const c of held) c.destroy();
  });
});

describe('requests per connection', () => {
  it('the last one allowed closes the connection; one pipelined past it gets 503 with a body', async () => {
    const { port } = await gatewayWith({ HTTP_MAX_REQUESTS_PER_SOCKET: 2 });
    const get = 'GET /healthz HTTP/1.1\r\nhost: gw\r\n\r\n';
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'inds_getAllChains', params: [[]] });
    // one at a time: the second answer says close, and the server closes
    const c = client(port, '127.0.0.1', get);
    await c.connected;
    while (!c.received().includes('{"status":"ok"}')) await new Promise((r) => setTimeout(r, 10));
    c.socket.write(get);
    const both = await c.closed;
    expect(both.match(/HTTP\/1\.1 200/g)).toHaveLength(2);
    expect(both.slice(0, both.lastIndexOf('HTTP/1.1'))).not.toMatch(/\r\nConnection: close\r\n/i);
    expect(both.slice(both.lastIndexOf('HTTP/1.1'))).toMatch(/\r\nConnection: close\r\n/i);
    // three pipelined at once: whatever is answered past the second is a 503 with a body, or nothing
    const piped = client(port, '127.0.0.1', get + get + `${rpcHead(body.length)}${body}`);
    const data = await piped.closed;
    const statuses = [...data.matchAll(/HTTP\/1\.1 (\d+)/g)].map((m) => Number(m[1]));
    expect(statuses.slice(0, 2)).toEqual([200, 200]);
    for (const answer of data.split(/(?=HTTP\/1\.1 )/).slice(2)) {
      const response = parseResponse(answer);
      expect(response?.status).toBe(503);
      expect(JSON.parse(response!.body)).toMatchObject({ jsonrpc: '2.0', error: { code: -32000 } });
    }
  });
});

describe('the total connection cap', () => {
  it('holds: a connection over HTTP_MAX_CONNECTIONS is closed on accept, and served again once one is free', async () => {
    const { gateway, port } = await gatewayWith({
      HTTP_MAX_CONNECTIONS: 12, HTTP_MAX_CONNECTIONS_PER_CLIENT: 6, HTTP_HEADERS_TIMEOUT_MS: 60_000, HTTP_REQUEST_TIMEOUT_MS: 60_000,
      // the hard cap itself: the pressure rules (which keep the table from filling, hardening.pressure.test.ts) off
      HTTP_PRESSURE_THRESHOLD_PERCENT: 100,
    });
    const held: RawClient[] = [];
    for (const address of ['127.0.0.3', '127.0.0.4']) {
      for (let i = 0; i < 6; i++) {
        const c = client(port, address);
        await c.connected;
        held.push(c);
      }
    }
    // wait until the server has accepted all 12 (accepting is asynchronous to the client's connect)
    for (let attempt = 0; attempt < 100; attempt++) {
      const count = await new Promise<number>((resolve) => gateway.server.getConnections((_, n) => resolve(n)));
      if (count >= 12) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    // full: a new client (and the probe address too) is closed without a byte
    for (const address of ['127.0.0.6', '127.0.0.1']) {
      const c = client(port, address, 'GET /healthz HTTP/1.1\r\nhost: gw\r\nconnection: close\r\n\r\n');
      expect(await c.closed).toBe('');
    }
    for (const c of held) expect(c.socket.destroyed).toBe(false);
    held[0]!.destroy();
    let status = 0;
    for (let attempt = 0; attempt < 100 && status !== 200; attempt++) {
      status = (await exchange(port, 'GET /healthz HTTP/1.1\r\nhost: gw\r\nconnection: close\r\n\r\n'))?.status ?? 0;
      if (status !== 200) await new Promise((r) => setTimeout(r, 20));
    }
    expect(status).toBe(200);
  });
});

describe('slow clients are cut within the configured timeouts', () => {
  // small settings so that the test is quick: headers in 1 s, a request in 2 s, bodies at >= 200 bytes/s after 0.5 s
  const settings: Partial<GatewayConfig> = {
    HTTP_HEADERS_TIMEOUT_MS: 1_000, HTTP_REQUEST_TIMEOUT_MS: 2_000, HTTP_MIN_BODY_BYTES_PER_S: 200, HTTP_BODY_GRACE_MS: 500,
    HTTP_MAX_CONNECTIONS_PER_CLIENT: 64,
    // a cut connection is held this long before it closes (the hold has its own test in pressure.test.ts)
    HTTP_HOLD_REFUSED_MS: 300,
  };

  it('bodies trickled below the minimum rate get 408 with an error body of their surface, and are closed', async () => {
    const { port, base } = await gatewayWith(settings);
    // 8 connections from 127.0.0.2 (HTTP_MAX_INCOMPLETE_PER_CLIENT: more would wait), a body byte every 100 ms (10 bytes/s) on each
    const slow = Array.from({ length: 8 }, (_, i) => {
      const c = client(port, '127.0.0.2', i % 2 === 0 ? `${rpcHead(1_000)}{` : `${graphqlHead(1_000)}{`);
      c.trickle('x', 100);
      return { surface: i % 2 === 0 ? 'rpc' : 'graphql', c };
    });
    await probe(base);
    for (const { surface, c } of slow) {
      const response = parseResponse(await c.closed);
      expect(response?.status).toBe(408);
      expect(response?.headers.connection).toBe('close');
      const body = JSON.parse(response!.body);
      if (surface === 'rpc') {
        expect(body).toEqual({ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid request', data: { reason: 'request body slower than 200 bytes/s' } }, id: null });
      } else {
        expect(body).toEqual({ errors: [{ message: 'Invalid request: request body slower than 200 bytes/s', extensions: { code: 'BAD_REQUEST' } }] });
      }
    }
    await probe(base);
  });

  it('a body fast enough but never finished is cut at the request timeout, with a body of its surface', async () => {
    const { port, base } = await gatewayWith(settings);
    // 50 bytes every 100 ms (500 bytes/s, above the minimum) of a 1 MB body: 2 s are not enough
    const rpc = client(port, '127.0.0.2', `${rpcHead(1_000_000)}[`);
    const graphql = client(port, '127.0.0.2', `${graphqlHead(1_000_000)}{`);
    rpc.trickle(' '.repeat(50), 100);
    graphql.trickle(' '.repeat(50), 100);
    await probe(base);
    const [r, g] = [parseResponse(await rpc.closed), parseResponse(await graphql.closed)];
    expect(r?.status).toBe(408);
    expect(JSON.parse(r!.body)).toMatchObject({ jsonrpc: '2.0', error: { code: -32600, data: { reason: 'request not received in time' } }, id: null });
    expect(g?.status).toBe(408);
    expect(JSON.parse(g!.body)).toEqual({ errors: [{ message: 'Invalid request: request not received in time', extensions: { code: 'BAD_REQUEST' } }] });
  });

  it('idle sockets and headers trickled a byte at a time are cut at the headers timeout with a 408 body', async () => {
    const { port, base } = await gatewayWith(settings);
    const idle = Array.from({ length: 10 }, () => client(port, '127.0.0.2'));
    const trickling = Array.from({ length: 10 }, () => {
      const c = client(port, '127.0.0.2', 'GET /graphql HTTP/1.1\r\nhost: gw\r\n');
      c.trickle('x', 100);
      return c;
    });
    await probe(base);
    for (const c of [...idle, ...trickling]) {
      const response = parseResponse(await c.closed);
      expect(response?.status).toBe(408);
      expect(JSON.parse(response!.body)).toMatchObject({ reason: 'request not received in time' });
    }
  });

  it('a body at a normal pace is not cut', async () => {
    const { port } = await gatewayWith({ ...settings, HTTP_REQUEST_TIMEOUT_MS: 10_000 });
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'inds_getTicks', params: [10, 0, '', '', '', '', 0, 1] });
    // 1,000 bytes in 10 parts over ~0.8 s (~1,250 bytes/s): past the grace period, above the minimum rate
    const padded = body.padEnd(1_000, ' ');
    const c = client(port, '127.0.0.2', rpcHead(padded.length).replace('\r\n\r\n', '\r\nconnection: close\r\n\r\n'));
    await c.connected;
    for (let i = 0; i < 10; i++) {
      c.socket.write(padded.slice(i * 100, (i + 1) * 100));
      await new Promise((r) => setTimeout(r, 80));
    }
    const response = parseResponse(await c.closed);
    expect(response?.status).toBe(200);
    expect(JSON.parse(response!.body).result.total).toBe(1);
  });
});

describe('every error answer has a body', () => {
  it('HTTP/1.1 without Host: 400 with an error body of the surface; HTTP/1.0 without Host is served', async () => {
    const { port } = await gatewayWith({});
    const graphql = await exchange(port, 'GET /graphql?query=%7B__typename%7D HTTP/1.1\r\n\r\n');
    expect(graphql?.status).toBe(400);
    expect(JSON.parse(graphql!.body)).toEqual({ errors: [{ message: 'Invalid request: missing Host header', extensions: { code: 'BAD_REQUEST' } }] });
    const rpc = await exchange(port, 'POST /v2/rpc HTTP/1.1\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}');
    expect(rpc?.status).toBe(400);
    expect(JSON.parse(rpc!.body)).toEqual({ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid request', data: { reason: 'missing Host header' } }, id: null });
    const other = await exchange(port, 'GET /healthz HTTP/1.1\r\n\r\n');
    expect(other?.status).toBe(400);
    expect(JSON.parse(other!.body)).toEqual({ status: 'error', reason: 'missing Host header' });
    // HTTP/1.0 does not require Host
    const old = await exchange(port, 'POST /v2/rpc HTTP/1.0\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}');
    expect(old?.status).toBe(200);
    expect(JSON.parse(old!.body)).toMatchObject({ jsonrpc: '2.0', error: { code: -32600 } });
    const oldGraphql = await exchange(port, 'GET /graphql?query=%7B__typename%7D HTTP/1.0\r\naccept: application/json\r\n\r\n');
    expect(oldGraphql?.status).toBe(200);
    expect(JSON.parse(oldGraphql!.body).data).toEqual({ __typename: 'Query' });
  });

  it('unknown /graphql/* paths: 404 with a GraphQL error body', async () => {
    const { port } = await gatewayWith({});
    for (const request of [
      'GET /graphql/foo HTTP/1.1\r\nhost: gw\r\nconnection: close\r\n\r\n',
      'POST /graphql/foo/bar?x=/graphql HTTP/1.1\r\nhost: gw\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: 27\r\n\r\n{"query":"{ __typename }"}',
      'GET /graphql/foo HTTP/1.0\r\n\r\n',
    ]) {
      const response = await exchange(port, request);
      expect(response?.status, request).toBe(404);
      expect(JSON.parse(response!.body)).toEqual({ errors: [{ message: 'Not found: the GraphQL endpoint is /graphql', extensions: { code: 'NOT_FOUND' } }] });
    }
    // the endpoint itself, with or without the trailing slash, is still GraphQL
    const slash = await exchange(port, 'GET /graphql/?query=%7B__typename%7D HTTP/1.1\r\nhost: gw\r\naccept: application/json\r\nconnection: close\r\n\r\n');
    expect(JSON.parse(slash!.body).data).toEqual({ __typename: 'Query' });
  });

  it('every answer of status 400 or more to a set of odd requests carries a JSON body', async () => {
    const { port } = await gatewayWith({});
    const requests = [
      'GET /graphql HTTP/1.1\r\n\r\n',
      'PUT /graphql HTTP/1.1\r\nhost: gw\r\nconnection: close\r\ncontent-length: 2\r\n\r\n{}',
      'DELETE /graphql HTTP/1.1\r\nhost: gw\r\nconnection: close\r\n\r\n',
      'GET /graphql/x/y/z HTTP/1.1\r\nhost: gw\r\nconnection: close\r\n\r\n',
      'GET /v2/rpc HTTP/1.1\r\nhost: gw\r\nconnection: close\r\n\r\n',
      'GET /v2/rpc HTTP/1.1\r\n\r\n',
      'GET /nope HTTP/1.1\r\nhost: gw\r\nconnection: close\r\n\r\n',
      'GET /nope HTTP/1.0\r\n\r\n',
      'BREW /graphql HTTP/1.1\r\nhost: gw\r\n\r\n',
      'GET /graphql HTTP/9.9\r\nhost: gw\r\n\r\n',
      `GET /graphql HTTP/1.1\r\nhost: gw\r\nx-big: ${'a'.repeat(20_000)}\r\n\r\n`,
    ];
    for (const request of requests) {
      const response = await exchange(port, request);
      expect(response, request.slice(0, 40)).not.toBeNull();
      expect(response!.status, request.slice(0, 40)).toBeGreaterThanOrEqual(400);
      expect(() => JSON.parse(response!.body), request.slice(0, 40)).not.toThrow();
      expect(response!.body.length, request.slice(0, 40)).toBeGreaterThan(2);
    }
  });
});
