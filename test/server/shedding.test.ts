import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config.js';
import { createShedder } from '../../src/server/shedding.js';
import { useGateway } from '../support/gateway.js';
import { Fixture } from '../support/fixtures.js';
import { exchange } from '../support/sockets.js';

// Load shedding by cost: while the event loop is late (SHED_EVENT_LOOP_LAG_MS), the clients whose
// recent answers cost the most are refused first (429 + Retry-After, JSON-RPC -32005 "limit exceeded",
// GraphQL LIMIT_EXCEEDED), a cheap client is served whatever the load, and shedding ends once the loop is on
// time again. The lag is made here (the gateway runs in this process: a busy loop delays its event loop),
// never waited for; what is asserted is who gets refused, not how fast anything is.

describe('the shedding order (one sample at a time)', () => {
  /** A request from `address` whose answer writes `bytes`. */
  function answered(shedder: ReturnType<typeof createShedder>, address: string, bytes: number) {
    const socket = { remoteAddress: address, bytesWritten: 0 };
    const res = new EventEmitter() as unknown as ServerResponse;
    shedder.charge({ socket } as unknown as IncomingMessage, res);
    socket.bytesWritten += bytes;
    res.emit('finish');
  }
  const refusal = (shedder: ReturnType<typeof createShedder>, address: string) =>
    shedder.retryAfterS({ socket: { remoteAddress: address } } as unknown as IncomingMessage);

  it('the most expensive client first, then cheaper ones while the loop stays late, never one under SHED_CLIENT_MIN_BYTES; then off again', () => {
    let t = 0;
    let lag = 0;
    const shedder = createShedder({ lagMs: 100, minBytes: 1_000_000 }, { now: () => t, lagMs: () => lag });
    answered(shedder, '127.0.0.2', 40_000_000); // 8 answers of 5 MB
    answered(shedder, '127.0.0.3', 15_000_000);
    answered(shedder, '127.0.0.4', 500_000); // cheap: under the floor
    shedder.sample();
    expect([refusal(shedder, '127.0.0.2'), refusal(shedder, '127.0.0.3'), refusal(shedder, '127.0.0.4')]).toEqual([0, 0, 0]);

    lag = 500;
    shedder.sample(); // bar: half the top, 20 MB
    expect(refusal(shedder, '127.0.0.2')).toBeGreaterThanOrEqual(1);
    expect(refusal(shedder, '127.0.0.3')).toBe(0);
    shedder.sample(); // still late: 10 MB
    expect(refusal(shedder, '127.0.0.3')).toBeGreaterThanOrEqual(1);
    for (let i = 0; i < 20; i++) shedder.sample(); // down to the floor, never below
    expect(shedder.state().bar).toBe(1_000_000);
    expect(refusal(shedder, '127.0.0.4')).toBe(0);
    expect(refusal(shedder, '10.0.0.1')).toBe(0); // never seen

    lag = 0;
    for (let i = 0; i < 10; i++) shedder.sample();
    expect(shedder.state().bar).toBe(Infinity);
    expect(refusal(shedder, '127.0.0.2')).toBe(0);
    shedder.stop();
  });

  it('one client\'s burst does not press: the summed rate is smoothed over about two seconds', () => {
    let t = 0;
    const shedder = createShedder({ lagMs: 100, minBytes: 1_000_000, totalBytesPerS: 10_000_000 }, { now: () => t, lagMs: () => 0 });
    answered(shedder, '127.0.0.2', 9_000_000); // a page of 9 MB in a quarter of a second
    t = 250;
    shedder.sample();
    expect(shedder.state().bar).toBe(Infinity);
    expect(refusal(shedder, '127.0.0.2')).toBe(0);
  });

  it('answers summed over many addresses past SHED_TOTAL_BYTES_PER_S shed the most expensive, though the loop is on time and each is cheap alone', () => {
    let t = 0;
    const shedder = createShedder({ lagMs: 100, minBytes: 1_000_000, totalBytesPerS: 10_000_000 }, { now: () => t, lagMs: () => 0 });
    // 20 addresses, 3 MB each in one second: 60 MB/s in all, six times the summed bound
    for (let i = 0; i < 20; i++) answered(shedder, `127.0.1.${i}`, 3_000_000 + i);
    answered(shedder, '127.0.0.250', 20_000); // a cheap client beside them
    t = 1_000;
    shedder.sample();
    expect(shedder.state().bar).toBeLessThan(Infinity);
    expect(refusal(shedder, '127.0.1.19')).toBeGreaterThanOrEqual(1);
    expect(refusal(shedder, '127.0.0.250')).toBe(0);
    // nothing answered since: the summed rate falls under the bound and the bar goes back up
    for (let i = 0; i < 8; i++) {
      t += 1_000;
      shedder.sample();
    }
    expect(shedder.state().bar).toBe(Infinity);
    expect(refusal(shedder, '127.0.1.19')).toBe(0);
  });

  it('new connections summed over many addresses past SHED_NEW_CONNECTIONS_PER_S refuse the addresses opening the most, never one under SHED_CLIENT_MIN_CONNECTIONS', () => {
    let t = 0;
    const shedder = createShedder({ lagMs: 100, minBytes: 1_000_000, newConnectionsPerS: 500, minConnections: 50 }, { now: () => t, lagMs: () => 0 });
    const connect = (address: string) => shedder.connectionRetryAfterS({ remoteAddress: address } as unknown as Socket);
    // 100 addresses reconnecting 80 times in a second each (8,000/s in all); a client opening 4 a second
    for (let i = 0; i < 100; i++) for (let n = 0; n < 80; n++) expect(connect(`127.0.2.${i}`)).toBe(0); // no pressure read yet
    for (let n = 0; n < 4; n++) connect('127.0.0.250');
    t = 1_000;
    shedder.sample();
    expect(shedder.state().connectionBar).toBe(50); // half the top (about 37) is under the floor: the floor
    expect(connect('127.0.2.7')).toBeGreaterThanOrEqual(1);
    expect(connect('127.0.0.250')).toBe(0);
    expect(connect('10.0.0.1')).toBe(0); // never seen
    // the flood stops: the summed rate falls, the bar rises back past the top and shedding ends
    for (let i = 0; i < 12; i++) {
      t += 1_000;
      shedder.sample();
    }
    expect(shedder.state().connectionBar).toBe(Infinity);
    expect(connect('127.0.2.7')).toBe(0);
  });

  it('connections are not shed when SHED_NEW_CONNECTIONS_PER_S is 0 (behind a proxy), however late the loop', () => {
    const shedder = createShedder({ lagMs: 100, minBytes: 1, newConnectionsPerS: 0, minConnections: 1 }, { now: () => 0, lagMs: () => 1_000 });
    const socket = { remoteAddress: '127.0.0.9' } as unknown as Socket;
    for (let i = 0; i < 100; i++) shedder.connectionRetryAfterS(socket);
    shedder.sample();
    shedder.sample();
    expect(shedder.connectionRetryAfterS(socket)).toBe(0);
  });

  it('the shedding settings have documented defaults', () => {
    const defaults = configSchema.parse({});
    expect([defaults.SHED_EVENT_LOOP_LAG_MS, defaults.SHED_CLIENT_MIN_BYTES, defaults.SHED_TOTAL_BYTES_PER_S, defaults.SHED_NEW_CONNECTIONS_PER_S, defaults.SHED_CLIENT_MIN_CONNECTIONS])
      .toEqual([200, 8_388_608, 16_777_216, 1_000, 128]);
  });
});

describe('a gateway whose event loop is late', () => {
  const tick = { chain: 'eth', protocol: 'erc-20', tick: 'shed' };
  const live = useGateway({
    load: (db) => {
      const f = new Fixture();
      const t = f.tick(tick);
      for (let i = 0; i < 500; i++) f.mint(t, `0x${(0x5ed00000 + i).toString(16).padStart(40, '0')}`, String(i + 1));
      return f.load(db.sql);
    },
    config: { SHED_EVENT_LOOP_LAG_MS: 100, SHED_CLIENT_MIN_BYTES: 100_000 },
  });
  let port = 0;
  beforeAll(() => {
    port = Number(new URL(live.base).port);
  });

  const rpcPost = (body: string) =>
    `POST /v2/rpc HTTP/1.1\r\nhost: gw\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`;
  const gqlPost = (body: string) =>
    `POST /graphql HTTP/1.1\r\nhost: gw\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`;
  const heavyPage = rpcPost(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'inds_getHoldersByTick', params: [500, 0, tick.chain, tick.protocol, tick.tick, 2] }));
  const cheapCall = rpcPost(JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'inds_getAllChains', params: [['eth']] }));
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

  it('the heavy client gets 429 + Retry-After (-32005 / LIMIT_EXCEEDED) while a cheap one is served; both are served once the loop is on time', async () => {
    // the heavy client's recent answers: well over the 100 KB floor
    // (a start-up pause of this process may be taken for lag: a refusal then is waited out)
    let heavyBytes = 0;
    for (let served = 0; served < 4;) {
      const reply = await exchange(port, heavyPage, '127.0.0.2');
      if (reply?.status === 429) {
        await sleep(250);
        continue;
      }
      expect(reply?.status).toBe(200);
      heavyBytes += reply!.body.length;
      served++;
    }
    expect(heavyBytes).toBeGreaterThan(200_000);
    expect((await exchange(port, cheapCall, '127.0.0.3'))?.status).toBe(200);

    // the event loop made late: 200 ms busy out of every 210
    const jam = setInterval(() => {
      const end = performance.now() + 200;
      while (performance.now() < end) { /* late on purpose */ }
    }, 210);
    try {
      let refused = await exchange(port, heavyPage, '127.0.0.2');
      const deadline = Date.now() + 15_000;
      while (refused?.status !== 429 && Date.now() < deadline) refused = await exchange(port, heavyPage, '127.0.0.2');
      expect(refused?.status).toBe(429);
      expect(Number(refused!.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      const error = JSON.parse(refused!.body).error;
      expect(error).toMatchObject({ code: -32005, message: 'limit exceeded', data: { retryAfter: Number(refused!.headers['retry-after']) } });
      expect(error.data.reason).toMatch(/^server overloaded/);
      expect(error.data.retryable).toBeUndefined();
      const graphql = await exchange(port, gqlPost(JSON.stringify({ query: '{ chains { chain } }' })), '127.0.0.2');
      expect(graphql?.status).toBe(429);
      expect(JSON.parse(graphql!.body).errors[0].extensions).toMatchObject({ code: 'LIMIT_EXCEEDED' });

      // the cheap client, during the same lag: served, every time
      for (let i = 0; i < 3; i++) {
        const cheap = await exchange(port, cheapCall, '127.0.0.3');
        expect(cheap?.status).toBe(200);
        expect(JSON.parse(cheap!.body).result[0].chain).toBe('eth');
      }
      // probes are never shed
      expect((await exchange(port, 'GET /healthz HTTP/1.1\r\nhost: gw\r\nconnection: close\r\n\r\n', '127.0.0.2'))?.status).toBe(200);
    } finally {
      clearInterval(jam);
    }

    // on time again: the heavy client is served
    let again = await exchange(port, heavyPage, '127.0.0.2');
    const deadline = Date.now() + 15_000;
    while (again?.status !== 200 && Date.now() < deadline) {
      await sleep(100);
      again = await exchange(port, heavyPage, '127.0.0.2');
    }
    expect(again?.status).toBe(200);
  });
});
