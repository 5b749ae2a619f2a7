import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { addAcceptHandles } from '../../src/server/accept-handles.js';
import { closeGracefully } from '../../src/server/http.js';
import { Fixture } from '../support/fixtures.js';
import { useDatabase, useGateways } from '../support/gateway.js';
import { call } from '../support/http.js';
import { openClient, parseResponse } from '../support/sockets.js';

// Node 20 accepts one pending connection per event-loop turn per listening handle; duplicates of the
// listening socket (HTTP_ACCEPT_HANDLES) accept one each per turn, and hand their connections to the listener,
// whose limits see every one of them.

/** Connections accepted per turn of a loop kept busy `busyMs` a turn, with `pending` connections queued at once. */
async function acceptedPerTurn(handles: number, pending = 200, busyMs = 20): Promise<{ handles: number; perTurn: number; accepted: number }> {
  let accepted = 0;
  const server = net.createServer((socket) => {
    accepted++;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen({ port: 0, host: '127.0.0.1', backlog: 1_024 }, resolve));
  const extra = await addAcceptHandles(server, handles);
  const { port } = server.address() as net.AddressInfo;
  // the handshakes complete in the kernel: every connection is pending before the loop's next turn
  const clients = Array.from({ length: pending }, () => net.connect(port, '127.0.0.1').on('error', () => {}));
  let turns = 0;
  await new Promise<void>((resolve) => {
    const spin = setInterval(() => {
      turns++;
      const until = performance.now() + busyMs;
      while (performance.now() < until);
      if (turns === 20) {
        clearInterval(spin);
        resolve();
      }
    }, 0);
  });
  for (const c of clients) c.destroy();
  extra.close();
  server.close();
  return { handles: extra.count, perTurn: accepted / turns, accepted };
}

describe('duplicate listening handles (HTTP_ACCEPT_HANDLES)', () => {
  it('one handle accepts about one connection a turn; eight accept several a turn', async () => {
    const one = await acceptedPerTurn(1);
    const eight = await acceptedPerTurn(8);
    expect(one.handles).toBe(1);
    expect(eight.handles).toBe(8);
    expect(one.perTurn).toBeLessThanOrEqual(1.5);
    expect(eight.perTurn).toBeGreaterThanOrEqual(3);
    expect(eight.accepted).toBeGreaterThan(one.accepted * 2);
  });

  const db = useDatabase({
    load: async (db) => {
      const f = new Fixture();
      f.mint(f.tick({ chain: 'eth', protocol: 'erc-20', tick: 'dups' }), '0xAAaa000000000000000000000000000000000001', '100');
      await f.load(db.sql);
    },
  });
  const gatewayWith = useGateways(db, {}, { ready: false });

  it('connections accepted by the duplicates are served, and the per-client cap counts them all; close() stops them', async () => {
    const { gateway, port, base } = await gatewayWith({
      HTTP_MAX_CONNECTIONS_PER_CLIENT: 16, HTTP_HEADERS_TIMEOUT_MS: 60_000, HTTP_REQUEST_TIMEOUT_MS: 60_000, HTTP_MIN_BODY_BYTES_PER_S: 0,
      HTTP_HOLD_REFUSED_MS: 300,
    });
    const handles = await addAcceptHandles(gateway.server, 4);
    expect(handles.count).toBe(4);
    // fresh connections, spread over the four handles: every one answered
    for (let round = 0; round < 10; round++) {
      const replies = await Promise.all(Array.from({ length: 4 }, () => call(base, 'inds_getTicks', [10, 0, '', '', '', '', 0, 1])));
      for (const reply of replies) expect(reply.result?.inscriptions[0].tick, JSON.stringify(reply)).toBe('dups');
    }
    // 16 idle connections from 127.0.0.3 fill its cap; the next ones are refused whichever handle took them
    const held = Array.from({ length: 16 }, () => openClient(port, '127.0.0.3'));
    await Promise.all(held.map((c) => c.connected));
    const refused = await Promise.all(Array.from({ length: 8 }, () => openClient(port, '127.0.0.3').closed));
    for (const data of refused) expect(parseResponse(data)?.status).toBe(429);
    for (const c of held) c.destroy();
    // closed: the duplicates stop accepting with the listener (nothing else listens on the port)
    handles.close();
    await new Promise<void>((resolve) => gateway.server.close(() => resolve()));
    const refusedConnect = await new Promise<string>((resolve) => {
      net.connect(port, '127.0.0.1').on('connect', () => resolve('connected')).on('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? e.message));
    });
    expect(refusedConnect).toBe('ECONNREFUSED');
  });

  it('a graceful close waits for the requests on connections another handle took (net.Server counts only its own)', async () => {
    const { gateway } = await gatewayWith({ HTTP_HOLD_REFUSED_MS: 300 });
    // what a duplicate handle does: accept on a listener of its own and hand each connection to the gateway's
    const other = net.createServer((socket) => gateway.server.emit('connection', socket));
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'inds_getAllChains', params: [[]] });
    const client = openClient((other.address() as net.AddressInfo).port, '127.0.0.1',
      `POST /v2/rpc HTTP/1.1\r\nhost: gw\r\ncontent-type: application/json\r\ncontent-length: ${body.length}\r\n\r\n`);
    await client.connected;
    await new Promise((r) => setTimeout(r, 100));
    // the request is in flight (its body still to come) when the listener is closed
    let drained = false;
    const closing = closeGracefully(gateway.server, 50).then(() => (drained = true));
    await new Promise((r) => setTimeout(r, 300));
    expect(drained).toBe(false);
    client.socket.write(body);
    await closing;
    expect(parseResponse(client.received())?.status).toBe(200);
    other.close();
  });
});
