import { describe, expect, it } from 'vitest';
import { Fixture } from '../support/fixtures.js';
import { useGateway } from '../support/gateway.js';
import { exchange } from '../support/sockets.js';

// Connection shedding (SHED_NEW_CONNECTIONS_PER_S): many addresses reconnecting in a loop fill the kernel's
// accept queue, and then every client's handshake waits, however cheap its request. Past the summed rate,
// the addresses that opened the most connections recently are answered 429 on accept, before any request
// is read, while an address that opens few is served; once the flood stops, the flooding address is served again.

const tick = { chain: 'eth', protocol: 'erc-20', tick: 'churn' };
const gw = useGateway({
  load: (db) => {
    const f = new Fixture();
    f.tick(tick);
    return f.load(db.sql);
  },
  // a low summed rate so that a test can pass it; the floor keeps an address opening a few under any bar
  config: { HTTP_MAX_CONNECTIONS_PER_CLIENT: 64, SHED_NEW_CONNECTIONS_PER_S: 40, SHED_CLIENT_MIN_CONNECTIONS: 20, SHED_EVENT_LOOP_LAG_MS: 0 },
});

const call = (id: number) => {
  const body = JSON.stringify({ jsonrpc: '2.0', id, method: 'inds_getAllChains', params: [['eth']] });
  return `POST /v2/rpc HTTP/1.1\r\nhost: gw\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`;
};
const port = () => Number(new URL(gw.base).port);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('new connections past SHED_NEW_CONNECTIONS_PER_S', () => {
  it('refuses the address opening the most on accept (429 + Retry-After), serves one opening few, and ends when the flood does', async () => {
    // 127.0.0.2 opens connection after connection, 20 at a time, until one is refused on accept
    let refused: Awaited<ReturnType<typeof exchange>> = null;
    const deadline = Date.now() + 15_000;
    while (!refused && Date.now() < deadline) {
      const replies = await Promise.all(Array.from({ length: 20 }, (_, i) => exchange(port(), call(i), '127.0.0.2')));
      refused = replies.find((r) => r?.status === 429) ?? null;
    }
    expect(refused?.status).toBe(429);
    expect(Number(refused!.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(JSON.parse(refused!.body).reason).toMatch(/opens new connections among the most/);

    // meanwhile, a client opening a few connections is served every time
    for (let i = 0; i < 3; i++) {
      const reply = await exchange(port(), call(100 + i), '127.0.0.3');
      expect(reply?.status).toBe(200);
      expect(JSON.parse(reply!.body).result[0].chain).toBe('eth');
    }

    // the flood stops: once the summed rate is under the bound the bar rises back, and the address is served
    await sleep(1_000);
    let again = await exchange(port(), call(200), '127.0.0.2');
    const until = Date.now() + 20_000;
    while (again?.status !== 200 && Date.now() < until) {
      await sleep(500);
      again = await exchange(port(), call(201), '127.0.0.2');
    }
    expect(again?.status).toBe(200);
  });
});
