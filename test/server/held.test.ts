import { request } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { closeGracefully } from '../../src/server/http.js';
import { useDatabase, useGateways } from '../support/gateway.js';
import { openClient, parseResponse, type RawClient } from '../support/sockets.js';

// Refused and cut connections held before they close (src/server/held.ts, issue 23): a client that reconnects
// the moment it is closed (the soak's reconnecting attackers) used to cost the gateway an accept, a parse and
// an answer every few milliseconds, and kept the kernel's accept queue full for everyone else.

let clients: RawClient[] = [];
afterEach(() => {
  for (const c of clients) c.destroy();
  clients = [];
});

const db = useDatabase();
const gatewayWith = useGateways(db, {
  HTTP_MAX_CONNECTIONS_PER_CLIENT: 1, HTTP_HEADERS_TIMEOUT_MS: 60_000, HTTP_REQUEST_TIMEOUT_MS: 60_000, HTTP_IDLE_TIMEOUT_MS: 60_000,
  HTTP_HOLD_REFUSED_MS: 3_000, HTTP_MAX_HELD_CONNECTIONS: 2,
}, { ready: false });

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function rawClient(port: number, address: string): RawClient {
  const c = openClient(port, address);
  clients.push(c);
  return c;
}

describe('refused connections held before they close', () => {
  it('are answered at once and closed after HTTP_HOLD_REFUSED_MS; past HTTP_MAX_HELD_CONNECTIONS, closed at once', async () => {
    const { port, base } = await gatewayWith({});
    const first = rawClient(port, '127.0.0.60'); // the address's one connection (HTTP_MAX_CONNECTIONS_PER_CLIENT 1)
    await first.connected;
    await sleep(100);
    const started = performance.now();
    const over = Array.from({ length: 4 }, () => rawClient(port, '127.0.0.60'));
    // every one is answered at once, 429 with connection: close
    while (!over.every((c) => c.received().includes('\r\n\r\n'))) {
      if (performance.now() - started > 2_000) throw new Error('not answered within 2 s');
      await sleep(10);
    }
    for (const c of over) {
      const answer = parseResponse(c.received());
      expect(answer?.status).toBe(429);
      expect(answer?.headers.connection).toBe('close');
    }
    // two are held (the bound), the other two are closed as soon as their answer is written
    await sleep(500);
    expect(over.filter((c) => c.socket.destroyed)).toHaveLength(2);
    // an operator sees them: out of the table, counted as held
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toMatch(/^igw_http_connections\{state="held"\} 2$/m);
    expect(metrics).toMatch(/^igw_http_connections\{state="open"\} [12]$/m);
    // what a held one sends is read and dropped, never answered
    const held = over.filter((c) => !c.socket.destroyed);
    held[0]!.socket.write('GET /healthz HTTP/1.1\r\nhost: gw\r\n\r\n');
    await Promise.all(held.map((c) => c.closed));
    const heldFor = performance.now() - started;
    expect(heldFor).toBeGreaterThanOrEqual(2_900);
    expect(heldFor).toBeLessThan(6_000);
    expect(held[0]!.received().match(/HTTP\/1\.1/g)).toHaveLength(1);
    expect(first.socket.destroyed).toBe(false);
  });

  it('an HTTP client reads the answer and its connection: close, and does not wait for the hold', async () => {
    const { port } = await gatewayWith({});
    const first = rawClient(port, '127.0.0.61');
    await first.connected;
    await sleep(100);
    const started = performance.now();
    const answer = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port, localAddress: '127.0.0.61', path: '/healthz', agent: false }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
      req.end();
    });
    expect(answer.status).toBe(429);
    expect(JSON.parse(answer.body)).toEqual({ status: 'error', reason: 'too many connections from this client address' });
    expect(performance.now() - started).toBeLessThan(1_500);
  });

  it('a shutdown closes the held connections at once: they have their answer, nothing is left to drain', async () => {
    // a body slower than the minimum rate: cut with 408 through its request's own response, then held
    const { port, gateway } = await gatewayWith({ HTTP_HOLD_REFUSED_MS: 60_000, HTTP_MIN_BODY_BYTES_PER_S: 1_000, HTTP_BODY_GRACE_MS: 200 });
    const slow = openClient(port, '127.0.0.62', 'POST /v2/rpc HTTP/1.1\r\nhost: gw\r\ncontent-type: application/json\r\ncontent-length: 1000\r\n\r\n{');
    clients.push(slow);
    while (!slow.received().includes('\r\n\r\n')) await sleep(10);
    expect(parseResponse(slow.received())?.status).toBe(408);
    await sleep(200);
    expect(slow.socket.destroyed).toBe(false); // held
    const started = performance.now();
    await closeGracefully(gateway.server, 100);
    expect(performance.now() - started).toBeLessThan(2_000);
    await slow.closed;
  });
});
