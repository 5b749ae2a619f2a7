import { Agent } from 'node:http';
import { afterAll, beforeAll, describe, expect, it, onTestFinished } from 'vitest';
import type { TestDatabase } from '../support/db.js';
import { startTestGateway, useDatabase, useGateway, type TestGateway } from '../support/gateway.js';
import { Fixture } from '../support/fixtures.js';
import { call, post, wire } from '../support/http.js';

// JSON-RPC 2.0 over HTTP and every error the gateway answers with, against real PostgreSQL.

/** Every error reply text seen in this file, checked for leaks at the end. */
const errorTexts: string[] = [];

const good = (id: unknown) => ({ jsonrpc: '2.0', id, method: 'inds_getAllChains', params: [['eth']] });

const agent = new Agent({ keepAlive: true, maxSockets: 1 });

/** A JSON request through node:http on one kept-alive connection, so hop-by-hop headers (Connection) are seen. */
async function raw(url: string, method: string, body?: string | Buffer, headers: Record<string, string> = {}) {
  const reply = await wire(url, { method, agent, body, headers: { 'content-type': 'application/json', ...headers } });
  return { status: reply.status, headers: reply.headers, text: reply.body.toString('utf8') };
}

async function rpcError(body: unknown, url = main.base, path = '/v2/rpc') {
  const reply = await post(url, body, path);
  expect(reply.status).toBe(200);
  errorTexts.push(reply.text);
  expect(reply.json.result).toBeUndefined();
  return reply.json as { jsonrpc: string; id: unknown; error: { code: number; message: string; data?: any } };
}

/** One tick with one mint and a block. */
function loadRows(db: TestDatabase): Promise<void> {
  const f = new Fixture();
  // a dataset needs one transaction: refresh_counters() fails on an empty transactions table
  f.mint(f.tick({ chain: 'eth', protocol: 'erc-20', tick: 'alpha' }), '0xAaAa00000000000000000000000000000000000A', '5');
  f.block('eth', '19319706', '2024-02-27T15:12:23Z', '2024-02-27T15:14:28Z');
  return f.load(db.sql);
}

const db = useDatabase({ load: loadRows });
const main = useGateway({ db });
const tight = useGateway({ db, config: { RPC_MAX_BATCH: 3, RPC_MAX_BODY_BYTES: 512 } });
afterAll(() => {
  agent.destroy();
});

describe('paths and verbs', () => {
  it('POST /v2/rpc, /v2/rpc/, /v2/rpc/<anything>, /v2/ and /v2 all dispatch on the body method', async () => {
    const paths = ['/v2/rpc', '/v2/rpc/', '/v2/rpc/inds_getAllChains', '/v2/rpc/inds_getTicks', '/v2/rpc/anything/deeper', '/v2/', '/v2', '/v2/rpc?x=1'];
    for (const path of paths) {
      const chains = await post(main.base, good(1), path);
      expect(chains.status, path).toBe(200);
      expect(chains.json.result.map((c: any) => c.chain), path).toEqual(['eth']);
      // the URL says getAllChains, the body says getTicks: the body wins
      const ticks = await call(main.base, 'inds_getTicks', [], path.replace('inds_getTicks', 'inds_getAllChains'));
      expect(ticks.result.inscriptions.map((t: any) => t.tick), path).toEqual(['alpha']);
    }
  });

  it('GET, PUT, DELETE → 405 with an Allow header and a JSON-RPC error body', async () => {
    for (const method of ['GET', 'PUT', 'DELETE', 'PATCH']) {
      // (no body on GET/DELETE: Node's client mis-frames a DELETE body on a kept-alive socket)
      const r = await raw(`${main.base}/v2/rpc`, method, ['GET', 'DELETE'].includes(method) ? undefined : '{}');
      expect(r.status, method).toBe(405);
      expect(r.headers.allow).toMatch(/\bPOST\b/);
      expect(r.headers.allow).toMatch(/\bOPTIONS\b/);
      const body = JSON.parse(r.text);
      expect(body).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600 } });
      errorTexts.push(r.text);
    }
  });

  it('OPTIONS → 204 with CORS headers and no body', async () => {
    const r = await raw(`${main.base}/v2/rpc/inds_getTicks`, 'OPTIONS', undefined, {
      origin: 'https://example.org', 'access-control-request-method': 'POST', 'access-control-request-headers': 'content-type',
    });
    expect(r.status).toBe(204);
    expect(r.text).toBe('');
    expect(r.headers['access-control-allow-origin']).toBe('*');
    expect(r.headers['access-control-allow-methods']).toMatch(/\bPOST\b/);
    expect(r.headers['access-control-allow-headers']).toMatch(/content-type/i);
  });

  it('normal replies: 200, JSON content type, exact Content-Length, keep-alive, CORS origin', async () => {
    for (const body of [JSON.stringify(good(1)), JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'nope' }), '[' + JSON.stringify(good('ü')) + ']']) {
      const r = await raw(`${main.base}/v2/rpc`, 'POST', body);
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toMatch(/^application\/json/);
      expect(Number(r.headers['content-length'])).toBe(Buffer.byteLength(r.text));
      expect(r.headers.connection).toBe('keep-alive');
      expect(r.headers['transfer-encoding']).toBeUndefined();
      expect(r.headers['access-control-allow-origin']).toBe('*');
    }
  });
});

describe('envelopes and ids', () => {
  it('member order: jsonrpc, result | error, id', async () => {
    const ok = await post(main.base, good(7));
    expect(ok.text).toMatch(/^\{"jsonrpc":"2\.0","result":\[.*\],"id":7\}$/);
    const bad = await post(main.base, { jsonrpc: '2.0', id: 8, method: 'nope', params: [] });
    expect(bad.text).toMatch(/^\{"jsonrpc":"2\.0","error":\{"code":-32601,.*\},"id":8\}$/);
    expect(Object.keys(ok.json)).toEqual(['jsonrpc', 'result', 'id']);
    expect(Object.keys(bad.json)).toEqual(['jsonrpc', 'error', 'id']);
  });

  it('ids echoed exactly: strings, 0, negative, null, fractions and big integers byte for byte', async () => {
    const cases: [string, string][] = [
      ['"abc-1"', '"abc-1"'], ['"007"', '"007"'], ['""', '""'], ['"ü \\" \\\\"', '"ü \\" \\\\"'], ['0', '0'], ['-7', '-7'],
      ['null', 'null'], ['12345678901234567890123', '12345678901234567890123'], ['9007199254740993', '9007199254740993'],
      ['1.5', '1.5'], ['1e3', '1e3'], ['2.50', '2.50'],
    ];
    for (const [sent, echoed] of cases) {
      const body = `{"jsonrpc":"2.0","method":"inds_getAllChains","params":[["eth"]],"id":${sent}}`;
      const r = await post(main.base, body);
      expect(r.status, sent).toBe(200);
      expect(r.text.endsWith(`,"id":${echoed}}`), `${sent} → ${r.text.slice(-40)}`).toBe(true);
      expect(r.json.result, sent).toBeDefined();
    }
    // in an error reply and inside a batch as well
    const err = await post(main.base, '{"jsonrpc":"2.0","method":"nope","id":12345678901234567890123}');
    expect(err.text.endsWith(',"id":12345678901234567890123}')).toBe(true);
    const batch = await post(main.base, `[{"jsonrpc":"2.0","method":"inds_getAllChains","params":[["eth"]],"id":98765432109876543210},
      {"jsonrpc":"2.0","method":"nope","id":"x"}]`);
    expect(batch.text).toContain(',"id":98765432109876543210}');
    expect(batch.json.map((r: any) => r.id)).toEqual([98765432109876543210, 'x']);
  });

  it('an id that is neither string, number nor null is an invalid request', async () => {
    for (const id of [true, { a: 1 }, [1]]) {
      const e = await rpcError({ jsonrpc: '2.0', id, method: 'inds_getAllChains', params: [[]] });
      expect(e.error.code).toBe(-32600);
      expect(e.id).toBeNull();
      expect(e.error.data.reason).toMatch(/id/);
    }
  });
});

describe('notifications and batches', () => {
  it('a notification (no id) → 204 with an empty body, whatever it calls', async () => {
    const notes = [
      { jsonrpc: '2.0', method: 'inds_getAllChains', params: [[]] },
      { jsonrpc: '2.0', method: 'nope' },
      { jsonrpc: '2.0', method: 'inds_getTicks', params: ['x'] },
      { jsonrpc: '2.0', method: 'inds_getTicks', params: { limit: 1 } },
      { jsonrpc: '2.0', method: 'index_getInscriptionByTick', params: ['eth', 'erc-20', 'nope'] },
    ];
    for (const n of notes) {
      const r = await raw(`${main.base}/v2/rpc`, 'POST', JSON.stringify(n));
      expect(r.status, JSON.stringify(n)).toBe(204);
      expect(r.text).toBe('');
      expect(r.headers['content-type']).toBeUndefined();
    }
  });

  it('a batch mixing good, bad and notification elements: one reply per non-notification element, in order', async () => {
    const batch = [
      good(1),
      { jsonrpc: '2.0', method: 'inds_getAllChains', params: [[]] }, // notification
      { jsonrpc: '2.0', id: 'b', method: 'nope' },
      { jsonrpc: '1.0', id: 3, method: 'inds_getAllChains' },
      { jsonrpc: '2.0', id: 4, method: 'inds_getTicks', params: ['ten'] },
      42,
      { jsonrpc: '2.0', method: 'nope' }, // notification of an unknown method
      { jsonrpc: '2.0', id: 5, method: 'index_getInscriptionByTick', params: ['eth', 'erc-20', 'nope'] },
      { jsonrpc: '2.0', id: null, method: 'inds_getTicks', params: [1] },
      { id: 6, method: 'inds_getTicks' },
      good(7),
    ];
    const r = await post(main.base, batch);
    expect(r.status).toBe(200);
    expect(Array.isArray(r.json)).toBe(true);
    errorTexts.push(r.text);
    expect(r.json.map((x: any) => x.id)).toEqual([1, 'b', 3, 4, null, 5, null, 6, 7]);
    expect(r.json.map((x: any) => x.error?.code ?? 'ok')).toEqual(['ok', -32601, -32600, -32602, -32600, -32603, 'ok', -32600, 'ok']);
    for (const x of r.json) {
      expect(x.jsonrpc).toBe('2.0');
      expect('result' in x && 'error' in x).toBe(false);
      expect('result' in x || 'error' in x).toBe(true);
    }
    expect(r.json[0].result).toEqual(r.json[8].result);
    expect(r.json[6].result.inscriptions).toHaveLength(1);
  });

  it('a batch of only notifications → 204, empty body', async () => {
    const r = await raw(`${main.base}/v2/rpc`, 'POST', JSON.stringify([
      { jsonrpc: '2.0', method: 'inds_getAllChains', params: [[]] }, { jsonrpc: '2.0', method: 'nope' },
    ]));
    expect(r.status).toBe(204);
    expect(r.text).toBe('');
  });

  it('a batch of one is answered with an array of one', async () => {
    const r = await post(main.base, [good(1)]);
    expect(r.json).toHaveLength(1);
    expect(r.text.startsWith('[{"jsonrpc":"2.0","result":')).toBe(true);
  });
});

describe('errors', () => {
  it('-32700 Parse error, id null: invalid JSON, empty body, whitespace, invalid UTF-8', async () => {
    const bodies: (string | Buffer)[] = [
      '{"jsonrpc":"2.0",', 'not json', '{"jsonrpc":"2.0","id":1,"method":"inds_getTicks",}', "{'a':1}", '', '   \n',
      Buffer.from([0x7b, 0x22, 0x61, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]), // {"a":"\xff\xfe"}
      Buffer.from([0xc3, 0x28]),
      '[1,2', 'NaN', '{"id":1}{"id":2}',
    ];
    for (const body of bodies) {
      const r = await raw(`${main.base}/v2/rpc`, 'POST', body);
      expect(r.status, String(body)).toBe(200);
      errorTexts.push(r.text);
      const reply = JSON.parse(r.text);
      expect(reply, String(body)).toEqual({ jsonrpc: '2.0', error: { code: -32700, message: 'Parse error' }, id: null });
    }
  });

  it('-32600 Invalid request with the reason: not an object, bad jsonrpc, missing method', async () => {
    const cases: [unknown, RegExp][] = [
      [1, /object/], ['"x"', /object/], [null, /object/], [true, /object/],
      [{ id: 1, method: 'inds_getTicks' }, /jsonrpc/], [{ jsonrpc: '1.0', id: 1, method: 'inds_getTicks' }, /jsonrpc/],
      [{ jsonrpc: 2, id: 1, method: 'inds_getTicks' }, /jsonrpc/], [{ jsonrpc: '2.0', id: 1 }, /method/],
      [{ jsonrpc: '2.0', id: 1, method: 5 }, /method/], [{ jsonrpc: '2.0', id: 1, method: 'inds_getTicks', params: 'x' }, /params/],
    ];
    for (const [body, reason] of cases) {
      const e = await rpcError(typeof body === 'string' ? body : JSON.stringify(body));
      expect(e.error.code, JSON.stringify(body)).toBe(-32600);
      expect(e.error.message).toBe('Invalid request');
      expect(e.error.data.reason, JSON.stringify(body)).toMatch(reason);
    }
    // the id is echoed when it could be read
    expect((await rpcError({ jsonrpc: '1.0', id: 'k', method: 'inds_getTicks' })).id).toBe('k');
  });

  it('-32600 for an empty batch and an oversized batch (one error object, not an array)', async () => {
    const empty = await rpcError([]);
    expect(empty).toMatchObject({ id: null, error: { code: -32600, message: 'Invalid request' } });
    expect(empty.error.data.reason).toMatch(/empty batch/);
    const over = await rpcError([good(1), good(2), good(3), good(4)], tight.base);
    expect(Array.isArray(over)).toBe(false);
    expect(over).toMatchObject({ id: null, error: { code: -32600 } });
    expect(over.error.data.reason).toMatch(/batch exceeds 3/);
    const fits = await post(tight.base, [good(1), good(2), good(3)]);
    expect(fits.json.map((x: any) => x.id)).toEqual([1, 2, 3]);
  });

  it('an oversized body → HTTP 413 with a JSON-RPC error body', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'inds_getTicks', params: [10, 0, 'x'.repeat(600)] });
    const r = await raw(`${tight.base}/v2/rpc`, 'POST', body, { connection: 'close' });
    expect(r.status).toBe(413);
    errorTexts.push(r.text);
    const reply = JSON.parse(r.text);
    expect(reply).toMatchObject({ jsonrpc: '2.0', id: null, error: { code: -32600, message: 'Invalid request' } });
    expect(reply.error.data.reason).toMatch(/512 bytes/);
    // a large body in many chunks as well
    const big = await post(tight.base, `[${Array.from({ length: 200 }, () => JSON.stringify(good(1))).join(',')}]`);
    expect(big.status).toBe(413);
    expect(big.json.error.code).toBe(-32600);
    // the server still answers afterwards
    expect((await post(tight.base, good(1))).json.result).toHaveLength(1);
  });

  it('-32601 Method not found, naming the method', async () => {
    for (const method of ['nope', 'inds_gettickS', 'inds_getTicksX', 'index_getTicks', '', 'toString', '__proto__', 'constructor']) {
      const e = await rpcError({ jsonrpc: '2.0', id: 1, method, params: [] });
      expect(e.error, method).toEqual({ code: -32601, message: 'Method not found', data: { method } });
    }
  });

  it("-32602 Invalid params naming the 1-based position and the spec's name", async () => {
    const cases: [string, unknown, RegExp | string, number?][] = [
      ['inds_getTicks', ['10'], "parameter #1 'limit' must be an integer (got string)", 1],
      ['inds_getTicks', [1.5], "parameter #1 'limit' must be an integer (got number 1.5)", 1],
      ['inds_getTicks', [-1], "parameter #1 'limit' must be ≥ 0", 1],
      ['inds_getTicks', [10, -1], "parameter #2 'offset' must be ≥ 0", 2],
      ['inds_getTicks', [10, '0'], "parameter #2 'offset' must be an integer (got string)", 2],
      ['inds_getTicks', [10, 2147483648], "parameter #2 'offset' must be ≤ 2147483647", 2],
      ['inds_getTicks', [10, 0, 5], "parameter #3 'chain' must be a string (got number)", 3],
      ['inds_getTicks', [10, 0, '', '', '', '', 5], "parameter #7 'sort' must be one of 0, 1, 2, 3, 4 (got 5)", 7],
      ['inds_getTicks', [10, 0, '', '', '', '', -1], "parameter #7 'sort' must be one of", 7],
      ['inds_getTicks', [10, 0, '', '', '', '', 0, '1'], "parameter #8 'sort_mode' must be an integer (got string)", 8],
      ['inds_getTicks', [true], "parameter #1 'limit' must be an integer (got boolean)", 1],
      ['inds_getTicks', [[10]], "parameter #1 'limit' must be an integer (got array)", 1],
      ['inds_getTicks', [12345678901234567890], "parameter #1 'limit' must be an integer", 1],
      ['inds_getTransactionByAddress', [10, 0, 'a', '', '', '', 4], "parameter #7 'event' must be one of 0, 1, 2, 3 (got 4)", 7],
      ['inds_getTransactionByAddress', [10, 0, 'a', '', '', '', '', 9], "parameter #8 'event' must be one of 0, 1, 2, 3 (got 9)", 8],
      ['inds_getTransactionByAddress', [10, 0, 'a', '', '', '', 0, 0], "parameter #7 'key' must be a string (got number)", 7],
      ['inds_getBalancesByAddress', [10, 0, 'a', '', '', '', 3], "parameter #7 'key' must be a string (got number)", 7],
      ['inds_getHoldersByTick', [10, 0, 'eth', 'erc-20', 'alpha', 'asc'], "parameter #6 'sort' must be an integer (got string)", 6],
      ['inds_getTransactions', [10, 0, '', '', '', '', 1.0001], "parameter #7 'sortmode' must be an integer (got number 1.0001)", 7],
      ['index_getInscriptionByTick', ['eth', 'erc-20', 7], "parameter #3 'tick' must be a string (got number)", 3],
      ['inds_getAllChains', ['eth'], "parameter #1 'chains' must be an array of strings (got string)", 1],
      ['inds_getAllChains', [['eth', 1]], "parameter #1 'chains' element 1 must be a string (got number)", 1],
      ['inds_getTickBriefs', [{ chain: 'eth', deploy_hash: '0x' }], "parameter #1 'selectors' must be an array", 1],
      ['inds_getTickBriefs', [[{ chain: 'eth' }]], "parameter #1 'selectors' element 0 must be an object with string members chain and deploy_hash", 1],
      ['inds_getTicks', [10, 0, 'x'.repeat(1025)], "parameter #3 'chain' must be at most 1024 characters", 3],
    ];
    for (const [method, params, text, position] of cases) {
      const e = await rpcError({ jsonrpc: '2.0', id: 1, method, params });
      expect(e.error.code, `${method} ${JSON.stringify(params)}`).toBe(-32602);
      expect(e.error.message, `${method} ${JSON.stringify(params)}`).toContain(`Invalid params: ${text}`);
      if (position) expect(e.error.data).toMatchObject({ position });
    }
  });

  it('-32602 for too many params and for params given as an object', async () => {
    const tooMany = await rpcError({ jsonrpc: '2.0', id: 1, method: 'inds_getTicks', params: [10, 0, '', '', '', '', 0, 2, 'x'] });
    expect(tooMany.error.code).toBe(-32602);
    expect(tooMany.error.message).toMatch(/too many params: at most 8 expected, got 9/);
    const nine = await rpcError({ jsonrpc: '2.0', id: 1, method: 'inds_getTransactionByAddress', params: [10, 0, 'a', '', '', '', '', 0, 0] });
    expect(nine.error.message).toMatch(/at most 8 expected, got 9/);
    const briefs = await rpcError({ jsonrpc: '2.0', id: 1, method: 'inds_getTickBriefs', params: [[], []] });
    expect(briefs.error.message).toMatch(/at most 1 expected, got 2/);
    const object = await rpcError({ jsonrpc: '2.0', id: 9, method: 'inds_getTicks', params: { limit: 10 } });
    expect(object).toMatchObject({ id: 9, error: { code: -32602 } });
    expect(object.error.message).toMatch(/params must be an array/);
  });

  it('-32602, not -32604, for a string the database cannot store (NUL character)', async () => {
    for (const [method, params] of [
      ['inds_getTicks', [10, 0, 'eth\u0000']],
      ['inds_getBalancesByAddress', [10, 0, 'a\u0000b']],
      ['inds_getAllChains', [['eth\u0000']]],
      ['inds_getTickBriefs', [[{ chain: 'eth', deploy_hash: '\u0000' }]]],
    ] as [string, unknown[]][]) {
      const e = await rpcError({ jsonrpc: '2.0', id: 1, method, params });
      expect(e.error.code, method).toBe(-32602);
      expect(e.error.message).toMatch(/NUL/);
    }
  });

  it('-32603 Record not found', async () => {
    const e = await rpcError({ jsonrpc: '2.0', id: 1, method: 'index_getInscriptionByTick', params: ['eth', 'erc-20', 'nope'] });
    expect(e.error).toMatchObject({ code: -32603, message: 'Record not found' });
    expect(e.error.data.reason).toMatch(/nope/);
    const h = await rpcError({ jsonrpc: '2.0', id: 1, method: 'inds_getHoldersByTick', params: [10, 0, 'eth', 'erc-20', 'nope', 2] });
    expect(h.error).toMatchObject({ code: -32603, message: 'Record not found' });
  });
});

describe('-32000 Service unavailable', () => {
  let down: TestGateway;
  let downBase: string;
  beforeAll(async () => {
    down = await startTestGateway({ target: { url: 'postgres://postgres@127.0.0.1:1/x' } }, { DB_CONNECT_TIMEOUT_S: 1 }, { ready: false });
    downBase = down.base;
  });
  afterAll(async () => {
    await down?.close();
  });

  it('a database that refuses connections: -32000, retryable, for every method; nothing leaked', async () => {
    const calls: [string, unknown[]][] = [
      ['inds_getTicks', []], ['inds_getAllChains', [[]]], ['index_getInscriptionByTick', ['eth', 'erc-20', 'alpha']],
      ['inds_getHoldersByTick', [10, 0, 'eth', 'erc-20', 'alpha']], ['inds_getTransactions', []],
      ['inds_getBalancesByAddress', [10, 0, 'a']], ['inds_getTransactionByAddress', [10, 0, 'a']],
      ['inds_getTickBriefs', [[{ chain: 'eth', deploy_hash: '0x1' }]]],
    ];
    for (const [method, params] of calls) {
      const e = await rpcError({ jsonrpc: '2.0', id: 3, method, params }, downBase);
      expect(e.error, method).toEqual({ code: -32000, message: 'Service unavailable', data: { reason: 'database unreachable', retryable: true } });
      expect(e.id).toBe(3);
    }
    // params are still checked first: a bad request is the client's, whatever the database's state
    expect((await rpcError({ jsonrpc: '2.0', id: 1, method: 'inds_getTicks', params: ['x'] }, downBase)).error.code).toBe(-32602);
  });
});

describe('-32000 on a query timeout', () => {
  // A server enforces statement_timeout while the statement waits for the lock. The embedded engine
  // ignores statement_timeout, but it queues other connections behind an open transaction, so there
  // the application-side limit (statement timeout + 1 s) answers instead: same code, same reason.
  it('a statement that waits past DB_STATEMENT_TIMEOUT_MS is -32000 "query timed out"', async () => {
    const slow = await startTestGateway(db, { DB_STATEMENT_TIMEOUT_MS: 300 });
    const slowBase = slow.base;
    const holder = await db.sql.reserve();
    try {
      await holder`BEGIN`;
      await holder`LOCK TABLE chains IN ACCESS EXCLUSIVE MODE`;
      const e = await rpcError({ jsonrpc: '2.0', id: 1, method: 'inds_getAllChains', params: [[]] }, slowBase);
      expect(e.error).toEqual({ code: -32000, message: 'Service unavailable', data: { reason: 'query timed out', retryable: true } });
    } finally {
      await holder`ROLLBACK`;
      holder.release();
      await slow.close();
    }
  });
});

describe('-32604 Internal error', () => {
  // runs last: it breaks the read model of this file's database
  it('an unexpected database error is -32604 with no SQL, driver name, stack or path', async () => {
    await db.sql`ALTER TABLE chains RENAME TO chains_gone`;
    await db.sql`ALTER TABLE ticks RENAME COLUMN minted TO minted_gone`;
    await db.sql`ALTER TABLE transactions RENAME TO transactions_gone`;
    // a gateway of its own: nothing it answers can come from an earlier request (pool, cache)
    const broken = await startTestGateway(db, {}, { ready: false });
    const brokenBase = broken.base;
    onTestFinished(() => broken.close());
    for (const [method, params] of [
      ['inds_getAllChains', [[]]], ['inds_getTicks', []], ['inds_getTransactions', []], ['index_getInscriptionByTick', ['eth', 'erc-20', 'alpha']],
    ] as [string, unknown[]][]) {
      const e = await rpcError({ jsonrpc: '2.0', id: 'i', method, params }, brokenBase);
      expect(e, method).toEqual({ jsonrpc: '2.0', error: { code: -32604, message: 'Internal error' }, id: 'i' });
    }
  });

  it('no reply of this file leaks SQL, the driver, a stack trace or a file path', () => {
    expect(errorTexts.length).toBeGreaterThan(50);
    for (const text of errorTexts) {
      for (const needle of ['SELECT', 'select ', 'postgres', 'relation', 'column', '/work/', 'node_modules', '.ts:', '.js:']) {
        expect(text, text).not.toContain(needle);
      }
      expect(text).not.toMatch(/\bat [\w.<>]+ \(|\n\s+at /); // stack frames
    }
    // internal, unavailable and parse errors carry no detail at all that could contain 'at '
    for (const text of errorTexts.filter((t) => /-32604|-32000|-32700/.test(t))) expect(text).not.toContain('at ');
  });
});
