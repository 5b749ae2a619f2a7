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

/** POSTs a GraphQL request, as JSON or as an event stream; returns status and body text. */
async function post(base: string, body: unknown, stream = false) {
  const reply = await fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: stream ? 'text/event-stream' : 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: reply.status, text: await reply.text() };
}

describe('argument and variable sizes', () => {
  let live: LiveGateway;
  beforeAll(async () => {
    live = await startGateway(db);
  });
  afterAll(async () => live?.close());

  const chains = Array.from({ length: 90_000 }, (_, i) => `c${i}`);
  const big = 'a'.repeat(200_000);

  it('refuses a 90,000-name list, a 200 KB string and oversized variables, for queries and subscriptions alike', async () => {
    const cases: { body: unknown; code: string; says: RegExp }[] = [
      { body: { query: 'subscription($c: [String!]) { blocks(chains: $c) { height } }', variables: { c: chains.slice(0, 5_000) } },
        code: 'BAD_USER_INPUT', says: /list of 5000 items: at most 1000 \(GRAPHQL_MAX_LIST_LENGTH\)/ },
      { body: { query: 'subscription($c: [String!]) { blocks(chains: $c) { height } }', variables: { c: chains } },
        code: 'BAD_USER_INPUT', says: /GRAPHQL_MAX_VARIABLES_BYTES/ },
      { body: { query: 'subscription($a: String!) { addressActivity(address: $a) { id } }', variables: { a: 'b'.repeat(20_000) } },
        code: 'BAD_USER_INPUT', says: /string of 20000 characters: at most 16384 \(GRAPHQL_MAX_STRING_LENGTH\)/ },
      { body: { query: `subscription { addressActivity(address: "${big}") { id } }` },
        code: 'GRAPHQL_VALIDATION_FAILED', says: /GRAPHQL_MAX_STRING_LENGTH/ },
      { body: { query: `{ chain(name: "${big}") { name } }` }, code: 'GRAPHQL_VALIDATION_FAILED', says: /GRAPHQL_MAX_STRING_LENGTH/ },
      { body: { query: 'query($n: [String!]) { chains(names: $n) { name } }', variables: { n: chains.slice(0, 1_001) } },
        code: 'BAD_USER_INPUT', says: /GRAPHQL_MAX_LIST_LENGTH/ },
    ];
    for (const { body, code, says } of cases) {
      for (const stream of [false, true]) {
        const reply = await post(live.base, body, stream);
        expect(reply.text).toContain(`"code":"${code}"`);
        expect(reply.text).toMatch(says);
        // a document error is answered 200 to `accept: application/json` (GraphQL over HTTP), like every validation error
        if (!stream && code === 'BAD_USER_INPUT') expect(reply.status).toBe(400);
      }
    }
    // over GET too
    const get = await fetch(`${live.base}/graphql?query=${encodeURIComponent('query($n: [String!]) { chains(names: $n) { name } }')}` +
      `&variables=${encodeURIComponent(JSON.stringify({ n: Array(1_001).fill('e') }))}`);
    expect(get.status).toBe(400);
    expect(await get.text()).toMatch(/GRAPHQL_MAX_LIST_LENGTH/);
    expect(live.gateway.live.hub.stats().subscriptions).toBe(0);
    // within the bounds: answered
    const ok = await post(live.base, { query: 'query($n: [String!]) { chains(names: $n) { chain } }', variables: { n: ['eth'] } });
    expect(ok.status).toBe(200);
    expect(JSON.parse(ok.text).data).toEqual({ chains: [{ chain: 'eth' }] });
  });
});
