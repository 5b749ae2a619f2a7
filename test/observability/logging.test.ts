import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createLogger } from '../../src/observability/logger.js';
import { alice, Fixture } from '../support/fixtures.js';
import { capturingLogger } from '../support/ops.js';
import { gql, request, rpc } from '../support/http.js';
import { useGateway } from '../support/gateway.js';

// One JSON log line per request: id (accepted or generated, echoed), surface, operation or method,
// status or error code, duration, database time; never a body, a header or a credential.

const secret = 'hunter2-s3cr3t-value';

const log = capturingLogger('debug');

const live = useGateway({
  load: async (db) => {
    const f = new Fixture();
    const t = f.tick({ chain: 'eth', protocol: 'erc-20', tick: 'logs' });
    f.mint(t, alice, '42');
    await f.load(db.sql);
  },
  config: { CACHE: true },
  logger: log.logger,
});
const requestLines = () => log.lines.filter((l) => l.msg === 'request');
const lineFor = (id: string) => {
  const lines = requestLines().filter((l) => l.reqId === id);
  expect(lines, `one line for ${id}`).toHaveLength(1);
  return lines[0]!;
};

describe('request log', () => {
  it('writes one line per GraphQL request with id, operation, status, duration and database time', async () => {
    const reply = await gql(live.base, 'query HolderBalances($a: String!) { balances(address: $a) { totalCount } }', { a: alice }, { 'x-request-id': 'client-id-1' });
    expect(reply.headers.get('x-request-id')).toBe('client-id-1');
    const line = lineFor('client-id-1');
    expect(line).toMatchObject({
      level: 'info', surface: 'graphql', method: 'POST', path: '/graphql', status: 200,
      operation: 'HolderBalances', cache: 'miss',
    });
    expect(line.ms).toBeGreaterThan(0);
    expect(line.dbMs).toBeGreaterThan(0);
    expect(line.dbStatements).toBeGreaterThan(0);
    expect(line.ms).toBeGreaterThanOrEqual(line.dbMs);
    // served from the cache: no database time
    await gql(live.base, 'query HolderBalances($a: String!) { balances(address: $a) { totalCount } }', { a: alice }, { 'x-request-id': 'client-id-2' });
    expect(lineFor('client-id-2')).toMatchObject({ cache: 'hit', dbMs: 0, dbStatements: 0 });
  });

  it('generates an id when none (or an unusable one) is sent, and echoes it', async () => {
    const plain = await gql(live.base, '{ __typename }');
    const generated = plain.headers.get('x-request-id')!;
    expect(generated).toMatch(/^[0-9a-f-]{36}$/);
    lineFor(generated);
    for (const bad of ['has space', 'x'.repeat(200), 'quote"inside', '<script>']) {
      const reply = await gql(live.base, '{ __typename }', undefined, { 'x-request-id': bad });
      const id = reply.headers.get('x-request-id')!;
      expect(id).not.toBe(bad);
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('names the GraphQL error codes of a failed request', async () => {
    const reply = await gql(live.base, '{ nope }', undefined, { 'x-request-id': 'bad-query' });
    expect(reply.json.errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(lineFor('bad-query')).toMatchObject({ status: reply.status, operation: 'anonymous', errors: ['GRAPHQL_VALIDATION_FAILED'] });
  });

  it('writes one line per JSON-RPC request with the method, the error code, and for a batch each', async () => {
    const ok = await rpc(live.base, { jsonrpc: '2.0', id: 1, method: 'inds_getBalancesByAddress', params: [10, 0, alice, '', '', '', '', 2] }, '/v2/rpc', { 'x-request-id': 'rpc-1' });
    expect(ok.headers.get('x-request-id')).toBe('rpc-1');
    expect(lineFor('rpc-1')).toMatchObject({ surface: 'rpc', path: '/v2/rpc', status: 200, rpcMethod: 'inds_getBalancesByAddress', cache: 'miss' });
    expect(lineFor('rpc-1').dbMs).toBeGreaterThan(0);
    expect(lineFor('rpc-1').code).toBeUndefined();

    await rpc(live.base, { jsonrpc: '2.0', id: 2, method: 'index_getInscriptionByTick', params: ['eth', 'erc-20', 'none'] }, '/v2/rpc', { 'x-request-id': 'rpc-2' });
    expect(lineFor('rpc-2')).toMatchObject({ rpcMethod: 'index_getInscriptionByTick', code: -32603 });

    await rpc(live.base, [
      { jsonrpc: '2.0', id: 1, method: 'inds_getBalancesByAddress', params: [10, 0, alice, '', '', '', '', 2] },
      { jsonrpc: '2.0', id: 2, method: 'nope' },
    ], '/v2/rpc', { 'x-request-id': 'rpc-3' });
    const batch = lineFor('rpc-3');
    expect(batch.batch).toBe(2);
    expect([...batch.rpcMethods].sort()).toEqual(['inds_getBalancesByAddress', 'nope']);
    expect(batch.codes).toEqual([-32601]);
    expect(batch.cacheHits).toBe(1);

    await rpc(live.base, '{"jsonrpc": "2.0", "method": ', '/v2/rpc', { 'x-request-id': 'rpc-4' });
    expect(lineFor('rpc-4')).toMatchObject({ surface: 'rpc', code: -32700 });
  });

  it('never logs a body, a header or a secret', async () => {
    await gql(live.base, `{ balances(address: "${secret}") { totalCount } }`, undefined, { authorization: `Bearer ${secret}`, cookie: `s=${secret}`, 'x-request-id': 'sec-1' });
    await rpc(live.base, { jsonrpc: '2.0', id: 1, method: 'inds_getBalancesByAddress', params: [10, 0, secret, '', '', '', '', 2] }, '/v2/rpc', { authorization: secret, 'x-request-id': 'sec-2' });
    await request(`${live.base}/graphql?query=${encodeURIComponent(`{ balances(address: "${secret}") { totalCount } }`)}`, { headers: { 'x-request-id': 'sec-3' } });
    for (const id of ['sec-1', 'sec-2', 'sec-3']) lineFor(id);
    const all = log.raw.join('\n');
    expect(all).not.toContain(secret);
    expect(all).not.toMatch(/postgres:\/\/|authorization|cookie/i);
    expect(lineFor('sec-3').path).toBe('/graphql');
  });

  it('keeps a client\'s operation name short in the log line', async () => {
    const name = `Long${'x'.repeat(20_000)}`;
    await request(`${live.base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-request-id': 'long-name' },
      body: JSON.stringify({ query: `query ${name} { __typename }`, operationName: name }),
    });
    const line = lineFor('long-name');
    expect(line.operation.startsWith('Longxxx')).toBe(true);
    expect(line.operation.length).toBeLessThanOrEqual(129);
    expect(JSON.stringify(line).length).toBeLessThan(1_000);
  });

  it('logs probes and scrapes at debug level only', async () => {
    await request(`${live.base}/healthz`, { headers: { 'x-request-id': 'probe-1' } });
    await request(`${live.base}/metrics`, { headers: { 'x-request-id': 'scrape-1' } });
    expect(lineFor('probe-1')).toMatchObject({ level: 'debug', surface: 'probe', status: 200 });
    expect(lineFor('scrape-1')).toMatchObject({ level: 'debug', surface: 'metrics', status: 200 });
  });
});

describe('logger', () => {
  it('writes JSON lines with an ISO time and a level name, and respects the level', () => {
    const out = new PassThrough();
    const chunks: string[] = [];
    out.on('data', (c: Buffer) => chunks.push(c.toString()));
    const logger = createLogger({ level: 'warn', destination: out });
    logger.info('not written');
    logger.warn({ n: 1 }, 'written');
    const lines = chunks.join('').trim().split('\n').map((l) => JSON.parse(l));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ level: 'warn', msg: 'written', n: 1, service: 'inscription-gateway' });
    expect(lines[0].time).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it('is human-readable when asked to be (a terminal)', () => {
    const out = new PassThrough();
    const chunks: string[] = [];
    out.on('data', (c: Buffer) => chunks.push(c.toString()));
    const logger = createLogger({ level: 'info', destination: out, pretty: true });
    logger.info({ reqId: 'r1' }, 'hello');
    const text = chunks.join('');
    expect(text).toContain('hello');
    expect(text).toContain('reqId');
    expect(() => JSON.parse(text)).toThrow();
  });
});
