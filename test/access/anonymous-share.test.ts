import { createClient, type Client } from 'graphql-sse';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateKey } from '../../src/access/key-format.js';
import { insertApiKey } from '../../src/db/api-keys.js';
import { findServer } from '../support/db.js';
import { Fixture } from '../support/fixtures.js';
import { lockTable } from '../support/locks.js';
import { waitFor } from '../support/ops.js';
import { gql } from '../support/http.js';
import { because, skipUnless } from '../support/skips.js';
import { startTestGateway, type TestGateway, useDatabase } from '../support/gateway.js';

// ANONYMOUS_SHARE: while any API key exists, requests without a key hold at most that share of the
// database pool and of the open subscriptions together, so a keyed client finds a connection and a stream
// slot however many anonymous requests wait or streams are held.
// Contention is made with a lock on `ticks` held by another session: anonymous requests for ticks wait
// on it, each holding a pool connection; a keyed request for chains needs a connection, not the lock.

const onServer = (await findServer()) !== null;

describe('the anonymous share of the database pool (real PostgreSQL)', skipUnless(onServer, because.noServer), () => {
  const db = useDatabase();
  let gateway: TestGateway;
  let key: string;

  beforeAll(async () => {
    const f = new Fixture();
    f.mint(f.tick({ chain: 'eth', protocol: 'erc-20', tick: 'lock' }), '0x1111111111111111111111111111111111111111', '1');
    await f.load(db.sql);
    const g = generateKey();
    await insertApiKey(db.sql, { name: 'partner', prefix: g.prefix, secretSha256: g.secretSha256, ratePerS: 1_000, burst: 1_000 });
    key = g.key;
    gateway = await startTestGateway(db, {
      CACHE: false, DB_POOL_MAX: 4, ANONYMOUS_SHARE: 0.5, DB_QUEUE_TIMEOUT_MS: 5_000, DB_STATEMENT_TIMEOUT_MS: 20_000,
    });
  });

  afterAll(async () => {
    await gateway?.close();
  });

  /** The gateway's statements waiting for the lock (each holds one pool connection). */
  async function blocked(): Promise<number> {
    const [row] = await db.sql<{ n: number }[]>`
      SELECT count(*)::int AS n FROM pg_stat_activity
      WHERE datname = current_database() AND application_name = 'inscription-gateway' AND wait_event_type = 'Lock'`;
    return row!.n;
  }

  it('anonymous requests hold at most the share; a keyed request gets a connection meanwhile', async () => {
    const lock = await lockTable(db.sql, 'ticks');
    const ticks = '{ ticks(first: 1) { edges { node { tick } } } }';
    const anonymous = Array.from({ length: 6 }, () => gql(gateway.base, ticks));
    try {
      await waitFor(async () => (await blocked()) === 2, 5_000);
      // the rest wait in the anonymous line, not on the lock (which would hold all 4 connections)
      await new Promise((r) => setTimeout(r, 300));
      expect(await blocked()).toBe(2);
      const keyed = await gql(gateway.base, '{ chains { chain } }', undefined, { authorization: `Bearer ${key}` });
      expect(keyed.status).toBe(200);
      expect(keyed.json.errors).toBeUndefined();
      expect(keyed.json.data.chains.length).toBeGreaterThan(0);
      expect(await blocked()).toBe(2);
    } finally {
      await lock.release();
    }
    for (const reply of await Promise.all(anonymous)) {
      expect(reply.status).toBe(200);
      expect(reply.json.data.ticks.edges[0].node.tick).toBe('lock');
    }
  });
});

describe('the anonymous share of the open subscriptions', skipUnless(onServer, because.noServer), () => {
  const db = useDatabase();
  let gateway: TestGateway;
  let key: string;
  const clients: Client[] = [];

  beforeAll(async () => {
    const g = generateKey();
    await insertApiKey(db.sql, { name: 'partner', prefix: g.prefix, secretSha256: g.secretSha256, ratePerS: 1_000, burst: 1_000, maxStreams: 10 });
    key = g.key;
    gateway = await startTestGateway(db, { CACHE: true, SUBSCRIPTIONS_MAX_OPEN: 4, SUBSCRIPTIONS_MAX_PER_CLIENT: 0, ANONYMOUS_SHARE: 0.5 });
  });

  afterAll(async () => {
    for (const c of clients) c.dispose();
    await gateway?.close();
  });

  async function openStreams(): Promise<number> {
    const text = await (await fetch(`${gateway.base}/metrics`)).text();
    return Number(/^igw_subscriptions_open\{field="blocks"\} (\S+)$/m.exec(text)?.[1]);
  }

  function subscribe(headers: Record<string, string> = {}) {
    const client = createClient({ url: `${gateway.base}/graphql`, retryAttempts: 0, headers });
    clients.push(client);
    const state = { error: null as unknown, done: false };
    client.subscribe({ query: 'subscription { blocks { height } }' }, {
      next: () => {},
      error: (error) => { state.error = error; state.done = true; },
      complete: () => { state.done = true; },
    });
    return state;
  }

  it('anonymous streams past the share get TOO_MANY_SUBSCRIPTIONS; keyed ones still open up to the total', async () => {
    const anonymous = [subscribe(), subscribe()];
    await waitFor(async () => (await openStreams()) === 2, 5_000);
    // a third without a key: refused with a body that says why
    const third = await fetch(`${gateway.base}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'text/event-stream' },
      body: JSON.stringify({ query: 'subscription { blocks { height } }' }),
    });
    const body = await third.text();
    expect(third.status).toBe(503);
    expect(third.headers.get('retry-after')).toBe('5');
    expect(body).toMatch(/TOO_MANY_SUBSCRIPTIONS/);
    expect(body).toMatch(/ANONYMOUS_SHARE/);
    expect(anonymous.filter((s) => !s.done)).toHaveLength(2);
    const keyed = [subscribe({ 'x-api-key': key }), subscribe({ 'x-api-key': key })];
    await new Promise((r) => setTimeout(r, 500));
    expect(keyed.filter((s) => !s.done)).toHaveLength(2);
    expect(await openStreams()).toBe(4);
  });
});
