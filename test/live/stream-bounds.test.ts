import { EventEmitter } from 'node:events';
import type { IncomingMessage, ServerResponse } from 'node:http';
import net from 'node:net';
import { describe, expect, it } from 'vitest';
import { alice, Fixture } from '../support/fixtures.js';
import { indexMint, waitFor } from '../support/ops.js';
import { clientBudget } from '../../src/server/connections.js';
import { startTestGateway, useDatabase, useGateway } from '../support/gateway.js';

// Bounds on live streams: a stream ends with its connection whatever was pipelined on it.

const tick = { chain: 'eth', protocol: 'erc-20', tick: 'bound' };

const db = useDatabase({
  load: async (db) => {
    const f = new Fixture();
    f.mint(f.tick({ ...tick, total_supply: '1000000' }), alice, '10');
    f.block('eth', '100', '2024-01-15T09:00:00.000Z', '2024-01-15T09:00:01.000Z');
    await f.load(db.sql);
    // 1000 holders: a selection of their pages makes big events (~1.5 MB each with 14 aliases)
    await db.sql`INSERT INTO balances (tick_id, address, balance, available)
      SELECT (SELECT id FROM ticks WHERE tick = ${tick.tick}), '0x' || lpad(to_hex(g), 40, '0'), g, g FROM generate_series(1, 1000) g`;
  },
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
  const live = useGateway({ db, config: { CACHE: true, SUBSCRIPTIONS_MAX_PER_CONNECTION: 10 } });

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
  const live = useGateway({ db, config: { CACHE: true } });

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

/** Inserts `n` transfers of the tick in one statement: one notification, `n` events. */
async function burst(n: number) {
  await db.sql`INSERT INTO address_txs (tick_id, address, tx_hash, amount, event, operate, created_at, updated_at)
    SELECT (SELECT id FROM ticks WHERE tick = ${tick.tick}), ${alice}, 'burst' || g || '-' || ${String(Math.random())}, 1, 3, 'transfer', now(), now()
      FROM generate_series(1, ${n}) g`;
}

const holderPages = Array.from({ length: 14 }, (_, i) => `h${i}: holders(first: 1000) { edges { node { address balance } } }`).join(' ');
const bigSelection = `subscription { tickActivity(chain: "eth", protocol: "erc-20", tick: "bound") { tick { ${holderPages} } } }`;

describe('slow consumers', () => {
  it('cuts a stream that never reads with SLOW_CONSUMER, its waiting bytes bounded whatever the selection', async () => {
    const maxPending = 256 * 1024;
    const live = await startTestGateway(db, { CACHE: true, SUBSCRIPTIONS_MAX_PENDING_BYTES: maxPending });
    try {
      const host = new URL(live.base).host;
      const socket = await connectTo(live.base);
      socket.on('error', () => {});
      let received = '';
      socket.on('data', (chunk: Buffer) => void (received += chunk.toString('latin1')));
      socket.write(sseRequest(host, bigSelection));
      await waitFor(async () => live.gateway.live.hub.stats().subscriptions === 1, 5_000);
      await waitFor(async () => received.includes(':\n\n'), 3_000);
      socket.pause(); // never reads again: the kernel's buffers fill, then the gateway's
      let maxWaiting = 0;
      const sampler = setInterval(() => void (maxWaiting = Math.max(maxWaiting, live.gateway.live.streams().pendingBytes)), 2);
      await burst(40); // 40 events of ~1.5 MB: far more than the socket buffers hold
      await waitFor(async () => live.gateway.live.streams().slowConsumers === 1, 15_000);
      clearInterval(sampler);
      await waitFor(async () => live.gateway.live.hub.stats().subscriptions === 0 && live.gateway.live.open() === 0, 3_000);
      // at most the cap and one event (~1.1 MB: one event of any size passes when nothing waits), far from 40 of them
      expect(maxWaiting).toBeGreaterThan(0);
      expect(maxWaiting).toBeLessThanOrEqual(maxPending + 2_000_000);
      // the client reads again: what it was sent ends with the error event, then complete
      socket.resume();
      await waitFor(async () => received.includes('event: complete'), 10_000);
      const events = received.split('event: next\ndata: ').slice(1);
      expect(events.length).toBeLessThan(40);
      expect(events.at(-1)).toContain('"code":"SLOW_CONSUMER"');
      expect(events.at(-1)).toContain('SUBSCRIPTIONS_MAX_PENDING_BYTES');
      socket.destroy();
      await waitFor(async () => live.gateway.live.streams().pendingBytes === 0 && live.gateway.live.streams().streams === 0, 3_000);
      const metrics = await (await fetch(`${live.base}/metrics`)).text();
      expect(metrics).toMatch(/^igw_subscriptions_slow_consumers_total 1$/m);
      expect(metrics).toMatch(/^igw_subscriptions_open\{field="tickActivity"\} 0$/m);
    } finally {
      await live.close();
    }
  }, 40_000);
});

/** Reads an SSE response body into `text`; `stop` aborts it. */
function stream(base: string, query: string, variables: Record<string, unknown> = {}, headers: Record<string, string> = {}) {
  const controller = new AbortController();
  const state = { text: '', status: 0, headers: new Headers(), done: false };
  const started = fetch(`${base}/graphql`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...headers },
    body: JSON.stringify({ query, variables }),
    signal: controller.signal,
  }).then(async (reply) => {
    state.status = reply.status;
    state.headers = reply.headers;
    const decoder = new TextDecoder();
    for await (const chunk of reply.body as unknown as AsyncIterable<Uint8Array>) state.text += decoder.decode(chunk, { stream: true });
  }).catch(() => {}).finally(() => {
    state.done = true;
  });
  return { state, started, stop: () => controller.abort() };
}

const nextEvents = (text: string) => text.split('event: next\ndata: ').slice(1).map((e) => e.split('\n')[0]!);

describe('fan-out', () => {
  it('executes an event once per distinct document and variables, whatever the number of subscribers', async () => {
    const live = await startTestGateway(db, { CACHE: true });
    try {
      const query = 'subscription($a: String!) { addressActivity(address: $a) { amount tick { tick stats { minted } } } }';
      const same = Array.from({ length: 6 }, () => stream(live.base, query, { a: alice }));
      const other = stream(live.base, query, { a: alice.toLowerCase() }); // other variables: a group of its own
      await waitFor(async () => live.gateway.live.hub.stats().subscriptions === 7, 5_000);
      const before = live.gateway.live.streams().executions;
      await indexMint(db.sql, tick, alice, '3');
      await waitFor(async () => [...same, other].every((s) => nextEvents(s.state.text).length === 1), 3_000);
      expect(live.gateway.live.streams().executions - before).toBe(2);
      const events = same.map((s) => nextEvents(s.state.text)[0]);
      expect(new Set(events).size).toBe(1);
      expect(JSON.parse(events[0]!).data.addressActivity).toMatchObject({ amount: '3', tick: { tick: 'bound' } });
      expect(nextEvents(other.state.text)[0]).toBe(events[0]);
      const metrics = await (await fetch(`${live.base}/metrics`)).text();
      expect(metrics).toMatch(new RegExp(`^igw_live_event_executions_total ${before + 2}$`, 'm'));
      for (const s of [...same, other]) s.stop();
      await waitFor(async () => live.gateway.live.open() === 0, 3_000);
    } finally {
      await live.close();
    }
  });

  it('charges stream bytes to the client byte budget as they are written, and cuts a client in debt', async () => {
    const live = await startTestGateway(db, { CACHE: true, HTTP_CLIENT_BYTES_PER_S: 1_024, HTTP_CLIENT_BURST_BYTES: 2 * 1024 * 1024 });
    try {
      const sub = stream(live.base, bigSelection);
      await waitFor(async () => live.gateway.live.hub.stats().subscriptions === 1, 5_000);
      await burst(3); // ~4.5 MB for a 2 MB burst
      await waitFor(async () => sub.state.done, 10_000);
      const events = nextEvents(sub.state.text);
      expect(events.length).toBeLessThan(4);
      expect(events.at(-1)).toContain('"code":"SLOW_CONSUMER"');
      expect(events.at(-1)).toContain('byte budget');
      // the client's next request waits for its budget
      const after = await fetch(`${live.base}/graphql?query=${encodeURIComponent('{ __typename }')}`);
      expect(after.status).toBe(429);
    } finally {
      await live.close();
    }
  });
});

describe('the streams\' share of the connection table', () => {
  it('refuses a stream past SUBSCRIPTIONS_MAX_CONNECTION_SHARE × HTTP_MAX_CONNECTIONS, with 503 and Retry-After', async () => {
    const live = await startTestGateway(db, { CACHE: true, HTTP_MAX_CONNECTIONS: 8, SUBSCRIPTIONS_MAX_CONNECTION_SHARE: 0.5 });
    try {
      const open = Array.from({ length: 4 }, () => stream(live.base, 'subscription { blocks { height } }'));
      await waitFor(async () => live.gateway.live.open() === 4, 5_000);
      const refused = stream(live.base, 'subscription { blocks { height } }');
      await waitFor(async () => refused.state.done, 5_000);
      expect(refused.state.status).toBe(503);
      expect(refused.state.headers.get('retry-after')).toBe('5');
      expect(refused.state.headers.get('connection')).toBe('close'); // its place in the connection table is given back
      expect(refused.state.text).toContain('"code":"TOO_MANY_SUBSCRIPTIONS"');
      // refused streams whose client does not close are held a while before the gateway closes them
      // (src/server/held.ts), outside the table: six of them leave its other half serving
      const body = JSON.stringify({ query: 'subscription { blocks { height } }' });
      const raw = `POST /graphql HTTP/1.1\r\nhost: gw\r\ncontent-type: application/json\r\naccept: text/event-stream\r\ncontent-length: ${body.length}\r\n\r\n${body}`;
      const heldStreams = Array.from({ length: 6 }, () => {
        const socket = net.connect(Number(new URL(live.base).port), '127.0.0.1', () => socket.write(raw));
        const state = { text: '' };
        socket.on('data', (chunk: Buffer) => (state.text += chunk.toString('latin1')));
        socket.on('error', () => {});
        return { socket, state };
      });
      await waitFor(async () => heldStreams.every((h) => h.state.text.includes('TOO_MANY_SUBSCRIPTIONS')), 5_000);
      expect(heldStreams.every((h) => h.state.text.startsWith('HTTP/1.1 503') && !h.socket.destroyed)).toBe(true);
      // the other half of the table still serves requests
      const probe = await fetch(`${live.base}/graphql?query=${encodeURIComponent('{ __typename }')}`);
      expect(probe.status).toBe(200);
      for (const h of heldStreams) h.socket.destroy();
      open[0]!.stop();
      await waitFor(async () => live.gateway.live.open() === 3, 3_000);
      const next = stream(live.base, 'subscription { blocks { height } }');
      await waitFor(async () => live.gateway.live.open() === 4 && next.state.status !== 0, 5_000);
      expect(next.state.status).toBe(200);
      for (const s of [...open, next]) s.stop();
    } finally {
      await live.close();
    }
  });
});

describe('the pace of new streams', () => {
  it('refuses streams opening faster than SUBSCRIPTIONS_MAX_NEW_PER_S before yoga (503, Retry-After: 1), not a keyed request, and refills', async () => {
    const live = await startTestGateway(db, { CACHE: true, SUBSCRIPTIONS_MAX_NEW_PER_S: 3 });
    try {
      const blocks = 'subscription { blocks { height } }';
      const open = Array.from({ length: 3 }, () => stream(live.base, blocks));
      await waitFor(async () => live.gateway.live.open() === 3, 5_000);
      const refused = stream(live.base, blocks);
      await waitFor(async () => refused.state.done, 5_000);
      expect(refused.state.status).toBe(503);
      expect(refused.state.headers.get('retry-after')).toBe('1');
      expect(JSON.parse(refused.state.text)).toEqual({ errors: [{
        message: 'Too many subscriptions opening at once on this gateway (SUBSCRIPTIONS_MAX_NEW_PER_S): retry in a second',
        extensions: { code: 'TOO_MANY_SUBSCRIPTIONS' },
      }] });
      // a request presenting a key is not paced: it reaches the access check (this key is unknown: 401)
      const keyed = stream(live.base, blocks, {}, { 'x-api-key': 'igw_unknown_key_0000000000000000' });
      await waitFor(async () => keyed.state.done, 5_000);
      expect(keyed.state.status).toBe(401);
      // the bucket refills: a second later one more opens
      await new Promise((r) => setTimeout(r, 1_100));
      const later = stream(live.base, blocks);
      await waitFor(async () => live.gateway.live.open() === 4 && later.state.status !== 0, 5_000);
      expect(later.state.status).toBe(200);
      for (const s of [...open, later]) s.stop();
      await waitFor(async () => live.gateway.live.open() === 0, 5_000);
    } finally {
      await live.close();
    }
  });
});

describe('the byte budget and streams', () => {
  it('charges stream bytes as they are written and not again when the response ends', () => {
    let t = 0;
    const budget = clientBudget({ bytesPerS: 1_000, burstBytes: 10_000 }, () => t);
    const socket = Object.assign(new EventEmitter(), { remoteAddress: '127.0.0.9', bytesWritten: 0 });
    const req = { socket } as unknown as IncomingMessage;
    const res = new EventEmitter() as unknown as ServerResponse;
    budget.charge(req, res);
    expect(budget.chargeNow(req, 6_000)).toBe(false);
    expect(budget.chargeNow(req, 6_000)).toBe(true); // 12,000 of a 10,000 burst: in debt at once
    expect(budget.retryAfterS(req)).toBe(2);
    socket.bytesWritten = 12_100; // the stream's bytes and 100 of headers
    res.emit('finish');
    expect(budget.retryAfterS(req)).toBe(3); // 2,100 in debt: only the 100 bytes were charged again
    t = 3_000;
    expect(budget.retryAfterS(req)).toBe(0);
  });
});
