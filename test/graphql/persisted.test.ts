import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import http from 'node:http';
import { parse, print } from 'graphql';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApolloClient, HttpLink, InMemoryCache, gql } from '@apollo/client';
import { PersistedQueryLink } from '@apollo/client/link/persisted-queries';
import { ConfigError, loadConfig } from '../../src/config.js';
import { seedDemo } from '../../src/db/seed/index.js';
import { request } from '../support/http.js';
import { buildTestGateway, startTestGateway, type TestGateway, useDatabase } from '../support/gateway.js';

// Persisted operations: Apollo's automatic persisted queries with its own PersistedQueryLink (hash-only
// first, the document once on PersistedQueryNotFound, then hashes only), the bounded APQ store, and a
// trusted manifest from a directory of .graphql files (alone with PERSISTED_OPERATIONS_ONLY).

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const subtleSha256 = async (text: string) =>
  Buffer.from(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(text))).toString('hex');

const topTicks = 'query TopTicks { ticks(orderBy: HOLDERS, direction: DESC, first: 3) { edges { node { id tick stats { id holders } } } } }';
const chains = 'query Chains {\n  chains { id chain name }\n}\n';

const db = useDatabase();
let live: TestGateway;
let small: TestGateway;
let trusted: TestGateway;
let mixed: TestGateway;
let quota: TestGateway;
let dir: string;

beforeAll(async () => {
  await seedDemo(db.sql);
  dir = mkdtempSync(join(tmpdir(), 'igw-persisted-'));
  mkdirSync(join(dir, 'nested'));
  writeFileSync(join(dir, 'top.graphql'), topTicks);
  writeFileSync(join(dir, 'nested', 'chains.graphql'), chains);
  writeFileSync(join(dir, 'notes.txt'), 'not an operation');
  live = await startTestGateway(db, { CACHE: true });
  small = await startTestGateway(db, { CACHE: true, APQ_MAX_ENTRIES: 2 });
  trusted = await startTestGateway(db, { CACHE: true, PERSISTED_OPERATIONS_DIR: dir, PERSISTED_OPERATIONS_ONLY: true });
  mixed = await startTestGateway(db, { CACHE: true, PERSISTED_OPERATIONS_DIR: dir });
  quota = await startTestGateway(db, { CACHE: true, APQ_MAX_ENTRIES: 4, APQ_CLIENT_MAX_ENTRIES: 2 });
});
afterAll(async () => {
  await Promise.all([live, small, trusted, mixed, quota].map((g) => g?.close()));
  rmSync(dir, { recursive: true, force: true });
});

/** An Apollo client with PersistedQueryLink whose requests' bodies (or GET URLs) are recorded. */
function apolloClient(base: string, useGETForHashedQueries = false) {
  const sent: { method: string; body: any; url: string }[] = [];
  const client = new ApolloClient({
    link: new PersistedQueryLink({ sha256: subtleSha256, useGETForHashedQueries }).concat(new HttpLink({
      uri: `${base}/graphql`,
      fetch: (input, init) => {
        sent.push({ method: init?.method ?? 'GET', body: init?.body ? JSON.parse(String(init.body)) : null, url: String(input) });
        return fetch(input, init);
      },
    })),
    cache: new InMemoryCache(),
  });
  return { client, sent };
}

const apq = (hash: string) => ({ persistedQuery: { version: 1, sha256Hash: hash } });
const post = (base: string, body: object) => request(`${base}/graphql`, {
  method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body),
});

describe("Apollo's automatic persisted queries", () => {
  it('falls back once (PersistedQueryNotFound), registers, then sends only the hash', async () => {
    const first = apolloClient(live.base);
    const result = await first.client.query({ query: gql(topTicks) });
    expect((result.data as any).ticks.edges).toHaveLength(3);
    expect(first.sent).toHaveLength(2);
    const [hashOnly, full] = first.sent;
    expect(hashOnly!.body.query).toBeUndefined();
    expect(hashOnly!.body.extensions.persistedQuery.sha256Hash).toMatch(/^[0-9a-f]{64}$/);
    expect(full!.body.query).toContain('TopTicks');
    expect(full!.body.extensions.persistedQuery.sha256Hash).toBe(hashOnly!.body.extensions.persistedQuery.sha256Hash);

    const second = apolloClient(live.base);
    const again = await second.client.query({ query: gql(topTicks) });
    expect(again.data).toEqual(result.data);
    expect(second.sent).toHaveLength(1);
    expect(second.sent[0]!.body.query).toBeUndefined();
  });

  it('answers hash-only GET requests, which a CDN may cache, from the response cache on repeat', async () => {
    const { client, sent } = apolloClient(live.base, true);
    await client.query({ query: gql(chains) });
    expect(sent.map((s) => s.method)).toEqual(['GET', 'POST']);
    const url = sent[0]!.url;
    expect(new URL(url).searchParams.has('query')).toBe(false);
    const replay = await request(url, { headers: { accept: 'application/json' } });
    expect(replay.status).toBe(200);
    expect(replay.json.data.chains.length).toBeGreaterThan(0);
    expect(replay.headers.get('cache-control')).toBe('public, max-age=5, stale-while-revalidate=30');
    expect((await request(url, { headers: { accept: 'application/json' } })).headers.get('x-cache')).toBe('hit');
  });

  it('speaks the protocol: not found, a hash that is not the document\'s, neither query nor hash', async () => {
    const unknown = await post(live.base, { extensions: apq(sha256('{ chains { name } } # never sent')) });
    expect(unknown.status).toBe(200);
    expect(unknown.json.errors).toEqual([{ message: 'PersistedQueryNotFound', extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }]);
    const mismatch = await post(live.base, { query: '{ chains { chain } }', extensions: apq(sha256('{ chains { name } }')) });
    expect(mismatch.status).toBe(400);
    expect(mismatch.json.errors[0]).toMatchObject({ message: 'provided sha does not match query', extensions: { code: 'BAD_REQUEST' } });
    // the mismatched pair was not kept
    expect((await post(live.base, { extensions: apq(sha256('{ chains { name } }')) })).json.errors[0].message).toBe('PersistedQueryNotFound');
    const neither = await post(live.base, {});
    expect(neither.status).toBe(400);
    expect(neither.json.errors[0].extensions.code).toBe('BAD_REQUEST');
  });

  it('keeps at most APQ_MAX_ENTRIES documents, least recently used out first', async () => {
    const docs = ['{ chains { chain } }', '{ chains { name } }', '{ chains { logo } }'];
    for (const query of docs) expect((await post(small.base, { query, extensions: apq(sha256(query)) })).status).toBe(200);
    const hashOnly = async (query: string) => (await post(small.base, { extensions: apq(sha256(query)) })).json;
    expect((await hashOnly(docs[0]!)).errors[0].message, 'the oldest was evicted').toBe('PersistedQueryNotFound');
    expect((await hashOnly(docs[1]!)).data.chains.length).toBeGreaterThan(0);
    expect((await hashOnly(docs[2]!)).data.chains.length).toBeGreaterThan(0);
  });
});

/** A POST of `body` to /graphql from the loopback address `from` (127.0.0.x: another client). */
function postFrom(base: string, from: string, body: object): Promise<any> {
  const url = new URL(`${base}/graphql`);
  const text = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request({
      host: url.hostname, port: url.port, path: url.pathname, method: 'POST', localAddress: from, agent: false,
      headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) },
    }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(JSON.parse(Buffer.concat(chunks).toString())));
    });
    req.on('error', reject);
    req.end(text);
  });
}

describe('APQ registration: only valid documents, a quota per client, no flushing', () => {
  const register = (base: string, from: string, query: string) => postFrom(base, from, { query, extensions: apq(sha256(query)) });
  const known = async (base: string, from: string, query: string) =>
    (await postFrom(base, from, { extensions: apq(sha256(query)) })).errors?.[0]?.message !== 'PersistedQueryNotFound';

  it('keeps no document that fails to parse or validate (it is answered with its errors)', async () => {
    for (const query of ['{ chains { nope } }', '{ chains { chain ', 'query Q($a: Int) { chains { chain } }  query Q { __typename }']) {
      const reply = await register(live.base, '127.0.0.1', query);
      expect(reply.errors.length, query).toBeGreaterThan(0);
      expect(await known(live.base, '127.0.0.1', query), query).toBe(false);
    }
  });

  it('three 1 MB registrations evict nothing (documents over APQ_MAX_DOCUMENT_BYTES are answered, not kept)', async () => {
    const victim = `query Victim${Date.now()} { chains { chain name } }`;
    expect((await register(live.base, '127.0.0.2', victim)).data.chains.length).toBeGreaterThan(0);
    for (let i = 0; i < 3; i++) {
      // a valid document padded with a comment: 1 MB each (the body limit), three of them fill the 4 MB store (UTF-16)
      const big = `# ${String(i).repeat(1_000_000)}\n{ chains { chain } }`;
      expect((await register(live.base, '127.0.0.3', big)).data.chains.length).toBeGreaterThan(0);
      expect(await known(live.base, '127.0.0.3', big)).toBe(false);
    }
    expect(await known(live.base, '127.0.0.2', victim), "the other client's entry").toBe(true);
  });

  it("a client past APQ_CLIENT_MAX_ENTRIES replaces its own oldest entries, never another client's", async () => {
    const victims = ['query V1 { chains { chain } }', 'query V2 { chains { name } }'];
    for (const query of victims) expect((await register(quota.base, '127.0.0.4', query)).data).toBeDefined();
    const attacker = Array.from({ length: 12 }, (_, i) => `query A${i} { chains { chain } }`);
    for (const query of attacker) expect((await register(quota.base, '127.0.0.5', query)).data).toBeDefined();
    for (const query of victims) expect(await known(quota.base, '127.0.0.4', query), query).toBe(true);
    // the attacker keeps its last two only
    const kept = [];
    for (const query of attacker) if (await known(quota.base, '127.0.0.5', query)) kept.push(query);
    expect(kept).toEqual(attacker.slice(-2));
    // the store is full (4): a client holding nothing is answered, not registered
    const late = 'query Late { chains { logo } }';
    expect((await register(quota.base, '127.0.0.6', late)).data).toBeDefined();
    expect(await known(quota.base, '127.0.0.6', late)).toBe(false);
    for (const query of victims) expect(await known(quota.base, '127.0.0.4', query), query).toBe(true);
  });
});

describe('a trusted manifest (PERSISTED_OPERATIONS_DIR)', () => {
  it('runs the operations of the directory by the hash of their text or of their printed form', async () => {
    for (const text of [topTicks, chains]) {
      for (const hash of [sha256(text), sha256(print(parse(text)))]) {
        const reply = await post(trusted.base, { extensions: apq(hash) });
        expect(reply.status).toBe(200);
        expect(reply.json.errors).toBeUndefined();
      }
    }
    // Apollo's link hashes the printed document: the first request is answered, no fallback
    const { client, sent } = apolloClient(trusted.base);
    const result = await client.query({ query: gql(chains) });
    expect((result.data as any).chains.length).toBeGreaterThan(0);
    expect(sent).toHaveLength(1);
  });

  it('with PERSISTED_OPERATIONS_ONLY refuses other documents and registrations', async () => {
    const adHoc = await post(trusted.base, { query: '{ chains { chain } }' });
    expect(adHoc.status).toBe(400);
    expect(adHoc.json.errors[0].extensions.code).toBe('PERSISTED_QUERY_ONLY');
    const query = '{ chains { name } }';
    expect((await post(trusted.base, { query, extensions: apq(sha256(query)) })).json.errors[0].extensions.code).toBe('PERSISTED_QUERY_ONLY');
    expect((await post(trusted.base, { extensions: apq(sha256(query)) })).json.errors[0].message).toBe('PersistedQueryNotFound');
  });

  it('without it, still answers ad-hoc documents and APQ beside the manifest', async () => {
    expect((await post(mixed.base, { query: '{ chains { chain } }' })).json.data.chains.length).toBeGreaterThan(0);
    expect((await post(mixed.base, { extensions: apq(sha256(chains)) })).json.data.chains.length).toBeGreaterThan(0);
    const { client, sent } = apolloClient(mixed.base);
    await client.query({ query: gql('{ chains { chain name } }') });
    expect(sent).toHaveLength(2);
  });

  it('refuses to start on a broken document, naming its file; ONLY needs a directory', async () => {
    const broken = mkdtempSync(join(tmpdir(), 'igw-persisted-broken-'));
    try {
      writeFileSync(join(broken, 'bad.graphql'), 'query { chains { ');
      expect(() => buildTestGateway(db, { PERSISTED_OPERATIONS_DIR: broken })).toThrow(/bad\.graphql/);
    } finally {
      rmSync(broken, { recursive: true, force: true });
    }
    expect(() => loadConfig({ PERSISTED_OPERATIONS_ONLY: 'true' })).toThrow(ConfigError);
    expect(loadConfig({}).PERSISTED_OPERATIONS_ONLY).toBe(false);
  });
});
