import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createGateway, type Gateway, type GatewayConfig } from '../src/app.js';
import { createTestDatabase, findServer, testConfig, type TestDatabase } from './support/db.js';
import { Fixture } from './support/fixtures.js';
import { listen } from './support/http.js';
import { capturingLogger, gql, request, rpc, waitFor } from './support/ops.js';
import { pgbouncerBinary, startPgBouncer, type PgBouncer } from './support/pgbouncer.js';

// The gateway behind a real PgBouncer in transaction pooling mode. With DB_POOLER=pgbouncer: it connects
// (no startup parameters), answers, cannot write, has its statements cut at DB_STATEMENT_TIMEOUT_MS, sends
// no prepared statements (none "does not exist" under concurrent load) and learns data versions by
// polling, saying so. Without it, behind a bouncer that drops the startup parameters, it refuses to serve
// from the unsafe session. Skipped without PgBouncer or a PostgreSQL server.

const bouncerBinary = pgbouncerBinary();
const server = await findServer();
const figures: string[] = [];

describe.skipIf(!bouncerBinary || !server)('behind PgBouncer (transaction pooling)', () => {
  let db: TestDatabase;
  let bouncer: PgBouncer;
  let dropping: PgBouncer;
  const gateways: Gateway[] = [];

  async function start(url: string, overrides: Partial<GatewayConfig>, logger = capturingLogger('info')) {
    const gateway = createGateway({ ...testConfig, DATA_VERSION_POLL_MS: 100, ...overrides }, { url }, { logger: logger.logger });
    gateways.push(gateway);
    await gateway.ready;
    return { gateway, base: await listen(gateway), log: logger };
  }

  beforeAll(async () => {
    db = await createTestDatabase();
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
    for (const gateway of gateways) await gateway.close().catch(() => {});
    await bouncer?.stop();
    await dropping?.stop();
    await db?.close();
    if (figures.length) console.info(`[poolers.pgbouncer]\n  ${figures.join('\n  ')}`);
  }, 60_000);

  it('without DB_POOLER the gateway cannot connect through a default PgBouncer (startup parameters refused): /readyz 503', async () => {
    const { base, log } = await start(bouncer.urlFor(db.target.url!), { DB_CONNECT_TIMEOUT_S: 2 });
    const ready = await request(`${base}/readyz`);
    expect(ready.status).toBe(503);
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

  it('behind a bouncer that drops the startup parameters: the writable, timeout-less session is refused (503 + error log) unless DB_ALLOW_UNSAFE_SESSION', async () => {
    const refused = await start(dropping.urlFor(db.target.url!), {});
    const ready = await request(`${refused.base}/readyz`);
    expect(ready.status).toBe(503);
    expect(ready.json).toEqual({ status: 'unavailable', reason: 'unsafe database session (writable or without statement_timeout)' });
    const line = refused.log.lines.find((l) => l.level === 'error');
    expect(line?.msg).toMatch(/writable .* and without statement_timeout: refusing to serve/);
    const answer = await gql(refused.base, '{ ticks(first: 1) { totalCount } }');
    expect(answer.json.errors.map((e: any) => e.extensions.code)).toEqual(['SERVICE_UNAVAILABLE']);

    const allowed = await start(dropping.urlFor(db.target.url!), { DB_ALLOW_UNSAFE_SESSION: true });
    expect((await request(`${allowed.base}/readyz`)).status).toBe(200);
    expect(allowed.log.lines.find((l) => l.level === 'warn' && /serving anyway/.test(l.msg))).toBeDefined();
    // LISTEN is accepted there but never delivers: found out at start, polling only
    expect(allowed.log.lines.find((l) => l.level === 'warn' && /LISTEN is accepted but notifications do not arrive/.test(l.msg))).toBeDefined();
    expect(await (await fetch(`${allowed.base}/metrics`)).text()).toMatch(/^igw_listen_up 0$/m);

    // the same bouncer with DB_POOLER=pgbouncer: settings per transaction, the session is safe again
    const pooled = await start(dropping.urlFor(db.target.url!), { DB_POOLER: 'pgbouncer' });
    expect((await request(`${pooled.base}/readyz`)).status).toBe(200);
  });
});
