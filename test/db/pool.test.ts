import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, configSchema, loadConfig } from '../../src/config.js';
import { findServer } from '../support/db.js';
import { lockTable } from '../support/locks.js';
import { Fixture } from '../support/fixtures.js';
import { post } from '../support/http.js';
import { capturingLogger } from '../support/ops.js';
import { because, skipUnless } from '../support/skips.js';
import { useDatabase, useGateways } from '../support/gateway.js';

// Fair use of the pool: heavy JSON-RPC batches get a row budget and a few connections, not the pool;
// cheap requests of other clients get through meanwhile; a statement's timer starts when it has a
// connection (queue time is not "query timed out"); a full or slow queue answers "server busy"; the
// request log's dbMs is database time only (never more than the request's duration) and queueMs the wait.
// Contention is made deterministic with a lock on `ticks` held by another session, not with timings.

const onServer = (await findServer()) !== null;
const HOLDERS = 3_000;
const holderAddress = (i: number) => `0x${(0xc0de0000 + i).toString(16).padStart(40, '0')}`;

const db = useDatabase({
  load: async (db) => {
    const f = new Fixture();
    // holder i holds i + 1: sorted by balance, descending, the holder at offset o holds HOLDERS - o
    const crowd = f.tick({ chain: 'eth', protocol: 'erc-20', tick: 'crowd' });
    for (let i = 0; i < HOLDERS; i++) f.mint(crowd, holderAddress(i), String(i + 1));
    for (const tick of ['solo', 'duo', 'trio', 'quad']) f.mint(f.tick({ chain: 'eth', protocol: 'erc-20', tick }), holderAddress(0), '7');
    await f.load(db.sql);
  },
});
const gatewayWith = useGateways(db, { CACHE: false });

const busy = { code: -32000, message: 'Service unavailable', data: { reason: 'server busy', retryable: true } };
// the request's own limit: a client error (EIP-1474 -32005), never retryable as sent
const overBudget = { code: -32005, message: 'limit exceeded', data: { reason: 'request row budget exceeded' } };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Polls until `check` holds (a behavioural wait, not a timing assertion); fails naming `what` after 20 s. */
async function until(what: string, check: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`never happened: ${what}`);
    await sleep(10);
  }
}

/** Turns a hang (what the code before this fix did) into a failure naming `what`. */
function settles<T>(what: string, promise: Promise<T>): Promise<T> {
  let timer: NodeJS.Timeout;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise<never>((_, reject) => { timer = setTimeout(() => reject(new Error(`no answer: ${what}`)), 15_000); }),
  ]);
}

const gql = (base: string, query: string, headers: Record<string, string> = {}) =>
  post(base, { query }, '/graphql', { headers: { 'content-type': 'application/json', ...headers } });
const holdersCall = (id: number, limit: number, offset: number, tick = 'crowd') =>
  ({ jsonrpc: '2.0', id, method: 'inds_getHoldersByTick', params: [limit, offset, 'eth', 'erc-20', tick, 2] });

describe('settings', () => {
  it('every fair-use limit has an environment variable with the documented default, validated by name', () => {
    const defaults = configSchema.parse({});
    expect({
      DB_MAX_QUEUE: defaults.DB_MAX_QUEUE,
      DB_QUEUE_TIMEOUT_MS: defaults.DB_QUEUE_TIMEOUT_MS,
      REQUEST_MAX_ROWS: defaults.REQUEST_MAX_ROWS,
      REQUEST_MAX_CONCURRENT_STATEMENTS: defaults.REQUEST_MAX_CONCURRENT_STATEMENTS,
    }).toEqual({ DB_MAX_QUEUE: 1_000, DB_QUEUE_TIMEOUT_MS: 2_000, REQUEST_MAX_ROWS: 20_000, REQUEST_MAX_CONCURRENT_STATEMENTS: 3 });
    for (const name of ['DB_MAX_QUEUE', 'DB_QUEUE_TIMEOUT_MS', 'REQUEST_MAX_ROWS', 'REQUEST_MAX_CONCURRENT_STATEMENTS']) {
      expect(() => loadConfig({ [name]: '-1' })).toThrow(ConfigError);
      expect(() => loadConfig({ [name]: '-1' })).toThrow(name);
    }
  });
});

describe('fair use of the pool (real PostgreSQL)', skipUnless(onServer, because.noServer), () => {
  afterEach(() => gatewayWith.closeAll());

  const lockTicks = () => lockTable(db.sql, 'ticks');

  /** The gateway's statements waiting for the lock (each holds one pool connection). */
  async function blockedStatements(): Promise<number> {
    const [row] = await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND application_name = 'inscription-gateway' AND wait_event_type = 'Lock'`;
    return row!.n;
  }

  async function poolWaiting(base: string): Promise<number> {
    const text = await (await fetch(`${base}/metrics`)).text();
    return Number(/^igw_db_pool_waiting (\S+)$/m.exec(text)?.[1]);
  }

  it('four 100-element batches of 1000-row pages: no "query timed out", a clear budget error past REQUEST_MAX_ROWS, a cheap request answered first', async () => {
    const log = capturingLogger('info');
    // statement_timeout 1 s (backup timer 2 s): far more than a page takes in PostgreSQL, far less than
    // four such batches take on a pool of 4 (queue time does not count against it)
    // (the database time budget, DB_REQUEST_TIME_BUDGET_MS, is the row budget's sibling: out of the way here)
    const { base, statements } = await gatewayWith({ DB_POOL_MAX: 4, DB_STATEMENT_TIMEOUT_MS: 1_000, REQUEST_MAX_ROWS: 10_000, DB_REQUEST_TIME_BUDGET_MS: 3_600_000 }, { logger: log.logger });
    let heavyDone = 0;
    const offsets = (b: number) => Array.from({ length: 100 }, (_, i) => i * 20 + b * 5);
    const heavy = [0, 1, 2, 3].map((b) =>
      post(base, offsets(b).map((offset, i) => holdersCall(i, 1_000, offset)), '/v2/rpc', { headers: { 'content-type': 'application/json', 'x-request-id': `heavy-${b}` } })
        .then((reply) => { heavyDone++; return reply; }));
    for (const reply of heavy) reply.catch(() => {}); // awaited below; not "unhandled" if an assertion fails first
    // the heavy batches are under way: their statements are being sent
    await until('heavy batches reach the database', () => statements.length >= 8);
    const cheap = await post(base, holdersCall(7, 5, 0, 'solo'), '/v2/rpc', { headers: { 'content-type': 'application/json', 'x-request-id': 'cheap' } });
    const finishedBefore = heavyDone;
    expect(cheap.json.result).toMatchObject({ total: 1, limit: 5, offset: 0, holders: [{ address: holderAddress(0), balance: '7' }] });
    expect(finishedBefore, 'the cheap request is answered before any heavy batch').toBe(0);

    const replies = await Promise.all(heavy);
    for (const [b, reply] of replies.entries()) {
      expect(reply.status).toBe(200);
      expect(reply.json).toHaveLength(100);
      let answered = 0;
      for (const [i, element] of (reply.json as any[]).entries()) {
        expect(element.id).toBe(i);
        expect(element.error?.data?.reason).not.toBe('query timed out');
        if (element.error) {
          expect(element.error).toEqual(overBudget);
          continue;
        }
        answered++;
        const offset = offsets(b)[i]!;
        expect(element.result.holders).toHaveLength(1_000);
        expect(element.result.holders[0].balance).toBe(String(HOLDERS - offset));
        expect(element.result.total).toBe(HOLDERS);
      }
      // 10,000 rows: ten pages (and their counts), give or take the few statements already running
      expect(answered, `batch ${b}`).toBeGreaterThanOrEqual(5);
      expect(answered, `batch ${b}`).toBeLessThanOrEqual(13);
    }

    // honest timings: database time is time with a connection, never more than the request took
    const lines = log.lines.filter((l) => l.msg === 'request');
    for (const id of ['heavy-0', 'heavy-1', 'heavy-2', 'heavy-3', 'cheap']) {
      const line = lines.find((l) => l.reqId === id)!;
      expect(line, id).toBeDefined();
      expect(line.dbMs, id).toBeGreaterThan(0);
      expect(line.dbMs, id).toBeLessThanOrEqual(line.ms);
      expect(typeof line.queueMs, id).toBe('number');
      expect(line.queueMs, id).toBeLessThanOrEqual(line.ms);
    }
    expect(lines.find((l) => l.reqId === 'heavy-0')).toMatchObject({ batch: 100, codes: expect.arrayContaining([-32005]), failure: 'client' });
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toMatch(/^igw_request_queue_seconds_count\{surface="rpc"\} [1-9]/m);
    expect(metrics).toMatch(/^igw_request_db_seconds_count\{surface="rpc"\} [1-9]/m);
  });

  it('REQUEST_MAX_CONCURRENT_STATEMENTS: a blocked batch and a blocked GraphQL request hold two connections each, a third client gets through', async () => {
    const { base } = await gatewayWith({ DB_POOL_MAX: 6, REQUEST_MAX_CONCURRENT_STATEMENTS: 2, DB_STATEMENT_TIMEOUT_MS: 30_000, DB_QUEUE_TIMEOUT_MS: 30_000 });
    const lock = await lockTicks();
    let batch: Promise<Awaited<ReturnType<typeof post>>> | undefined;
    let graphql: Promise<Awaited<ReturnType<typeof post>>> | undefined;
    try {
      batch = post(base, [0, 1, 2, 3].map((i) => ({ jsonrpc: '2.0', id: i, method: 'inds_getTicks', params: [1, i, 'eth', '', '', '', 0, 1] })));
      graphql = gql(base, `{ a: ticks(first: 1) { totalCount edges { node { tick } } }
        b: ticks(first: 2) { totalCount edges { node { tick } } } c: ticks(first: 3) { totalCount edges { node { tick } } } }`);
      // each request's first two statements reach PostgreSQL and wait for the lock; the rest wait in their request's line
      await until('both requests hold their two connections', async () => (await blockedStatements()) === 4);
      const chains = await settles('a third client while two requests are blocked', post(base, { jsonrpc: '2.0', id: 9, method: 'inds_getAllChains', params: [[]] }));
      expect(chains.json.result.map((c: any) => c.chain)).toEqual(['eth', 'avalanche', 'arbitrum', 'bsc', 'fantom', 'polygon', 'btc']);
      expect(await blockedStatements()).toBe(4);
    } finally {
      await lock.release();
    }
    const [b, g] = await Promise.all([batch!, graphql!]);
    expect((b.json as any[]).map((r) => r.result.inscriptions[0].tick)).toEqual(['crowd', 'solo', 'duo', 'trio']);
    expect(g.json.errors).toBeUndefined();
    expect([g.json.data.a.totalCount, g.json.data.b.edges.length, g.json.data.c.edges.length]).toEqual([5, 2, 3]);
  });

  it('a freed connection goes to the queued request holding the fewest connections, not to the oldest statement', async () => {
    const { base, statements } = await gatewayWith({ DB_POOL_MAX: 2, REQUEST_MAX_CONCURRENT_STATEMENTS: 3, DB_STATEMENT_TIMEOUT_MS: 30_000, DB_QUEUE_TIMEOUT_MS: 30_000 });
    const lock = await lockTicks();
    let heavy: Promise<Awaited<ReturnType<typeof post>>> | undefined;
    let cheap: Promise<Awaited<ReturnType<typeof post>>> | undefined;
    let sentBefore = 0;
    try {
      // the batch holds both connections (blocked on the lock) and has a third statement queued first
      heavy = post(base, [0, 1, 2].map((i) => ({ jsonrpc: '2.0', id: i, method: 'inds_getTicks', params: [1, i, 'eth', '', '', '', 0, 1] })));
      await until('the batch holds both connections', async () => (await blockedStatements()) === 2);
      await until('the batch has a statement queued', async () => (await poolWaiting(base)) === 1);
      cheap = post(base, { jsonrpc: '2.0', id: 9, method: 'inds_getAllChains', params: [['eth']] });
      await until('the cheap request is queued behind it', async () => (await poolWaiting(base)) === 2);
      sentBefore = statements.length;
    } finally {
      await lock.release();
    }
    const [h, c] = await Promise.all([heavy!, cheap!]);
    expect((h.json as any[]).map((r) => r.result.inscriptions[0].tick)).toEqual(['crowd', 'solo', 'duo']);
    expect(c.json.result.map((chain: any) => chain.chain)).toEqual(['eth']);
    const next = statements.slice(sentBefore).map((q) => q.replace(/\s+/g, ' ').trim()).find((q) => /\b(ticks|chains)\b/.test(q));
    expect(next).toMatch(/^SELECT \* FROM chains/);
  });

  it('DB_MAX_QUEUE: past the queue limit -32000 / SERVICE_UNAVAILABLE "server busy"; the queued requests are answered', async () => {
    const log = capturingLogger('info');
    const { base } = await gatewayWith({ DB_POOL_MAX: 1, DB_MAX_QUEUE: 1, DB_STATEMENT_TIMEOUT_MS: 30_000, DB_QUEUE_TIMEOUT_MS: 30_000 }, { logger: log.logger });
    const lock = await lockTicks();
    let first: Promise<Awaited<ReturnType<typeof post>>> | undefined;
    let second: Promise<Awaited<ReturnType<typeof post>>> | undefined;
    try {
      // one statement each: the first holds the only connection, the second fills the queue
      first = gql(base, '{ ticks(first: 1) { edges { node { tick } } } }');
      await until('the first request holds the connection', async () => (await blockedStatements()) === 1);
      second = gql(base, '{ ticks(first: 2) { edges { node { tick } } } }');
      await until('the second request is queued', async () => (await poolWaiting(base)) === 1);

      const rpc = await settles('rpc past the queue limit', post(base, { jsonrpc: '2.0', id: 1, method: 'inds_getTicks', params: [3, 0, '', '', '', '', 0, 2] }, '/v2/rpc',
        { headers: { 'content-type': 'application/json', 'x-request-id': 'refused' } }));
      expect(rpc.json).toEqual({ jsonrpc: '2.0', error: busy, id: 1 });
      const refused = await settles('graphql past the queue limit', gql(base, '{ ticks(first: 3) { totalCount } }'));
      expect(refused.json.errors.map((e: any) => [e.message, e.extensions.code])).toContainEqual(['Service unavailable: server busy', 'SERVICE_UNAVAILABLE']);
      expect(refused.json.errors.every((e: any) => e.extensions.code === 'SERVICE_UNAVAILABLE')).toBe(true);
    } finally {
      await lock.release();
    }
    const [a, b] = await Promise.all([first!, second!]);
    expect([a.json.errors, a.json.data.ticks.edges.length]).toEqual([undefined, 1]);
    expect(b.json.data.ticks.edges).toHaveLength(2);
    expect(log.lines.find((l) => l.reqId === 'refused' && l.msg === 'request')).toMatchObject({ code: -32000, dbStatements: 0, dbMs: 0 });
  });

  it('DB_QUEUE_TIMEOUT_MS: a statement that cannot get a connection in time gets "server busy", not "query timed out"', async () => {
    const { base } = await gatewayWith({ DB_POOL_MAX: 1, DB_QUEUE_TIMEOUT_MS: 50, DB_STATEMENT_TIMEOUT_MS: 30_000 });
    const lock = await lockTicks();
    let first: Promise<Awaited<ReturnType<typeof post>>> | undefined;
    try {
      first = gql(base, '{ ticks(first: 1) { edges { node { tick } } } }');
      await until('the first request holds the connection', async () => (await blockedStatements()) === 1);
      const rpc = await settles('a queued rpc call', post(base, { jsonrpc: '2.0', id: 'q', method: 'inds_getTicks', params: [3, 0, '', '', '', '', 0, 2] }));
      expect(rpc.json).toEqual({ jsonrpc: '2.0', error: busy, id: 'q' });
      const graphql = await settles('a queued graphql request', gql(base, '{ chains { chain } }'));
      expect(graphql.json.errors).toEqual([expect.objectContaining({ message: 'Service unavailable: server busy', extensions: { code: 'SERVICE_UNAVAILABLE' } })]);
    } finally {
      await lock.release();
    }
    expect((await first!).json.data.ticks.edges).toHaveLength(1);
    // and once the pool is free, the same call is answered
    const again = await post(base, { jsonrpc: '2.0', id: 'q', method: 'inds_getTicks', params: [3, 0, '', '', '', '', 0, 2] });
    expect(again.json.result.inscriptions).toHaveLength(3);
  });
});
