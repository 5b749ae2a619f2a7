import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { graphqlGetPath, wire, type WireReply, type WireRequest } from '../support/http.js';
import { sameData } from '../support/ops.js';
import { loadDemo, type TestGateway, useDatabase, useGateway } from '../support/gateway.js';

// HTTP caching a CDN can use, and compression, on the demo data over real sockets (node:http, so the
// bytes on the wire are seen as sent: fetch would decompress them): quoted strong ETags, If-None-Match
// per RFC 9110 (weak comparison, lists, `*`), Cache-Control by method and outcome, Vary, and gzip/brotli
// negotiated from Accept-Encoding that decode to exactly the uncompressed bytes (JSON-RPC included).

const raw = (base: string, path: string, init: WireRequest = {}) => wire(`${base}${path}`, init);

const decode = (r: WireReply): Buffer => {
  const coding = r.headers['content-encoding'];
  if (coding === 'br') return brotliDecompressSync(r.body);
  if (coding === 'gzip') return gunzipSync(r.body);
  expect(coding, 'no other coding is offered').toBeUndefined();
  return r.body;
};

const query = '{ ticks(first: 20, orderBy: HOLDERS, direction: DESC) { edges { node { id chainName tick stats { holders } } } } }';
const json = { accept: 'application/json' };

const db = useDatabase({ load: loadDemo });
const live = useGateway({ db, config: { CACHE: true } });
const other = useGateway({ db, config: { CACHE: true } }); // another replica: its own (empty) response cache
const custom = useGateway({ db, config: { CACHE: true,
  GRAPHQL_CACHE_CONTROL: 'public, max-age=60, s-maxage=300', HTTP_COMPRESSION_MIN_BYTES: 100_000, CORS_ORIGIN: 'https://app.example',
} });

describe('ETag and If-None-Match', () => {
  it('sends a quoted strong ETag, Cache-Control and Vary on a GET query, and no Last-Modified', async () => {
    const r = await raw(live.base, graphqlGetPath(query), { headers: json });
    expect(r.status).toBe(200);
    expect(r.headers.etag).toMatch(/^"igw:[^"]+"$/);
    expect(r.headers['cache-control']).toBe('public, max-age=5, stale-while-revalidate=30');
    expect(String(r.headers.vary)).toMatch(/Accept-Encoding/);
    expect(String(r.headers.vary)).toMatch(/\bAccept\b(?!-)/);
    // the ETag is the validator; no Last-Modified that If-Modified-Since could not honour
    expect(r.headers['last-modified']).toBeUndefined();
  });

  it('answers 304 to the tag as sent, weak, in a list, and to *; 200 to other tags', async () => {
    const etag = (await raw(live.base, graphqlGetPath(query), { headers: json })).headers.etag as string;
    const weak = `W/${etag}`;
    for (const sent of [etag, weak, `"nope", ${weak}`, `W/"a",${etag} , "b"`, '*']) {
      const r = await raw(live.base, graphqlGetPath(query), { headers: { ...json, 'if-none-match': sent } });
      expect(r.status, sent).toBe(304);
      expect(r.body.length).toBe(0);
      expect(r.headers.etag).toBe(etag);
      expect(r.headers['cache-control'], 'a 304 repeats the Cache-Control of the 200').toBe('public, max-age=5, stale-while-revalidate=30');
    }
    for (const sent of ['"nope"', `${etag.slice(0, -2)}"`, `"a", W/"b"`, etag.slice(1, -1), `${etag} garbage`]) {
      const r = await raw(live.base, graphqlGetPath(query), { headers: { ...json, 'if-none-match': sent } });
      expect(r.status, sent).toBe(200);
    }
  });

  it('answers 304 on a cache miss too (another replica, same data version)', async () => {
    const etag = (await raw(live.base, graphqlGetPath(query, { x: 1 }), { headers: json })).headers.etag as string;
    const r = await raw(other.base, graphqlGetPath(query, { x: 1 }), { headers: { ...json, 'if-none-match': etag } });
    expect(r.headers['x-cache']).toBe('miss');
    expect(r.status).toBe(304);
  });

  it('sends no-store on POST answers and on errors; GRAPHQL_CACHE_CONTROL sets the GET value', async () => {
    const post = await raw(live.base, '/graphql', { method: 'POST', headers: { ...json, 'content-type': 'application/json' }, body: JSON.stringify({ query }) });
    expect(post.status).toBe(200);
    expect(post.headers['cache-control']).toBe('no-store');
    const invalid = await raw(live.base, graphqlGetPath('{ nope }'), { headers: json });
    expect(JSON.parse(decode(invalid).toString()).errors[0].extensions.code).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(invalid.headers['cache-control']).toBe('no-store');
    const badInput = await raw(live.base, graphqlGetPath('{ ticks(first: -1) { totalCount } }'), { headers: json });
    expect(JSON.parse(decode(badInput).toString()).errors[0].extensions.code).toBe('BAD_USER_INPUT');
    expect(badInput.headers['cache-control']).toBe('no-store');
    const configured = await raw(custom.base, graphqlGetPath(query), { headers: { ...json, origin: 'https://app.example' } });
    expect(configured.headers['cache-control']).toBe('public, max-age=60, s-maxage=300');
    // a listed origin is echoed: a shared cache must key on it too, beside Accept and Accept-Encoding
    expect(configured.headers['access-control-allow-origin']).toBe('https://app.example');
    expect(configured.headers.vary).toBe('Origin, Accept, Accept-Encoding');
  });
});

describe('compression', () => {
  it('negotiates br or gzip from Accept-Encoding with q-values; the bytes decode to the uncompressed answer', async () => {
    const plain = await raw(live.base, graphqlGetPath(query), { headers: json });
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.body.length).toBeGreaterThan(1_024);
    const cases: [string, string | undefined][] = [
      ['gzip, deflate, br', 'br'],
      ['br;q=0.5, gzip', 'gzip'],
      ['gzip;q=0, br', 'br'],
      ['br;q=0, gzip;q=0.1', 'gzip'],
      ['identity', undefined],
      ['*;q=0, identity', undefined],
    ];
    for (const [accept, expected] of cases) {
      const r = await raw(live.base, graphqlGetPath(query), { headers: { ...json, 'accept-encoding': accept } });
      expect(r.headers['content-encoding'], accept).toBe(expected);
      // the same answer (freshness.dataAgeSeconds may have crossed a second if it was computed again)
      expect(sameData(JSON.parse(decode(r).toString())), accept).toEqual(sameData(JSON.parse(plain.body.toString())));
      if (expected) {
        expect(r.body.length).toBeLessThan(plain.body.length / 3);
        // one strong tag per representation; a 304 for any of them
        expect(r.headers.etag).toBe(`${String(plain.headers.etag).slice(0, -1)}-${expected}"`);
        const again = await raw(live.base, graphqlGetPath(query), { headers: { ...json, 'accept-encoding': accept, 'if-none-match': String(r.headers.etag) } });
        expect(again.status).toBe(304);
        expect(again.headers.etag).toBe(r.headers.etag);
      }
    }
  });

  it('leaves bodies under HTTP_COMPRESSION_MIN_BYTES as they are', async () => {
    const small = await raw(live.base, graphqlGetPath('{ chains { chain } }'), { headers: { ...json, 'accept-encoding': 'br, gzip' } });
    expect(small.body.length).toBeLessThan(1_024);
    expect(small.headers['content-encoding']).toBeUndefined();
    const big = await raw(custom.base, graphqlGetPath(query), { headers: { ...json, 'accept-encoding': 'br' } });
    expect(big.headers['content-encoding'], 'under the configured 100 000 bytes').toBeUndefined();
  });

  it('answers a request without Accept-Encoding with the headers and bytes compression gives `identity`', async () => {
    // without Accept-Encoding the listener skips the compression middleware and only adds its Vary itself
    const requests: { gateway: TestGateway; path: string; method?: string; headers?: Record<string, string>; body?: string }[] = [
      { gateway: live, path: graphqlGetPath(query), headers: json },
      { gateway: custom, path: graphqlGetPath(query), headers: { ...json, origin: 'https://app.example' } },
      { gateway: live, path: '/graphql', method: 'POST', headers: { ...json, 'content-type': 'application/json' }, body: JSON.stringify({ query }) },
      { gateway: live, path: graphqlGetPath('{ nope }'), headers: json },
      { gateway: live, path: '/graphql', headers: { accept: 'text/html' } },
      { gateway: live, path: '/v2/rpc', method: 'POST', headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'inds_getTicks', params: [100, 0, '', '', '', '', 3, 2] }) },
      { gateway: custom, path: '/v2/rpc', method: 'POST', headers: { 'content-type': 'application/json', origin: 'https://app.example' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'inds_getAllChains', params: [[]] }) },
      { gateway: live, path: '/v2/rpc', method: 'GET' },
      { gateway: live, path: '/nowhere' },
      { gateway: live, path: '/' },
    ];
    const comparable = (r: WireReply) => {
      // the second request may be a response-cache hit; the rest is the same
      const { date: _date, 'x-request-id': _id, 'x-cache': _cache, ...rest } = r.headers;
      return rest;
    };
    for (const r of requests) {
      const send = (extra: Record<string, string>) => raw(r.gateway.base, r.path, { method: r.method, headers: { ...r.headers, ...extra }, body: r.body });
      const [without, identity] = [await send({}), await send({ 'accept-encoding': 'identity' })];
      expect(without.status, r.path).toBe(identity.status);
      expect(comparable(without), r.path).toEqual(comparable(identity));
      const age = (b: Buffer) => b.toString().replace(/"dataAgeSeconds":\d+/, '');
      expect(age(without.body), r.path).toBe(age(identity.body));
    }
  });

  it('compresses JSON-RPC answers, which decode to exactly the uncompressed bytes', async () => {
    const bodies = [
      { jsonrpc: '2.0', id: 1, method: 'inds_getTicks', params: [100, 0, '', '', '', '', 3, 2] },
      { jsonrpc: '2.0', id: 2, method: 'inds_getAllChains', params: [[]] },
      [1, 2, 3].map((id) => ({ jsonrpc: '2.0', id, method: 'inds_getTicks', params: [20, id * 20, '', '', '', '', 0, 1] })),
    ];
    for (const body of bodies) {
      const send = (acceptEncoding?: string) => raw(other.base, '/v2/rpc', {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(acceptEncoding ? { 'accept-encoding': acceptEncoding } : {}) },
        body: JSON.stringify(body),
      });
      const plain = await send();
      expect(plain.headers['content-encoding']).toBeUndefined();
      for (const coding of ['br', 'gzip']) {
        const r = await send(coding);
        if (plain.body.length >= 1_024) expect(r.headers['content-encoding']).toBe(coding);
        expect(decode(r).equals(plain.body)).toBe(true);
      }
    }
  });

  it('serves GraphiQL as a small page and versioned assets, compressed once, each coding kept', async () => {
    const html = { accept: 'text/html' };
    const page = await raw(live.base, '/graphql', { headers: { ...html, 'accept-encoding': 'gzip, br' } });
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['cache-control']).toBe('no-cache');
    const assets = [...decode(page).toString().matchAll(/(?:src|href)="(\/graphql\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(assets.length).toBeGreaterThanOrEqual(2);
    let plainTotal = 0;
    let brTotal = 0;
    for (const path of assets) {
      const plain = await raw(live.base, path);
      const br = await raw(live.base, path, { headers: { 'accept-encoding': 'gzip, br' } });
      const gzip = await raw(live.base, path, { headers: { 'accept-encoding': 'gzip' } });
      expect(br.headers['content-encoding'], path).toBe('br');
      expect(gzip.headers['content-encoding'], path).toBe('gzip');
      expect(decode(br).equals(plain.body)).toBe(true);
      expect(decode(gzip).equals(plain.body)).toBe(true);
      expect(Number(br.headers['content-length'])).toBe(br.body.length);
      expect(br.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(br.headers.vary).toBe('Accept-Encoding');
      // kept in memory once compressed: the same bytes again; a tie between codings goes to brotli
      const again = await raw(live.base, path, { headers: { 'accept-encoding': 'gzip;q=1, br;q=1' } });
      expect(again.headers['content-encoding']).toBe('br');
      expect(again.body.equals(br.body)).toBe(true);
      plainTotal += plain.body.length;
      brTotal += br.body.length;
    }
    console.info(`GraphiQL: page ${page.body.length} bytes, assets ${plainTotal} bytes, br ${brTotal}`);
    expect(brTotal).toBeLessThan(plainTotal / 4);
  });
});
