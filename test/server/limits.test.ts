import { connect } from 'node:net';
import { getIntrospectionQuery } from 'graphql';
import postgres from 'postgres';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { configSchema } from '../../src/config.js';
import { defaultQuery } from '../../src/graphql/yoga.js';
import { findServer, testConfig } from '../support/db.js';
import { useDatabase, useGateways } from '../support/gateway.js';
import { lockTable } from '../support/locks.js';
import { Fixture } from '../support/fixtures.js';
import { post } from '../support/http.js';
import { because, skipUnless } from '../support/skips.js';

// Every limit is configurable and proven here with a small setting: body size, batch size, page size,
// GraphQL depth/aliases/tokens/cost, the database's statement_timeout, the pool bound, introspection,
// and the read-only role. Checks that need a real server's features are skipped on the embedded engine.

const onServer = (await findServer()) !== null;
const ticks = ['t1', 't2', 't3', 't4', 't5', 't6', 't7', 't8'];
const holder = '0xAAaa000000000000000000000000000000000001';

const db = useDatabase({
  load: async (db) => {
    const f = new Fixture();
    for (const tick of ticks) f.mint(f.tick({ chain: 'eth', protocol: 'erc-20', tick }), holder, '100');
    await f.load(db.sql);
  },
});
const gatewayWith = useGateways(db, {}, { ready: false });

const rpcBody = (method: string, params: unknown[], id: unknown = 1) => JSON.stringify({ jsonrpc: '2.0', id, method, params });
const gqlBody = (query: string, variables?: Record<string, unknown>) => JSON.stringify({ query, variables });
const postGraphql = async (base: string, body: string | Uint8Array | ReadableStream, headers: Record<string, string> = {}) => {
  const response = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
    ...(body instanceof ReadableStream ? { duplex: 'half' } : {}),
  } as RequestInit);
  return { status: response.status, json: (await response.json()) as any };
};
const codesOf = (json: any) => (json.errors ?? []).map((e: any) => e.extensions?.code);

describe('defaults', () => {
  it('every limit has an environment variable with the documented default', () => {
    const defaults = configSchema.parse({});
    expect({
      RPC_MAX_BODY_BYTES: defaults.RPC_MAX_BODY_BYTES,
      RPC_MAX_BATCH: defaults.RPC_MAX_BATCH,
      GRAPHQL_MAX_BODY_BYTES: defaults.GRAPHQL_MAX_BODY_BYTES,
      MAX_PAGE_SIZE: defaults.MAX_PAGE_SIZE,
      GRAPHQL_MAX_DEPTH: defaults.GRAPHQL_MAX_DEPTH,
      GRAPHQL_MAX_ALIASES: defaults.GRAPHQL_MAX_ALIASES,
      GRAPHQL_MAX_TOKENS: defaults.GRAPHQL_MAX_TOKENS,
      GRAPHQL_MAX_COST: defaults.GRAPHQL_MAX_COST,
      GRAPHQL_MAX_RESULT_NODES: defaults.GRAPHQL_MAX_RESULT_NODES,
      GRAPHQL_MAX_RESPONSE_BYTES: defaults.GRAPHQL_MAX_RESPONSE_BYTES,
      DB_STATEMENT_TIMEOUT_MS: defaults.DB_STATEMENT_TIMEOUT_MS,
      DB_POOL_MAX: defaults.DB_POOL_MAX,
      GRAPHQL_INTROSPECTION: defaults.GRAPHQL_INTROSPECTION,
      SHUTDOWN_TIMEOUT_MS: defaults.SHUTDOWN_TIMEOUT_MS,
    }).toEqual({
      RPC_MAX_BODY_BYTES: 1_048_576, RPC_MAX_BATCH: 100, GRAPHQL_MAX_BODY_BYTES: 1_048_576, MAX_PAGE_SIZE: 1_000,
      GRAPHQL_MAX_DEPTH: 15, GRAPHQL_MAX_ALIASES: 15, GRAPHQL_MAX_TOKENS: 2_000, GRAPHQL_MAX_COST: 250_000,
      GRAPHQL_MAX_RESULT_NODES: 100_000, GRAPHQL_MAX_RESPONSE_BYTES: 16_777_216,
      DB_STATEMENT_TIMEOUT_MS: 5_000, DB_POOL_MAX: 10, GRAPHQL_INTROSPECTION: true, SHUTDOWN_TIMEOUT_MS: 10_000,
    });
    expect(() => configSchema.parse({ GRAPHQL_MAX_DEPTH: '0' })).toThrow();
    expect(() => configSchema.parse({ GRAPHQL_MAX_RESULT_NODES: '10' })).toThrow(/GRAPHQL_MAX_RESULT_NODES/);
    expect(() => configSchema.parse({ GRAPHQL_MAX_RESPONSE_BYTES: 'lots' })).toThrow(/GRAPHQL_MAX_RESPONSE_BYTES/);
  });

  it('the default GraphQL limits let GraphiQL work and stop a nested fan-out', async () => {
    const { base } = await gatewayWith(); // test settings equal the defaults for these limits
    expect(testConfig).toMatchObject({ GRAPHQL_MAX_DEPTH: 15, GRAPHQL_MAX_ALIASES: 15, GRAPHQL_MAX_TOKENS: 2_000, GRAPHQL_MAX_COST: 250_000 });
    const introspection = await postGraphql(base, gqlBody(getIntrospectionQuery({ descriptions: true, inputValueDeprecation: true, specifiedByUrl: true })));
    expect(introspection.status).toBe(200);
    expect(introspection.json.data.__schema.queryType.name).toBe('Query');
    const example = await postGraphql(base, gqlBody(defaultQuery));
    expect(example.json.errors).toBeUndefined();
    const fanOut = await postGraphql(base, gqlBody('{ ticks(first: 1000) { edges { node { holders(first: 1000) { edges { node { address } } } } } } }'));
    expect(fanOut.json.errors[0]).toEqual({ message: expect.stringMatching(/^Query Cost limit of 250000 exceeded/), extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } });
  });
});

describe('body size', () => {
  it('JSON-RPC: RPC_MAX_BODY_BYTES → 413 with a JSON-RPC error body', async () => {
    const { base } = await gatewayWith({ RPC_MAX_BODY_BYTES: 2_048 });
    const padded = (size: number) => {
      const body = rpcBody('inds_getTicks', [1, 0, '', '', '', '', 0, 2]);
      return body.replace('"jsonrpc"', `"pad":"${'x'.repeat(size - body.length - 9)}","jsonrpc"`);
    };
    expect(Buffer.byteLength(padded(2_048))).toBe(2_048);
    const fits = await post(base, padded(2_048));
    expect(fits.status).toBe(200);
    const over = await post(base, padded(2_049));
    expect(over.status).toBe(413);
    expect(over.json).toEqual({ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid request', data: { reason: 'body exceeds 2048 bytes' } }, id: null });
  });

  it('GraphQL: GRAPHQL_MAX_BODY_BYTES → 413 REQUEST_ENTITY_TOO_LARGE, with or without Content-Length', async () => {
    const { base } = await gatewayWith({ GRAPHQL_MAX_BODY_BYTES: 2_048 });
    const query = (pad: number) => gqlBody(`{ __typename }${' '.repeat(pad)}`);
    const fits = await postGraphql(base, query(2_048 - query(0).length));
    expect([fits.status, fits.json.data]).toEqual([200, { __typename: 'Query' }]);
    const over = await postGraphql(base, query(2_049 - query(0).length));
    expect([over.status, over.json.errors]).toEqual([413, [{ message: 'Request body too large', extensions: { code: 'REQUEST_ENTITY_TOO_LARGE' } }]]);
    // chunked: no Content-Length to go by, the limit counts bytes as they arrive
    const bytes = new TextEncoder().encode(query(10_000));
    const chunked = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let i = 0; i < bytes.length; i += 1_000) controller.enqueue(bytes.subarray(i, i + 1_000));
        controller.close();
      },
    });
    const streamed = await postGraphql(base, chunked);
    expect(streamed.status).toBe(413);
    expect(codesOf(streamed.json)).toEqual(['REQUEST_ENTITY_TOO_LARGE']);
  });
});

describe('batch size', () => {
  it('JSON-RPC: RPC_MAX_BATCH elements are answered, one more is one -32600', async () => {
    const { base } = await gatewayWith({ RPC_MAX_BATCH: 3 });
    const call = (id: number) => ({ jsonrpc: '2.0', id, method: 'inds_getTicks', params: [1, id, '', '', '', '', 0, 1] });
    const three = await post(base, [call(0), call(1), call(2)]);
    expect(three.json.map((r: any) => [r.id, r.result.inscriptions[0].tick])).toEqual([[0, 't1'], [1, 't2'], [2, 't3']]);
    const four = await post(base, [call(0), call(1), call(2), call(3)]);
    expect(four.json).toEqual({ jsonrpc: '2.0', error: { code: -32600, message: 'Invalid request', data: { reason: 'batch exceeds 3 requests' } }, id: null });
  });

  it('GraphQL: batches are not accepted (400 BAD_REQUEST)', async () => {
    const { base } = await gatewayWith();
    const batch = await postGraphql(base, JSON.stringify([{ query: '{ __typename }' }, { query: '{ __typename }' }]));
    expect([batch.status, batch.json.errors]).toEqual([400, [{ message: 'Batching is not supported.', extensions: { code: 'BAD_REQUEST' } }]]);
  });
});

describe('page size', () => {
  it('limit and first above MAX_PAGE_SIZE are clamped (and echoed); negative ones refused', async () => {
    const { base } = await gatewayWith({ MAX_PAGE_SIZE: 5 });
    const rpc = await post(base, rpcBody('inds_getTicks', [1_000_000, 0, '', '', '', '', 0, 1]));
    expect(rpc.json.result.inscriptions).toHaveLength(5);
    expect([rpc.json.result.total, rpc.json.result.limit]).toEqual([8, 5]);
    const negative = await post(base, rpcBody('inds_getTicks', [-1, 0, '', '', '', '', 0, 1]));
    expect(negative.json.error).toMatchObject({ code: -32602, data: { param: 'limit', position: 1 } });

    const gql = await postGraphql(base, gqlBody('{ ticks(first: 100) { totalCount edges { node { tick } } pageInfo { hasNextPage } } }'));
    expect(gql.json.data.ticks.edges).toHaveLength(5);
    expect(gql.json.data.ticks.pageInfo.hasNextPage).toBe(true);
    const viaVariable = await postGraphql(base, gqlBody('query($n: Int) { ticks(first: $n) { edges { node { tick } } } }', { n: 2_000_000_000 }));
    expect(viaVariable.json.data.ticks.edges).toHaveLength(5);
    const negativeFirst = await postGraphql(base, gqlBody('{ ticks(first: -1) { totalCount } }'));
    expect(codesOf(negativeFirst.json)).toEqual(['BAD_USER_INPUT']);
  });
});

describe('GraphQL document limits (graphql-armor)', () => {
  const rejected = (json: any, pattern: RegExp) => {
    expect(json.errors).toHaveLength(1);
    expect(json.errors[0].message).toMatch(pattern);
    expect(json.errors[0].extensions).toEqual({ code: 'GRAPHQL_VALIDATION_FAILED' });
  };

  it('GRAPHQL_MAX_DEPTH', async () => {
    const { base } = await gatewayWith({ GRAPHQL_MAX_DEPTH: 4 });
    const atLimit = await postGraphql(base, gqlBody('{ ticks(first: 1) { edges { node { tick } } } }'));
    expect(atLimit.json.data.ticks.edges).toHaveLength(1);
    const over = await postGraphql(base, gqlBody('{ ticks(first: 1) { edges { node { stats { holders } } } } }'));
    rejected(over.json, /Query depth limit of 4 exceeded, found 5/);
    // fragments do not hide depth
    const viaFragment = await postGraphql(base, gqlBody('{ ticks(first: 1) { ...E } } fragment E on TickConnection { edges { node { stats { holders } } } }'));
    rejected(viaFragment.json, /Query depth limit of 4 exceeded/);
  });

  it('GRAPHQL_MAX_ALIASES', async () => {
    const { base } = await gatewayWith({ GRAPHQL_MAX_ALIASES: 2 });
    const two = await postGraphql(base, gqlBody('{ a: chains { chain } b: chains { chain } }'));
    expect(two.json.errors).toBeUndefined();
    const three = await postGraphql(base, gqlBody('{ a: chains { chain } b: chains { chain } c: chains { chain } }'));
    rejected(three.json, /Aliases limit of 2 exceeded, found 3/);
  });

  it('GRAPHQL_MAX_TOKENS', async () => {
    const { base } = await gatewayWith({ GRAPHQL_MAX_TOKENS: 20 });
    const small = await postGraphql(base, gqlBody('{ ticks(first: 1) { totalCount } }'));
    expect(small.json.data.ticks.totalCount).toBe(8);
    const flood = await postGraphql(base, gqlBody(`{ ${'__typename '.repeat(25)}}`));
    rejected(flood.json, /Token limit of 20 exceeded/);
  });

  it('GRAPHQL_MAX_COST, with the page size given literally or as a variable', async () => {
    const { base } = await gatewayWith({ GRAPHQL_MAX_COST: 200 });
    // 1 + first × (edges + node + tick)
    const cheap = await postGraphql(base, gqlBody('{ ticks(first: 5) { edges { node { tick } } } }'));
    expect(cheap.json.data.ticks.edges).toHaveLength(5);
    const costly = await postGraphql(base, gqlBody('{ ticks(first: 100) { edges { node { tick } } } }'));
    rejected(costly.json, /^Query Cost limit of 200 exceeded, found 301 /);
    const viaVariable = await postGraphql(base, gqlBody('query($n: Int) { ticks(first: $n) { edges { node { tick } } } }', { n: 100 }));
    rejected(viaVariable.json, /^Query Cost limit of 200 exceeded, found 301 /);
  });
});

describe('HTTP that never becomes a request', () => {
  /** Writes raw bytes and reads the reply until the server closes the connection. */
  const raw = (base: string, bytes: string) => new Promise<{ status: number; body: any }>((resolve, reject) => {
    const url = new URL(base);
    const socket = connect(Number(url.port), url.hostname, () => socket.end(bytes));
    let data = '';
    socket.on('data', (chunk) => { data += chunk.toString('utf8'); });
    socket.on('error', reject);
    socket.on('close', () => resolve({ status: Number(data.split(' ')[1]), body: JSON.parse(data.slice(data.indexOf('\r\n\r\n') + 4)) }));
  });

  it('headers over 16 KB → 431 and a malformed request → 400, each with its surface\'s error body', async () => {
    const { base } = await gatewayWith();
    const big = `x-pad: ${'a'.repeat(20_000)}\r\n`;
    const gqlReply = await raw(base, `GET /graphql?query=%7B__typename%7D HTTP/1.1\r\nhost: x\r\n${big}\r\n`);
    expect(gqlReply).toEqual({ status: 431, body: { errors: [{ message: 'Invalid request: request line and headers exceed 16 KB', extensions: { code: 'BAD_REQUEST' } }] } });
    const rpcReply = await raw(base, `POST /v2/rpc HTTP/1.1\r\nhost: x\r\n${big}\r\n`);
    expect(rpcReply).toEqual({
      status: 431, body: { jsonrpc: '2.0', error: { code: -32600, message: 'Invalid request', data: { reason: 'request line and headers exceed 16 KB' } }, id: null },
    });
    const garbage = await raw(base, 'POST /v2/rpc HTTP/1.1\r\ncontent-length: x\r\n\r\n');
    expect(garbage.status).toBe(400);
    expect(garbage.body.error).toMatchObject({ code: -32600, data: { reason: 'malformed HTTP request' } });
  });
});

describe('introspection', () => {
  it('on by default: __schema answers and GraphiQL is served', async () => {
    const { base } = await gatewayWith();
    const schema = await postGraphql(base, gqlBody('{ __schema { queryType { name } } }'));
    expect(schema.json.data.__schema.queryType.name).toBe('Query');
    const page = await fetch(`${base}/graphql`, { headers: { accept: 'text/html' } });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('Inscription gateway');
  });

  it('GRAPHQL_INTROSPECTION=false: __schema and __type refused, __typename kept, no GraphiQL', async () => {
    const { base } = await gatewayWith({ GRAPHQL_INTROSPECTION: false });
    for (const query of ['{ __schema { queryType { name } } }', '{ __type(name: "Tick") { name } }']) {
      const reply = await postGraphql(base, gqlBody(query));
      expect(new Set(codesOf(reply.json))).toEqual(new Set(['GRAPHQL_VALIDATION_FAILED']));
      expect(reply.json.errors[0].message).toMatch(/introspection/i);
      expect(reply.json.data).toBeUndefined();
    }
    const typename = await postGraphql(base, gqlBody('{ __typename }'));
    expect([typename.json.data, typename.json.errors]).toEqual([{ __typename: 'Query' }, undefined]);
    const page = await fetch(`${base}/graphql`, { headers: { accept: 'text/html' } });
    expect(await page.text()).not.toContain('Inscription gateway');
  });
});

describe('database limits (real PostgreSQL)', skipUnless(onServer, because.noServer), () => {
  // pg_stat_activity is counted below: only the gateway under test may be connected
  beforeAll(() => gatewayWith.closeAll());
  afterEach(() => gatewayWith.closeAll());

  const lockTicks = () => lockTable(db.sql, 'ticks');

  it('DB_STATEMENT_TIMEOUT_MS is the server\'s statement_timeout: -32000 / SERVICE_UNAVAILABLE "query timed out"', async () => {
    const { gateway, base } = await gatewayWith({ DB_STATEMENT_TIMEOUT_MS: 300 });
    const [setting] = await gateway.sql<{ statement_timeout: string }[]>`SHOW statement_timeout`;
    expect(setting!.statement_timeout).toBe('300ms');
    const lock = await lockTicks();
    try {
      const started = performance.now();
      const rpc = await post(base, rpcBody('inds_getTicks', [3, 0, '', '', '', '', 0, 2]));
      const rpcMs = performance.now() - started;
      expect(rpc.json.error).toEqual({ code: -32000, message: 'Service unavailable', data: { reason: 'query timed out', retryable: true } });
      // the server cancelled it (57014) at 300 ms, well before the application's backup timer (300 + 1000 ms)
      expect(rpcMs).toBeLessThan(1_200);
      const gql = await postGraphql(base, gqlBody('{ ticks(first: 3) { totalCount edges { node { tick } } } }'));
      expect(codesOf(gql.json)).toContain('SERVICE_UNAVAILABLE');
      expect(gql.json.errors[0].message).toBe('Service unavailable: query timed out');
      expect(JSON.stringify(gql.json)).not.toMatch(/canceling statement|ticks WHERE|SELECT/i);
    } finally {
      await lock.release();
    }
    const after = await post(base, rpcBody('inds_getTicks', [3, 0, '', '', '', '', 0, 2]));
    expect(after.json.result.inscriptions).toHaveLength(3);
  });

  it('DB_POOL_MAX bounds the connections: requests queue for the pool instead of opening more', async () => {
    // (queued for as long as the lock is held: no "server busy" here, that is test/db/pool.test.ts)
    const { base } = await gatewayWith({ DB_POOL_MAX: 2, DB_STATEMENT_TIMEOUT_MS: 20_000, DB_QUEUE_TIMEOUT_MS: 20_000 });
    const lock = await lockTicks();
    let peakWaiting = 0;
    let peakTotal = 0;
    let replies: Promise<any>[] = [];
    try {
      replies = Array.from({ length: 12 }, (_, i) => post(base, rpcBody('inds_getTicks', [1, i % 8, '', '', '', '', 0, 1], i)));
      for (let i = 0; i < 20; i++) {
        const [row] = await db.sql<{ waiting: number; total: number }[]>`
          SELECT count(*) FILTER (WHERE wait_event_type = 'Lock')::int AS waiting, count(*)::int AS total
          FROM pg_stat_activity WHERE datname = current_database() AND application_name = 'inscription-gateway'
            AND pid <> pg_backend_pid() AND pid <> ${lock.pid}`;
        peakWaiting = Math.max(peakWaiting, row!.waiting);
        peakTotal = Math.max(peakTotal, row!.total);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    } finally {
      await lock.release();
    }
    const answered = await Promise.all(replies);
    expect(answered.map((r) => r.json.result?.inscriptions.length)).toEqual(Array(12).fill(1));
    expect(peakWaiting).toBe(2);
    // the pool, plus the data-version watcher's own connection and its LISTEN connection
    expect(peakTotal).toBeLessThanOrEqual(2 + 2);
  });

  it('the minimal read-only role (SELECT only) serves both surfaces, and cannot write even with read-only off', async () => {
    const role = `igw_reader_${process.pid}_${Math.random().toString(36).slice(2, 8)}`;
    const [{ database }] = [...(await db.sql<{ database: string }[]>`SELECT current_database() AS database`)] as [{ database: string }];
    // the SQL docs/limits-and-faults.md documents, for this database
    await db.sql.unsafe(`
      CREATE ROLE ${role} LOGIN;
      GRANT CONNECT ON DATABASE ${database} TO ${role};
      GRANT USAGE ON SCHEMA public TO ${role};
      GRANT SELECT ON ALL TABLES IN SCHEMA public TO ${role};
      ALTER ROLE ${role} SET default_transaction_read_only = on;
    `);
    try {
      const url = new URL(db.target.url!);
      url.username = role;
      const { gateway, base } = await gatewayWith({}, { target: { url: url.toString() } });
      const rpc = await post(base, rpcBody('inds_getTicks', [3, 0, '', '', '', '', 0, 1]));
      expect(rpc.json.result.inscriptions.map((t: any) => t.tick)).toEqual(['t1', 't2', 't3']);
      const gql = await postGraphql(base, gqlBody(`{ balances(address: "${holder}", first: 2) { totalCount edges { node { balance tick { tick } } } } }`));
      expect(gql.json.errors).toBeUndefined();
      expect(gql.json.data.balances.totalCount).toBe(8);

      // a write through the gateway's own connection: refused (read-only session)
      await expect(gateway.sql`INSERT INTO chains (chain, chain_id, name, network_id, display_order) VALUES ('x', 9, 'x', 9, 9)`)
        .rejects.toMatchObject({ code: '25006' });
      // and with the session's read-only switched off, the role still cannot write
      const direct = postgres(url.toString(), { max: 1, onnotice: () => {} });
      try {
        await direct`SET default_transaction_read_only = off`;
        await expect(direct`INSERT INTO chains (chain, chain_id, name, network_id, display_order) VALUES ('x', 9, 'x', 9, 9)`)
          .rejects.toMatchObject({ code: '42501' });
        await expect(direct`UPDATE ticks SET holders = 0`).rejects.toMatchObject({ code: '42501' });
      } finally {
        await direct.end({ timeout: 5 });
      }
    } finally {
      await gatewayWith.closeAll();
      await db.sql.unsafe(`DROP OWNED BY ${role}; REVOKE CONNECT ON DATABASE ${database} FROM ${role}; DROP ROLE ${role}`);
    }
  });
});
