import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from './support/db.js';
import { Fixture } from './support/fixtures.js';
import { startGateway, waitFor, type LiveGateway } from './support/ops.js';

// Bounds on live streams (issue 23): a stream ends with its connection whatever was pipelined on it.

const tick = { chain: 'eth', protocol: 'erc-20', tick: 'bound' };
const A = '0xAbCd000000000000000000000000000000000002';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  const f = new Fixture();
  f.mint(f.tick({ ...tick, total_supply: '1000000' }), A, '10');
  f.block('eth', '100', '2024-01-15T09:00:00.000Z', '2024-01-15T09:00:01.000Z');
  await f.load(db.sql);
});
afterAll(async () => {
  await db?.close();
});

/** A raw SSE subscription request (HTTP/1.1, kept alive), to pipeline several on one socket. */
function sseRequest(host: string, query: string, variables: Record<string, unknown> = {}): string {
  const body = JSON.stringify({ query, variables });
  return `POST /graphql HTTP/1.1\r\nhost: ${host}\r\ncontent-type: application/json\r\naccept: text/event-stream\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

function connectTo(base: string): Promise<net.Socket> {
  const url = new URL(base);
  return new Promise((resolve, reject) => {
    const socket = net.connect({ host: url.hostname, port: Number(url.port) }, () => resolve(socket));
    socket.once('error', reject);
  });
}

describe('a stream ends with its connection', () => {
  let live: LiveGateway;
  beforeAll(async () => {
    live = await startGateway(db, { SUBSCRIPTIONS_MAX_PER_CONNECTION: 10 });
  });
  afterAll(async () => live?.close());

  it('releases every subscription pipelined on one connection when the client closes it', async () => {
    const host = new URL(live.base).host;
    const socket = await connectTo(live.base);
    socket.on('error', () => {});
    socket.resume();
    socket.write(Array.from({ length: 6 }, () => sseRequest(host, 'subscription { blocks { height } }')).join(''));
    await waitFor(async () => live.gateway.live.hub.stats().subscriptions === 6 && live.gateway.live.open() === 6, 5_000);
    socket.destroy();
    await waitFor(async () => live.gateway.live.hub.stats().subscriptions === 0, 3_000);
    await waitFor(async () => live.gateway.live.open() === 0, 3_000);
    const metrics = await (await fetch(`${live.base}/metrics`)).text();
    expect(metrics).toMatch(/^igw_subscriptions_open\{field="blocks"\} 0$/m);
  });
});
