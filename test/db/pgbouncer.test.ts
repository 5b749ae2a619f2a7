import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { GatewayConfig } from '../../src/app.js';
import { findServer } from '../support/db.js';
import { Fixture } from '../support/fixtures.js';
import { gql, request, rpc } from '../support/http.js';
import { capturingLogger, waitFor } from '../support/ops.js';
import { pgbouncerBinary, startPgBouncer, type PgBouncer } from '../support/pgbouncer.js';
import { because, skipUnlessAll } from '../support/skips.js';
import { useDatabase, useGateways } from '../support/gateway.js';

// The gateway behind a real PgBouncer in transaction pooling mode. With DB_POOLER=pgbouncer: it connects
// (no startup parameters), answers, cannot write, has its statements cut at DB_STATEMENT_TIMEOUT_MS, sends
// no prepared statements (none "does not exist" under concurrent load) and learns data versions by
// polling, saying so. Without it, behind a bouncer that drops the startup parameters, it refuses to serve
// from the unsafe session. Skipped without PgBouncer or a PostgreSQL server.

const bouncerBinary = pgbouncerBinary();
const server = await findServer();
const figures: string[] = [];

describe('behind PgBouncer (transaction pooling)', skipUnlessAll([bouncerBinary, because.noPgbouncer], [server, because.noServer]), () => {
  const db = useDatabase();
  let bouncer: PgBouncer;
  let dropping: PgBouncer;
  const gateways = useGateways(db, { DATA_VERSION_POLL_MS: 100 });

  /** A gateway connecting through `url` (a bouncer), logging into `log`. */
  async function start(url: string, overrides: Partial<GatewayConfig>, log = capturingLogger('info')) {
    return { ...(await gateways(overrides, { target: { url }, logger: log.logger })), log };
  }

  beforeAll(async () => {
    const fixture = new Fixture();
    for (const name of ['alpha', 'beta', 'gamma']) {
      const t = fixture.tick({ chain: 'eth', protocol: 'erc-20', tick: name });
      fixture.mint(t, '0x3333333333333333333333333333333333333333', '5');
    }
    await fixture.load(db.sql);
    const serverPort = Number(new URL(db.target.url!).port || 5432);
    bouncer = await startPgBouncer({ serverPort, poolSize: 3 });
    // what operators tried first: drop the parameters PgBouncer refuses, and lose the session's safety
    dropping = await startPgBouncer({ serverPort, poolSize: 3, ignoreStartupParameters: ['statement_timeout', 'default_transaction_read_only'] });
  }, 60_000);

  afterAll(async () => {
    await gateways.closeAll().catch(() => {});
    await bouncer?.stop();
    await dropping?.stop();
    if (figures.length) console.info(`[poolers.pgbouncer]\n  ${figures.join('\n  ')}`);
  }, 60_000);

  it('without DB_POOLER the gateway cannot connect through a default PgBouncer (startup parameters refused): /readyz 503', async () => {
    const { base, log } = await start(bouncer.urlFor(db.target.url!), { DB_CONNECT_TIMEOUT_S: 2 });
    const ready = await request(`${base}/readyz`);
    expect(ready.json).toEqual({ status: 'unavailable', reason: 'the server refuses startup parameters (a PgBouncer in front?): set DB_POOLER=pgbouncer' });
    expect(bouncer.log()).toMatch(/unsupported startup parameter/);
    expect(log.lines.find((l) => l.level === 'error')?.msg).toBe('the server refuses startup parameters: behind PgBouncer set DB_POOLER=pgbouncer');
  });

  it('DB_POOLER=pgbouncer: connects and answers; a write fails (25006); a slow statement is cut (57014)', async () => {
    const { gateway, base } = await start(bouncer.urlFor(db.target.url!), { DB_POOLER: 'pgbouncer', DB_STATEMENT_TIMEOUT_MS: 500 });
    expect((await request(`${base}/readyz`)).status).toBe(200);
    const reply = await rpc(base, { jsonrpc: '2.0', id: 1, method: 'inds_getTicks', params: [10, 0, 'eth', '', '', '', 0, 1] });
    expect(reply.json.result.inscriptions.map((t: any) => t.tick)).toEqual(['alpha', 'beta', 'gamma']);
    // the gateway's own statement path (routing, per-transaction settings), given statements it never sends itself
    const source = gateway.sources.primary;
    await expect(source.send(gateway.sql`UPDATE ticks SET name = 'x'`)).rejects.toMatchObject({ code: '25006' });
    expect((await db.sql<{ n: string }[]>`SELECT count(*)::text AS n FROM ticks WHERE name = 'x'`)[0]!.n).toBe('0');
    const started = performance.now();
    await expect(source.send(gateway.sql`SELECT pg_sleep(5)`)).rejects.toMatchObject({ code: '57014' });
    const cutAfter = performance.now() - started;
    expect(cutAfter).toBeLessThan(3_000);
    figures.push(`DB_STATEMENT_TIMEOUT_MS=500 through PgBouncer: pg_sleep(5) cut after ${cutAfter.toFixed(0)} ms`);
  });

  it('DB_POOLER=pgbouncer: no "prepared statement does not exist" under concurrent load', async () => {
    const { base } = await start(bouncer.urlFor(db.target.url!), { DB_POOLER: 'pgbouncer', DB_POOL_MAX: 8 });
    const requests = Array.from({ length: 400 }, (_, i) => i % 2
      ? () => rpc(base, { jsonrpc: '2.0', id: i, method: 'inds_getTicks', params: [1 + (i % 7), 0, 'eth', '', '', '', i % 5, 2] })
      : () => gql(base, `{ ticks(first: ${1 + (i % 5)}) { totalCount edges { node { tick holders: stats { holders } } } } }`));
    const failures: string[] = [];
    const started = performance.now();
    let next = 0;
    await Promise.all(Array.from({ length: 20 }, async () => {
      while (next < requests.length) {
        const reply = await requests[next++]!();
        if (reply.status !== 200 || reply.json?.error || reply.json?.errors) failures.push(reply.text);
      }
    }));
    const ms = performance.now() - started;
    expect(failures).toEqual([]);
    expect(bouncer.log()).not.toMatch(/prepared statement .* does not exist/);
    figures.push(`400 requests, 20 at a time, pool 8 over 3 server connections: 0 errors in ${ms.toFixed(0)} ms`);
  });

  it('DB_POOLER=pgbouncer: no LISTEN (a warning, igw_listen_up 0); data versions arrive by polling', async () => {
    const log = capturingLogger('info');
    const { gateway, base } = await start(bouncer.urlFor(db.target.url!), { DB_POOLER: 'pgbouncer', CACHE: true }, log);
    expect(log.lines.find((l) => l.level === 'warn' && /LISTEN cannot work behind a transaction pooler/.test(l.msg))).toBeDefined();
    expect(await (await fetch(`${base}/metrics`)).text()).toMatch(/^igw_listen_up 0$/m);
    const before = gateway.ops.watcher.current()!.version;
    await db.sql`UPDATE ticks SET name = 'renamed' WHERE tick = 'alpha'`;
    const took = await waitFor(async () => gateway.ops.watcher.current()!.version !== before, 3_000, 10);
    figures.push(`data version learnt by polling (DATA_VERSION_POLL_MS=100) ${took.toFixed(0)} ms after the write`);
  });

  it('behind a bouncer that drops the startup parameters: the writable, timeout-less session is refused (503 + error log), and the transaction pooler even with DB_ALLOW_UNSAFE_SESSION', async () => {
    const refused = await start(dropping.urlFor(db.target.url!), {});
    const ready = await request(`${refused.base}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.json).toEqual({ status: 'unavailable', reason: 'transaction pooler in front of primary without DB_POOLER=pgbouncer' });
    expect(refused.log.lines.filter((l) => l.level === 'error').map((l) => l.msg)).toEqual([
      expect.stringMatching(/^database session is writable \(transaction_read_only is off\) and without statement_timeout: refusing to serve/),
      expect.stringMatching(/^transaction pooler in front of primary without DB_POOLER=pgbouncer: statements of one connection are answered by different server sessions/),
    ]);
    const answer = await gql(refused.base, '{ ticks(first: 1) { totalCount } }');
    expect(answer.json.errors.map((e: any) => e.extensions.code)).toEqual(['SERVICE_UNAVAILABLE']);

    // the unsafe session may be allowed; the transaction pooler may not (prepared statements would fail under load)
    const allowed = await start(dropping.urlFor(db.target.url!), { DB_ALLOW_UNSAFE_SESSION: true });
    expect((await request(`${allowed.base}/readyz`)).json).toEqual({ status: 'unavailable', reason: 'transaction pooler in front of primary without DB_POOLER=pgbouncer' });
    expect(allowed.log.lines.find((l) => l.level === 'warn' && /serving anyway/.test(l.msg))).toBeDefined();
    // LISTEN is accepted there but never delivers: found out at start, polling only
    expect(allowed.log.lines.find((l) => l.level === 'warn' && /LISTEN is accepted but notifications do not arrive/.test(l.msg))).toBeDefined();
    expect(await (await fetch(`${allowed.base}/metrics`)).text()).toMatch(/^igw_listen_up 0$/m);

    // the same bouncer with DB_POOLER=pgbouncer: settings per transaction, the session is safe again
    const pooled = await start(dropping.urlFor(db.target.url!), { DB_POOLER: 'pgbouncer' });
    expect((await request(`${pooled.base}/readyz`)).status).toBe(200);
  });

  // What operators reach next: a bouncer that lets the session through (it drops the startup parameters,
  // and the database's own settings make the session read-only with a timeout), so nothing at start says
  // DB_POOLER is missing, until the prepared statements get lost under load.
  async function withSafeDatabaseDefaults(work: () => Promise<void>) {
    const name = new URL(db.target.url!).pathname.slice(1);
    await db.sql.unsafe(`ALTER DATABASE ${name} SET default_transaction_read_only = on`);
    await db.sql.unsafe(`ALTER DATABASE ${name} SET statement_timeout = '10s'`);
    try {
      await work();
    } finally {
      await db.sql.unsafe(`ALTER DATABASE ${name} RESET default_transaction_read_only`);
      await db.sql.unsafe(`ALTER DATABASE ${name} RESET statement_timeout`);
    }
  }
  const serverPort = () => Number(new URL(db.target.url!).port || 5432);
  const safeBouncer = (poolMode: 'session' | 'transaction', poolSize: number) =>
    startPgBouncer({ serverPort: serverPort(), poolSize, poolMode, ignoreStartupParameters: ['statement_timeout', 'default_transaction_read_only'] });

  /** 400 requests, 20 at a time: each answer is ok, a clean -32000 / SERVICE_UNAVAILABLE (with its reason), or anything else. */
  async function load(base: string) {
    const outcomes = new Map<string, number>();
    let next = 0;
    await Promise.all(Array.from({ length: 20 }, async () => {
      while (next < 400) {
        const i = next++;
        const reply = i % 2
          ? await rpc(base, { jsonrpc: '2.0', id: i, method: 'inds_getTicks', params: [1 + (i % 7), 0, 'eth', '', '', '', i % 5, 2] })
          : await gql(base, `{ ticks(first: ${1 + (i % 5)}) { totalCount edges { node { tick holders: stats { holders } } } } }`);
        const error = reply.json?.error ?? reply.json?.errors?.[0];
        const outcome = reply.status === 200 && !error ? 'ok'
          : error?.code === -32000 ? `unavailable: ${error.data.reason}`
            : error?.extensions?.code === 'SERVICE_UNAVAILABLE' ? `unavailable: ${error.message.replace(/^Service unavailable: /, '')}`
              : `other: ${reply.status} ${reply.text.slice(0, 200)}`;
        outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
      }
    }));
    return outcomes;
  }

  it('transaction pooling without DB_POOLER, the session safe by the database\'s settings: refused at start with a reason naming DB_POOLER', async () => {
    await withSafeDatabaseDefaults(async () => {
      const quiet = await safeBouncer('transaction', 3);
      try {
        const { base, log } = await start(quiet.urlFor(db.target.url!), { DB_POOL_MAX: 8 });
        const reason = 'transaction pooler in front of primary without DB_POOLER=pgbouncer';
        const ready = (await request(`${base}/readyz`)).json;
        const outcomes = await load(base);
        figures.push(`transaction pooler without DB_POOLER (session safe by database settings): /readyz ${JSON.stringify(ready)}; ` +
          `400 requests: ${[...outcomes].map(([k, v]) => `${v} ${k}`).join(', ')}`);
        expect(ready).toEqual({ status: 'unavailable', reason });
        expect(log.lines.filter((l) => l.level === 'error').map((l) => l.msg)).toEqual([
          `${reason}: statements of one connection are answered by different server sessions; refusing to serve from it (set DB_POOLER=pgbouncer)`,
        ]);
        expect([...outcomes]).toEqual([[`unavailable: ${reason}`, 400]]);
        expect(quiet.log()).not.toMatch(/prepared statement/);
      } finally {
        await quiet.stop();
      }
    });
  });

  it('a bouncer switched to transaction pooling under a running gateway: lost prepared statements are logged, counted, and the source refused naming DB_POOLER', async () => {
    await withSafeDatabaseDefaults(async () => {
      const switching = await safeBouncer('session', 10);
      try {
        const { base, log } = await start(switching.urlFor(db.target.url!), { DB_POOL_MAX: 8 });
        expect((await request(`${base}/readyz`)).status).toBe(200);
        const before = await load(base);
        expect([...before]).toEqual([['ok', 400]]);
        await switching.reload({ poolMode: 'transaction', poolSize: 3 });
        const after = await load(base);
        const reason = 'transaction pooler in front of primary without DB_POOLER=pgbouncer';
        const ready = (await request(`${base}/readyz`)).json;
        const lost = Number(/^igw_db_session_lost_total\{source="primary"\} (\d+)$/m.exec(await (await fetch(`${base}/metrics`)).text())?.[1]);
        const errors = log.lines.filter((l) => l.level === 'error');
        figures.push(`session → transaction pooling under load, no DB_POOLER: 400 requests: ${[...after].map(([k, v]) => `${v} ${k}`).join(', ')}; ` +
          `igw_db_session_lost_total ${lost}; /readyz ${JSON.stringify(ready)}; ${errors.length} error lines; ` +
          `bouncer log: ${switching.log().match(/prepared statement/g)?.length ?? 0} "prepared statement" lines`);
        // every answer is an answer or a clean "unavailable"; none is an internal error
        expect([...after.keys()].filter((k) => k.startsWith('other'))).toEqual([]);
        expect(ready).toEqual({ status: 'unavailable', reason });
        expect(errors.map((l) => l.msg)).toEqual([
          `${reason}: its prepared statements are lost between statements; refusing to serve from it (set DB_POOLER=pgbouncer)`,
        ]);
        expect(lost).toBeGreaterThanOrEqual(1);
      } finally {
        await switching.stop();
      }
    });
  });
});
