import { Agent, request as httpRequest } from 'node:http';
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findServer } from '../support/db.js';
import { useDatabase } from '../support/gateway.js';
import { startGatewayProcess, type GatewayProcess } from '../support/gateway-process.js';
import { hostileFixture } from '../support/hostile.js';
import { classify, exchange, sleep, startLoad, summarise } from '../support/load.js';
import { because, skipUnless } from '../support/skips.js';

// SIGTERM under load, on the real process: requests in flight finish (they are held in the database by
// a lock, so they really are in flight when the signal comes), a request arriving on a kept-alive
// connection during the drain gets a clean 503, new connections are refused, the pool closes and the
// process exits 0. Needs a PostgreSQL server the child process can reach (skipped on the embedded engine).

const onServer = (await findServer()) !== null;

/** Reads pipelined HTTP/1.1 responses (Content-Length framed) from a raw socket until it closes. */
function readResponses(socket: Socket): Promise<{ status: number; headers: Record<string, string>; body: string }[]> {
  return new Promise((resolve, reject) => {
    let data = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => { data = Buffer.concat([data, chunk]); });
    socket.on('error', reject);
    socket.on('close', () => {
      const responses = [];
      let rest = data;
      while (rest.length > 0) {
        const headEnd = rest.indexOf('\r\n\r\n');
        if (headEnd < 0) break;
        const [statusLine, ...lines] = rest.subarray(0, headEnd).toString('latin1').split('\r\n');
        const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
        const length = Number(headers['content-length'] ?? 0);
        const body = rest.subarray(headEnd + 4, headEnd + 4 + length).toString('utf8');
        responses.push({ status: Number(statusLine!.split(' ')[1]), headers, body });
        rest = rest.subarray(headEnd + 4 + length);
      }
      resolve(responses);
    });
  });
}

const rawRequest = (body: string) =>
  `POST /v2/rpc HTTP/1.1\r\nhost: 127.0.0.1\r\nconnection: keep-alive\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;

const refused = (base: string) => new Promise<string>((resolve) => {
  const url = new URL(base);
  const socket = connect(Number(url.port), url.hostname);
  socket.once('connect', () => { socket.destroy(); resolve('connected'); });
  socket.once('error', (error: NodeJS.ErrnoException) => resolve(error.code ?? 'error'));
});

describe('SIGTERM under load', skipUnless(onServer, because.noServerForChild), () => {
  const db = useDatabase();
  let gateway: GatewayProcess | undefined;

  beforeAll(async () => {
    await hostileFixture().load(db.sql);
  });
  afterAll(async () => {
    if (gateway && gateway.child.exitCode === null) await gateway.stop(5_000);
  });

  it('finishes in-flight requests, answers 503 on kept-alive connections, refuses new ones, closes the pool, exits 0', async () => {
    // the load opens a connection per request from one address: not shed on accept here (what is measured is the drain)
    gateway = await startGatewayProcess({ DATABASE_URL: db.target.url!, CACHE: 'false', DB_POOL_MAX: '12', SHUTDOWN_TIMEOUT_MS: '15000', SHED_NEW_CONNECTIONS_PER_S: '0' });
    const { base } = gateway;
    // background load on a table the lock below leaves alone: it runs until the listener closes
    const load = startLoad(base, 4, {
      rpc: { method: 'inds_getAllChains', params: () => [[]] },
      graphql: () => '{ chains { chain name } }',
    });
    await sleep(500);

    // hold the ticks table so that these requests are in flight when the signal comes
    let release!: () => void;
    let lockPid = 0;
    const locked = new Promise<void>((resolve) => {
      void db.sql.begin(async (tx) => {
        await tx`LOCK TABLE ticks IN ACCESS EXCLUSIVE MODE`;
        lockPid = (await tx<{ pid: number }[]>`SELECT pg_backend_pid() AS pid`)[0]!.pid;
        resolve();
        await new Promise<void>((r) => { release = r; });
      });
    });
    await locked;
    const inFlight = [
      ...Array.from({ length: 4 }, (_, i) => exchange(base, '/v2/rpc', JSON.stringify({ jsonrpc: '2.0', id: i, method: 'inds_getTicks', params: [3, i, '', '', '', '', 0, 1] }), 30_000)
        .then((r) => classify('rpc', r.status, r.text))),
      ...Array.from({ length: 4 }, (_, i) => exchange(base, '/graphql', JSON.stringify({ query: `{ ticks(first: 3, offset: ${i}) { totalCount edges { node { tick } } } }` }), 30_000)
        .then((r) => classify('graphql', r.status, r.text))),
    ];
    // and one kept-alive connection with a request in flight
    const url = new URL(base);
    const keptAlive = connect(Number(url.port), url.hostname);
    await new Promise((resolve) => keptAlive.once('connect', resolve));
    const keptAliveReplies = readResponses(keptAlive);
    keptAlive.write(rawRequest(JSON.stringify({ jsonrpc: '2.0', id: 'first', method: 'inds_getTicks', params: [1, 0, '', '', '', '', 0, 1] })));

    // all nine are waiting on the lock
    for (let i = 0; i < 100; i++) {
      const [row] = await db.sql<{ n: number }[]>`
        SELECT count(*)::int AS n FROM pg_stat_activity
        WHERE datname = current_database() AND wait_event_type = 'Lock' AND pid <> ${lockPid}`;
      if (row!.n >= 9) break;
      await sleep(50);
    }

    const gatewayBackends = async () => (await db.sql<{ pid: number }[]>`
      SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'inscription-gateway'
        AND pid <> pg_backend_pid() AND pid <> ${lockPid}`).map((r) => r.pid);
    expect((await gatewayBackends()).length).toBeGreaterThanOrEqual(9);

    const signalledAt = performance.now();
    gateway.child.kill('SIGTERM');
    let refusal = 'connected';
    for (let i = 0; i < 40 && refusal === 'connected'; i++) {
      await sleep(50);
      refusal = await refused(base);
    }
    expect(refusal).toBe('ECONNREFUSED');
    // a second request on the kept-alive connection, during the drain
    keptAlive.write(rawRequest(JSON.stringify({ jsonrpc: '2.0', id: 'second', method: 'inds_getTicks', params: [1, 0, '', '', '', '', 0, 1] })));
    await sleep(300);
    expect(gateway.child.exitCode).toBeNull(); // still draining: the held requests are not done

    release();
    const held = await Promise.all(inFlight);
    expect(held.map((h) => h.outcome)).toEqual(Array(8).fill('ok'));
    const [first, second, ...more] = await keptAliveReplies;
    expect(more).toEqual([]);
    expect(first!.status).toBe(200);
    expect(JSON.parse(first!.body).result.inscriptions).toHaveLength(1);
    expect(second!.status).toBe(503);
    expect(second!.headers.connection).toBe('close');
    expect(JSON.parse(second!.body)).toEqual({
      jsonrpc: '2.0', error: { code: -32000, message: 'Service unavailable', data: { reason: 'shutting down', retryable: true } }, id: null,
    });

    const exit = await Promise.race([gateway.exited, sleep(20_000).then(() => ({ code: 'timeout', signal: null }))]);
    const exitMs = performance.now() - signalledAt;
    expect(exit, gateway.output().slice(-3_000)).toEqual({ code: 0, signal: null });
    expect(gateway.output()).toMatch(/connections drained, database pool closed/);

    const samples = await load.stop();
    const before = summarise(samples.filter((s) => s.end < signalledAt));
    const after = samples.filter((s) => s.start >= signalledAt);
    const afterKinds = new Map<string, number>();
    for (const s of after) afterKinds.set(s.outcome === 'unclean' ? s.detail.split(' ')[0]! : s.outcome, (afterKinds.get(s.outcome === 'unclean' ? s.detail.split(' ')[0]! : s.outcome) ?? 0) + 1);
    // before the signal everything succeeds; once it is sent a new request is answered (it was accepted
    // before the listener closed), refused with a clean 503, or its connection is refused
    expect(before.unclean + before.unavailable, JSON.stringify([...before.details])).toBe(0);
    for (const s of after) {
      if (s.outcome === 'unclean') expect(s.detail, s.detail).toMatch(/^(ECONNREFUSED|ECONNRESET) /);
    }
    expect(afterKinds.get('ECONNREFUSED') ?? 0).toBeGreaterThan(0);

    // the pool is closed: no backend of the gateway is left (the fixture's own two connections aside)
    let left = await gatewayBackends();
    for (let i = 0; i < 40 && left.length > 0; i++) { // a backend process may outlive its socket by a moment
      await sleep(50);
      left = await gatewayBackends();
    }
    expect(left).toEqual([]);
    console.info(
      `[faults.shutdown] before SIGTERM: ${before.total} requests ok; 9 held requests finished after the signal; ` +
      `after it: ${[...afterKinds].map(([k, v]) => `${k} ${v}`).join(', ')}; kept-alive request during the drain: 503; ` +
      `exit code ${exit.code} ${exitMs.toFixed(0)} ms after SIGTERM`,
    );
  }, 90_000);

  it('SHUTDOWN_TIMEOUT_MS: a request still running after the drain timeout is cut and the exit code says so (1)', async () => {
    gateway = await startGatewayProcess({ DATABASE_URL: db.target.url!, CACHE: 'false', SHUTDOWN_TIMEOUT_MS: '500' });
    let release!: () => void;
    const locked = new Promise<void>((resolve) => {
      void db.sql.begin(async (tx) => {
        await tx`LOCK TABLE ticks IN ACCESS EXCLUSIVE MODE`;
        resolve();
        await new Promise<void>((r) => { release = r; });
      });
    });
    await locked;
    try {
      const stuck = exchange(gateway.base, '/v2/rpc', JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'inds_getTicks', params: [] }), 30_000)
        .then(() => 'answered', (error: NodeJS.ErrnoException) => error.code ?? error.message);
      await sleep(300);
      gateway.child.kill('SIGTERM');
      const exit = await Promise.race([gateway.exited, sleep(20_000).then(() => ({ code: 'timeout', signal: null }))]);
      expect(exit).toEqual({ code: 1, signal: null });
      expect(gateway.output()).toMatch(/drain timeout, closing the remaining connections/);
      expect(await stuck).toBe('ECONNRESET');
    } finally {
      release();
    }
  }, 60_000);

  it('keep-alive clients sending back to back across SIGTERM: each request answered, or 503 with Connection: close; none reset (3 runs)', async () => {
    const runs: { answered: number; refusedWhileDraining: number; connectRefused: number; resets: string[]; exit: number | null }[] = [];
    for (let run = 0; run < 3; run++) {
      gateway = await startGatewayProcess({ DATABASE_URL: db.target.url!, CACHE: 'false', SHUTDOWN_TIMEOUT_MS: '10000' });
      const { base } = gateway;
      const outcome = { answered: 0, refusedWhileDraining: 0, connectRefused: 0, resets: [] as string[], exit: null as number | null };
      let signalled = false;
      const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'inds_getAllChains', params: [[]] });
      /** One client: one kept-alive connection at a time, its next request sent as soon as the last reply is in. */
      const client = async () => {
        const agent = new Agent({ keepAlive: true, maxSockets: 1 });
        try {
          for (;;) {
            const reply = await new Promise<{ status: number; connection?: string }>((resolve, reject) => {
              const req = httpRequest(`${base}/v2/rpc`, {
                method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
              }, (res) => {
                res.resume();
                res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
                res.on('error', reject);
              });
              req.on('error', reject);
              req.end(body);
            }).catch((error: NodeJS.ErrnoException) => error);
            if (reply instanceof Error) {
              // the listener is closed: a new connection is refused, as it should be
              if (reply.code === 'ECONNREFUSED' && signalled) return void outcome.connectRefused++;
              outcome.resets.push(`${reply.code ?? ''} ${reply.message}`);
              return;
            }
            if (reply.status === 200) outcome.answered++;
            else if (reply.status === 503 && reply.connection === 'close') outcome.refusedWhileDraining++;
            else return void outcome.resets.push(`unexpected ${reply.status} connection: ${reply.connection}`);
          }
        } finally {
          agent.destroy();
        }
      };
      const clients = Array.from({ length: 8 }, client);
      await sleep(500);
      signalled = true;
      gateway.child.kill('SIGTERM');
      await Promise.all(clients);
      outcome.exit = (await gateway.exited).code;
      runs.push(outcome);
    }
    console.info(`[faults.shutdown] keep-alive clients across SIGTERM, 3 runs of 8 clients: ${runs.map((r) =>
      `${r.answered} answered, ${r.refusedWhileDraining} 503 + close, ${r.connectRefused} new connections refused, ${r.resets.length} resets, exit ${r.exit}`).join('; ')}`);
    expect(runs.flatMap((r) => r.resets)).toEqual([]);
    expect(runs.map((r) => r.exit)).toEqual([0, 0, 0]);
    expect(runs.every((r) => r.connectRefused === 8)).toBe(true);
  }, 120_000);
});
