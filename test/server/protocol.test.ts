import { renderGraphiQL } from '@graphql-yoga/render-graphiql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderGraphiQLApart } from '../../src/graphql/graphiql-render.js';
import { graphqlGetPath, wire, type WireRequest } from '../support/http.js';
import { openClient, parseResponse } from '../support/sockets.js';
import { loadDemo, startTestGateway, type TestGateway, useGateway } from '../support/gateway.js';

// Protocol quirks, each answered the way a client (or a cache, or a
// browser) can rely on: conditional requests that never skip execution or revalidate a POST, one ETag per
// representation, a reply to a JSON-RPC request followed by a stray byte, node(id) at a height refused like
// atBlock, no internals in the invalid-JSON error, and no form-encoded POST executed (CSRF).

/** A request over node:http, its body as latin1 text (one character a byte: lengths are byte counts). */
async function raw(base: string, path: string, init: WireRequest = {}) {
  const reply = await wire(`${base}${path}`, init);
  return { ...reply, body: reply.body.toString('latin1') };
}

const json = { accept: 'application/json' };
const query = '{ ticks(first: 20, orderBy: HOLDERS, direction: DESC) { edges { node { id chainName tick stats { holders } } } } }';
const unique = () => ({ n: `${Date.now()}-${Math.random()}` });

const live = useGateway({ load: loadDemo, config: { CACHE: true } });

describe('conditional requests', () => {
  it('If-None-Match: * on a cache miss executes the query: a failing one gets its errors, never 304', async () => {
    const failing = await raw(live.base, graphqlGetPath('{ nope }', unique()), { headers: { ...json, 'if-none-match': '*' } });
    expect(failing.status).not.toBe(304);
    expect(JSON.parse(failing.body).errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(failing.headers['cache-control']).toBe('no-store');
    const badInput = await raw(live.base, graphqlGetPath('{ ticks(first: -1) { totalCount } }', unique()),
      { headers: { ...json, 'if-none-match': '*' } });
    expect(badInput.status).not.toBe(304);
    expect(JSON.parse(badInput.body).errors[0].extensions.code).toBe('BAD_USER_INPUT');
    // a query never answered before: executed and answered in full (nothing was there to be "not modified")
    const fresh = await raw(live.base, graphqlGetPath('{ chains { chain } }', unique()), { headers: { ...json, 'if-none-match': '*' } });
    expect(fresh.status).toBe(200);
    expect(JSON.parse(fresh.body).data.chains.length).toBeGreaterThan(0);
  });

  it('If-None-Match on a POST never gives 304, whatever the tag', async () => {
    const get = await raw(live.base, graphqlGetPath(query), { headers: json });
    const etag = String(get.headers.etag);
    for (const sent of [etag, '*', `W/${etag}`]) {
      const post = await raw(live.base, '/graphql', {
        method: 'POST', headers: { ...json, 'content-type': 'application/json', 'if-none-match': sent }, body: JSON.stringify({ query }),
      });
      expect(post.status, sent).toBe(200);
      expect(JSON.parse(post.body).data.ticks.edges.length).toBeGreaterThan(0);
    }
  });

  it('one ETag per representation (identity, gzip, br), with Vary: Accept-Encoding, on 200s and 304s', async () => {
    const path = graphqlGetPath(query, unique());
    const tags = new Set<string>();
    for (const coding of ['identity', 'gzip', 'br']) {
      const r = await raw(live.base, path, { headers: { ...json, 'accept-encoding': coding } });
      expect(r.status).toBe(200);
      expect(String(r.headers.vary)).toMatch(/Accept-Encoding/);
      tags.add(String(r.headers.etag));
      const again = await raw(live.base, path, { headers: { ...json, 'accept-encoding': coding, 'if-none-match': String(r.headers.etag) } });
      expect(again.status).toBe(304);
      expect(again.headers.etag, `the 304 names the ${coding} representation`).toBe(r.headers.etag);
      expect(String(again.headers.vary)).toMatch(/Accept-Encoding/);
      // `*` on a hit: 304
      const any = await raw(live.base, path, { headers: { ...json, 'accept-encoding': coding, 'if-none-match': '*' } });
      expect(any.status).toBe(304);
    }
    expect(tags.size).toBe(3);
  });
});

describe('JSON-RPC framing', () => {
  it('a complete request followed by one stray byte gets its reply (and the stray byte a 400), never silence', async () => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'inds_getLastBlockNumberIndexed', params: [['avalanche']] });
    const port = Number(new URL(live.base).port);
    const client = openClient(port, '127.0.0.1',
      `POST /v2/rpc HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}X`);
    const timer = setTimeout(() => client.destroy(), 5_000);
    const received = await client.closed;
    clearTimeout(timer);
    const first = parseResponse(received);
    expect(first, `received: ${JSON.stringify(received.slice(0, 200))}`).not.toBeNull();
    expect(first!.status).toBe(200);
    expect(JSON.parse(first!.body)).toMatchObject({ jsonrpc: '2.0', id: 7 });
    // the stray byte: the start of a request that cannot be one
    expect(received.slice(received.indexOf('HTTP/1.1', 1))).toMatch(/^HTTP\/1\.1 400 /);
  });
});

describe('GraphQL', () => {
  it('node(id) at a height above the indexed one is refused as atBlock is', async () => {
    const listed = await raw(live.base, '/graphql', {
      method: 'POST', headers: { ...json, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ tick(chain: "avalanche", protocol: "asc-20", tick: "crazydog") { recordId holders(first: 1) { edges { node { address } } } } chains { chain latestBlock { number } } }' }),
    });
    const data = JSON.parse(listed.body).data;
    const indexed = BigInt(data.chains.find((c: { chain: string }) => c.chain === 'avalanche').latestBlock.number);
    const address = data.tick.holders.edges[0].node.address;
    const above = (indexed + 1000n).toString();
    const viaArg = await raw(live.base, '/graphql', {
      method: 'POST', headers: { ...json, 'content-type': 'application/json' },
      body: JSON.stringify({ query: `{ tick(chain: "avalanche", protocol: "asc-20", tick: "crazydog") { holders(first: 1, atBlock: "${above}") { edges { node { address } } } } }` }),
    });
    const refusal = JSON.parse(viaArg.body).errors[0];
    expect(refusal.message).toMatch(/above the indexed height/);
    for (const type of ['Holder', 'Balance']) {
      const id = Buffer.from(`${type}:${data.tick.recordId}:${address}@${above}`).toString('base64');
      const viaNode = await raw(live.base, '/graphql', {
        method: 'POST', headers: { ...json, 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'query($id: ID!) { node(id: $id) { id } }', variables: { id } }),
      });
      const reply = JSON.parse(viaNode.body);
      expect(reply.errors?.[0]?.message, type).toBe(refusal.message);
      expect(reply.errors[0].extensions.code).toBe(refusal.extensions.code);
      expect(reply.data?.node ?? null).toBeNull();
      // at the indexed height itself it is answered
      const atIndexed = Buffer.from(`${type}:${data.tick.recordId}:${address}@${indexed}`).toString('base64');
      const ok = await raw(live.base, '/graphql', {
        method: 'POST', headers: { ...json, 'content-type': 'application/json' },
        body: JSON.stringify({ query: 'query($id: ID!) { node(id: $id) { id } }', variables: { id: atIndexed } }),
      });
      expect(JSON.parse(ok.body)).toEqual({ data: { node: { id: atIndexed } }, extensions: expect.anything() });
    }
  });

  it('the invalid-JSON error carries no internals (no extensions.originalError)', async () => {
    for (const body of ['{"query": "{ __typename }"', '{bad', '']) {
      const r = await raw(live.base, '/graphql', { method: 'POST', headers: { ...json, 'content-type': 'application/json' }, body });
      expect(r.status, body).toBe(400);
      const error = JSON.parse(r.body).errors[0];
      expect(error.extensions.code).toBe('BAD_REQUEST');
      expect(Object.keys(error.extensions).sort()).toEqual(['code']);
      expect(r.body).not.toMatch(/originalError|SyntaxError|stack|at JSON\.parse/);
    }
  });

  it('form-encoded POSTs do not execute (CSRF): 415 with a GraphQL error', async () => {
    const bodies: [string, string][] = [
      ['application/x-www-form-urlencoded', `query=${encodeURIComponent('{ __typename }')}`],
      ['multipart/form-data; boundary=x', '--x\r\nContent-Disposition: form-data; name="operations"\r\n\r\n{"query":"{ __typename }"}\r\n--x--\r\n'],
      ['text/plain', JSON.stringify({ query: '{ __typename }' })],
      ['text/plain;charset=UTF-8', JSON.stringify({ query: '{ __typename }' })],
    ];
    for (const [type, body] of bodies) {
      const r = await raw(live.base, '/graphql', { method: 'POST', headers: { ...json, 'content-type': type }, body });
      expect(r.status, type).toBe(415);
      const reply = JSON.parse(r.body);
      expect(reply.data, type).toBeUndefined();
      expect(reply.errors[0].extensions.code, type).toBe('BAD_REQUEST');
      expect(reply.errors[0].message).toMatch(/application\/json/);
    }
    // JSON (and graphql-response+json clients' JSON) still runs
    const ok = await raw(live.base, '/graphql', {
      method: 'POST', headers: { ...json, 'content-type': 'application/json; charset=utf-8' }, body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(JSON.parse(ok.body).data.__typename).toBe('Query');
  });
});

describe('GraphiQL', () => {
  let budgeted: TestGateway;
  beforeAll(async () => {
    budgeted = await startTestGateway(live.db, { CACHE: true, HTTP_CLIENT_BYTES_PER_S: 64 * 1024, HTTP_CLIENT_BURST_BYTES: 1024 * 1024 });
  });
  afterAll(async () => {
    await budgeted?.close();
  });
  const html = { accept: 'text/html' };
  const assetsOf = (page: string) => [...page.matchAll(/(?:src|href)="(\/graphql\/assets\/[^"]+)"/g)].map((m) => m[1]!);

  it('is a small page and assets served compressed: a browser load is ~2 MB, not 9 MB', async () => {
    const page = await raw(live.base, '/graphql', { headers: html });
    expect(page.status).toBe(200);
    expect(page.body.length).toBeLessThan(4_096);
    let total = page.body.length;
    for (const path of assetsOf(page.body)) {
      const r = await raw(live.base, path, { headers: { 'accept-encoding': 'gzip, deflate, br' } });
      expect(r.status).toBe(200);
      expect(r.headers['content-encoding'] ?? 'identity', path).toMatch(/^(br|identity)$/);
      total += r.body.length;
    }
    // (before: one 9 MB page, brotli-compressed to ~1.6 MB but re-sent in full on every load)
    expect(total).toBeLessThan(2.5 * 1024 * 1024);
  });

  it('is rendered in a worker thread, the same page yoga\'s renderer writes (its 9 MB bundle stays out of the gateway\'s heap)', async () => {
    const options = { title: 'Inscription gateway', defaultQuery: 'query { __typename }' };
    const apart = await renderGraphiQLApart(options);
    expect(apart).toBe(renderGraphiQL(options));
    expect(apart.length).toBeGreaterThan(5_000_000);
    // what yoga adds to the options and JSON does not carry (a function) is left out, as the page would
    expect(await renderGraphiQLApart({ ...options, fetcher: () => 1 } as never)).toBe(apart);
  });

  it('revalidates: 304 for the page (no-cache + ETag) and for an asset (immutable + ETag), per coding', async () => {
    const page = await raw(live.base, '/graphql', { headers: html });
    expect(page.headers['cache-control']).toBe('no-cache');
    const tag = String(page.headers.etag);
    expect(tag).toMatch(/^"[^"]+"$/);
    const again = await raw(live.base, '/graphql', { headers: { ...html, 'if-none-match': tag } });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    const [script] = assetsOf(page.body).filter((p) => p.endsWith('.js'));
    const tags = new Set<string>();
    for (const coding of ['identity', 'gzip', 'br']) {
      const r = await raw(live.base, script!, { headers: { 'accept-encoding': coding } });
      expect(r.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      tags.add(String(r.headers.etag));
      const revalidated = await raw(live.base, script!, { headers: { 'accept-encoding': coding, 'if-none-match': String(r.headers.etag) } });
      expect(revalidated.status).toBe(304);
      expect(revalidated.headers.etag).toBe(r.headers.etag);
    }
    expect(tags.size, 'one ETag per representation').toBe(3);
    expect((await raw(live.base, '/graphql/assets/graphiql-nope.js')).status).toBe(404);
  });

  it('is charged to the byte budget: an address over it is refused (429), another address is not', async () => {
    const page = await raw(budgeted.base, '/graphql', { headers: html });
    const [script] = assetsOf(page.body).filter((p) => p.endsWith('.js'));
    let refused: Awaited<ReturnType<typeof raw>> | undefined;
    for (let i = 0; i < 10 && !refused; i++) {
      const r = await raw(budgeted.base, script!, { headers: { 'accept-encoding': 'identity' } });
      if (r.status === 429) refused = r;
    }
    expect(refused, 'an 8 MB script over a 1 MB burst').toBeDefined();
    expect(Number(refused!.headers['retry-after'])).toBeGreaterThan(0);
    expect((await raw(budgeted.base, '/graphql', { headers: html })).status).toBe(429);
    expect((await raw(budgeted.base, '/graphql', { headers: html, from: '127.0.0.2' })).status).toBe(200);
  });
});
