import { createServer, type Server, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Gateway } from '../../src/app.js';
import { within } from '../../src/db/deadline.js';
import { ServiceUnavailableError } from '../../src/db/errors.js';
import { listen, request, rpc } from '../support/http.js';
import { buildTestGateway } from '../support/gateway.js';

// A database that accepts connections, completes their start-up and then never answers a statement (a hung
// server, a pooler waiting for a server that never comes): start-up, /readyz and requests are bounded by
// the client-side deadlines of src/db/deadline.ts and the statement runner's timer, never held for ever.

describe('a database that accepts connections and never answers a statement', () => {
  let silent: Server;
  const sockets = new Set<Socket>();
  let gateway: Gateway;
  let url: string;

  beforeAll(async () => {
    silent = createServer((socket) => {
      sockets.add(socket);
      // the start-up packet is answered (AuthenticationOk, ReadyForQuery): the connection is up, so the
      // driver's connect timeout no longer applies; every statement after it is read and never answered
      let greeted = false;
      socket.on('data', () => {
        if (greeted) return;
        greeted = true;
        socket.write(Buffer.from([0x52, 0, 0, 0, 8, 0, 0, 0, 0, 0x5a, 0, 0, 0, 5, 0x49]));
      });
      socket.on('close', () => sockets.delete(socket));
    });
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    url = `postgres://postgres@127.0.0.1:${(silent.address() as { port: number }).port}/silent`;
  });

  afterAll(async () => {
    await gateway?.close();
    for (const socket of sockets) socket.destroy();
    await new Promise((resolve) => silent.close(resolve));
  });

  it('start-up completes, /readyz is 503 with a reason and a request is answered -32000, each within a bound', async () => {
    const started = performance.now();
    gateway = buildTestGateway({ target: { url } }, { DB_CONNECT_TIMEOUT_S: 1, DB_STATEMENT_TIMEOUT_MS: 1_000 }).gateway;
    await gateway.ready;
    const readyMs = performance.now() - started;
    // one connect timeout per start-up step at most, well under the state-read bound (1 s + 5 s) each
    expect(readyMs).toBeLessThan(15_000);
    const base = await listen(gateway);
    const ready = await request(`${base}/readyz`);
    expect(ready.status).toBe(503);
    expect(typeof ready.json.reason).toBe('string');
    const reply = await rpc(base, { jsonrpc: '2.0', id: 1, method: 'inds_getTicks', params: [1, 0, '', '', '', '', 0, 1] });
    expect(reply.json.error.code).toBe(-32000);
    expect(reply.json.error.data.retryable).toBe(true);
  }, 30_000);

  it('within(): the value when it settles in time, a ServiceUnavailableError naming the step when not', async () => {
    await expect(within(Promise.resolve(7), 1_000, 'quick')).resolves.toBe(7);
    const never = new Promise<never>(() => {});
    const error = await within(never, 50, 'safety check').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ServiceUnavailableError);
    expect((error as Error).message).toBe('Service unavailable: safety check: no answer within 50 ms');
  });
});
