import { describe, expect, it } from 'vitest';
import { Fixture } from '../support/fixtures.js';
import { gql, rpc } from '../support/http.js';
import { loggedGateways, useDatabase } from '../support/gateway.js';

// Client-caused limits are client errors: a request that runs into a limit of its own (here its
// row budget, REQUEST_MAX_ROWS) is told JSON-RPC -32005 "limit exceeded" with data.reason (EIP-1474), never
// -32000 "Service unavailable" with retryable: true, and GraphQL LIMIT_EXCEEDED, never SERVICE_UNAVAILABLE.
// The log says it once, on the request's own line, at info with failure "client": not one warn line
// "database unavailable" (failure "outage") per batch element, which paged operators and made clients loop.

const TRANSACTIONS = 300;

const db = useDatabase({
  load: async (db) => {
    const f = new Fixture();
    const busy = f.tick({ chain: 'eth', protocol: 'erc-20', tick: 'busy' });
    for (let i = 0; i < TRANSACTIONS; i++) f.mint(busy, `0x${(0xbee00000 + i).toString(16).padStart(40, '0')}`, '1');
    await f.load(db.sql);
  },
});
const gatewayWith = loggedGateways(db, { CACHE: false });

const limitExceeded = { code: -32005, message: 'limit exceeded', data: { reason: 'request row budget exceeded' } };

/** The request's log line is written when its response has finished, which may be just after the client has read it. */
async function linesOf(log: { lines: Record<string, any>[] }, reqId: string) {
  const deadline = Date.now() + 5_000;
  while (!log.lines.some((l) => l.reqId === reqId && l.msg === 'request') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  return log.lines.filter((l) => l.reqId === reqId);
}

describe('a request over its own row budget', () => {
  it('JSON-RPC: a batch of 100 × inds_getTransactions(limit 1000) → -32005 "limit exceeded" for the elements past the budget, logged once at info as a client failure', async () => {
    // 300 rows a page, 1,500 rows a request: about five pages answered, the rest refused
    const { base, log } = await gatewayWith({ REQUEST_MAX_ROWS: 1_500 });
    const batch = Array.from({ length: 100 }, (_, id) => ({ jsonrpc: '2.0', id, method: 'inds_getTransactions', params: [1_000, 0, '', 'eth', 'erc-20', 'busy', 1] }));
    const reply = await rpc(base, batch, '/v2/rpc', { 'x-request-id': 'batch-100' });
    expect(reply.status).toBe(200);
    const elements = reply.json as any[];
    expect(elements).toHaveLength(100);
    const answered = elements.filter((e) => e.result);
    const refused = elements.filter((e) => e.error);
    expect(answered.length).toBeGreaterThanOrEqual(3);
    expect(refused.length).toBeGreaterThanOrEqual(80);
    for (const e of answered) expect(e.result.data).toHaveLength(TRANSACTIONS);
    for (const e of refused) {
      expect(e.error).toEqual(limitExceeded);
      expect(e.error.data.retryable).toBeUndefined();
    }

    // one line for the request, at info, saying the client ran into a limit; nothing at warn or error
    const mine = (await linesOf(log, 'batch-100'));
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ msg: 'request', level: 'info', failure: 'client', limit: 'request row budget exceeded', batch: 100 });
    expect(log.lines.filter((l) => l.failure === 'outage')).toEqual([]);
    expect(log.lines.filter((l) => l.level === 'warn' || l.level === 'error')).toEqual([]);

    // metrics count the code the client saw
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toMatch(/^igw_errors_total\{surface="rpc",code="-32005"\} [1-9]/m);
    expect(metrics).not.toMatch(/^igw_errors_total\{surface="rpc",code="-32000"\}/m);
  });

  it('GraphQL: 15 aliased 1000-row pages → LIMIT_EXCEEDED with extensions.reason on the fields past the budget, never SERVICE_UNAVAILABLE', async () => {
    const { base, log } = await gatewayWith({ REQUEST_MAX_ROWS: 1_500 });
    const aliases = Array.from({ length: 15 }, (_, i) =>
      `a${i}: transactions(first: 1000, offset: ${i}, chain: "eth", tick: "busy") { edges { node { txHash } } }`).join('\n');
    const reply = await gql(base, `{ ${aliases} }`, undefined, { 'x-request-id': 'aliases-15' });
    expect(reply.status).toBe(200);
    const errors = reply.json.errors as any[];
    expect(errors.length).toBeGreaterThanOrEqual(1);
    for (const error of errors) {
      expect(error.extensions).toEqual({ code: 'LIMIT_EXCEEDED', reason: 'request row budget exceeded' });
      expect(error.message).toBe('Limit exceeded: request row budget exceeded');
    }
    const mine = (await linesOf(log, 'aliases-15'));
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ msg: 'request', level: 'info', failure: 'client', errors: ['LIMIT_EXCEEDED'] });
    expect(log.lines.filter((l) => l.level === 'warn' || l.level === 'error')).toEqual([]);
  });
});

describe('rows held by all requests in progress past REQUESTS_MAX_ROWS_HELD', () => {
  it('refuses the further statements of a request already holding many rows (-32005, logged as the client\'s), never one holding few', async () => {
    // 300 rows a page: a batch holds 2,100 rows after seven pages, past the heavy mark (1,000) and the bound of all requests
    const { base, log } = await gatewayWith({ REQUESTS_MAX_ROWS_HELD: 2_000, REQUEST_MAX_ROWS: 100_000 });
    const batch = Array.from({ length: 20 }, (_, id) => ({ jsonrpc: '2.0', id, method: 'inds_getTransactions', params: [1_000, 0, '', 'eth', 'erc-20', 'busy', 1] }));
    const reply = await rpc(base, batch, '/v2/rpc', { 'x-request-id': 'summed-rows' });
    const elements = reply.json as any[];
    const answered = elements.filter((e) => e.result);
    const refused = elements.filter((e) => e.error);
    expect(answered.length).toBeGreaterThanOrEqual(3);
    expect(refused.length).toBeGreaterThanOrEqual(10);
    for (const e of answered) expect(e.result.data).toHaveLength(TRANSACTIONS);
    for (const e of refused) {
      expect(e.error).toMatchObject({ code: -32005, message: 'limit exceeded' });
      expect(e.error.data.reason).toMatch(/^server overloaded: rows held by all requests past REQUESTS_MAX_ROWS_HELD/);
      expect(e.error.data.retryable).toBeUndefined();
    }
    // a request holding few rows is served whatever the others hold; once the batch has ended its rows are released
    const small = await rpc(base, { jsonrpc: '2.0', id: 1, method: 'inds_getTransactions', params: [10, 0, '', 'eth', 'erc-20', 'busy', 1] });
    expect((small.json as any).result.data).toHaveLength(10);
    const [line] = await linesOf(log, 'summed-rows');
    expect(line).toMatchObject({ msg: 'request', level: 'info', failure: 'client' });
    expect(line!.limit).toMatch(/^server overloaded: rows held/);
    // the batch has ended: its rows are released, and five pages (1,500 rows, under the bound) are all answered
    const again = await rpc(base, batch.slice(0, 5));
    expect((again.json as any[]).map((e) => e.result?.data.length)).toEqual([300, 300, 300, 300, 300]);
  });
});

describe('reply bytes held by all requests in progress past REQUESTS_MAX_ANSWER_BYTES_HELD', () => {
  it('cuts a batch short once it holds 256 KiB of replies while all requests hold more than the bound (-32005, the client\'s), and serves small requests', async () => {
    // 300 transactions a page (~90 KB of text): past 256 KiB after three pages; the bound (1 KiB) is passed by then
    const { base, log } = await gatewayWith({ REQUESTS_MAX_ANSWER_BYTES_HELD: 1_024, REQUEST_MAX_ROWS: 100_000, REQUEST_MAX_CONCURRENT_STATEMENTS: 1 });
    const batch = Array.from({ length: 20 }, (_, id) => ({ jsonrpc: '2.0', id, method: 'inds_getTransactions', params: [1_000, 0, '', 'eth', 'erc-20', 'busy', 1] }));
    const reply = await rpc(base, batch, '/v2/rpc', { 'x-request-id': 'summed-bytes' });
    const elements = reply.json as any[];
    expect(elements).toHaveLength(20);
    const answered = elements.filter((e) => e.result);
    const refused = elements.filter((e) => e.error);
    const pageBytes = JSON.stringify(answered[0]).length;
    // answered until the batch held 256 KiB, then every later element refused unrun
    expect(answered.length).toBe(Math.ceil((256 * 1024) / pageBytes));
    expect(elements.slice(0, answered.length).every((e) => e.result)).toBe(true);
    for (const e of answered) expect(e.result.data).toHaveLength(TRANSACTIONS);
    expect(refused.length).toBe(20 - answered.length);
    for (const e of refused) {
      expect(e.error).toMatchObject({ code: -32005, message: 'limit exceeded' });
      expect(e.error.data.reason).toMatch(/^server overloaded: answer bytes held by all requests past REQUESTS_MAX_ANSWER_BYTES_HELD/);
      expect(e.error.data.retryable).toBeUndefined();
    }
    const [line] = await linesOf(log, 'summed-bytes');
    expect(line).toMatchObject({ msg: 'request', level: 'info', failure: 'client' });
    expect(line!.limit).toMatch(/^server overloaded: answer bytes held/);
    // the batch has ended and released its bytes: a small request, and a batch under 256 KiB, are answered whole
    const small = await rpc(base, batch.slice(0, 2));
    expect((small.json as any[]).map((e) => e.result?.data.length)).toEqual([TRANSACTIONS, TRANSACTIONS]);
  });
});
