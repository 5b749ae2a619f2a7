import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { createClient } from 'graphql-sse';
import postgres from 'postgres';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSql, type Sql } from '../../src/db/client.js';
import { migrate } from '../../src/db/migrate.js';
import { Fixture, fakeHash } from '../support/fixtures.js';
import { gql, request, rpc } from '../support/http.js';
import { findRedis, indexMint, waitFor } from '../support/ops.js';
import { createPgInstance, pgBinDir, type PgInstance } from '../support/pg-instance.js';
import { because, skipUnless } from '../support/skips.js';
import { useGateways } from '../support/gateway.js';

// Read replicas against a real primary and a real streaming standby (pg_basebackup -R), both private to
// this file: routing and rotation by measured lag, the replica metrics, /readyz, cache entries stored
// under the version of the server that answered (replay paused on the standby while the primary moves
// on), a real recovery conflict retried on the primary, a terminated backend, and db:migrate pointed
// at the standby. Skipped where the PostgreSQL server binaries are not installed.

const bin = pgBinDir();
const root = fileURLToPath(new URL('../..', import.meta.url));
const figures: string[] = [];
const tick = { chain: 'eth', protocol: 'erc-20', tick: 'alpha' };
const txHash = fakeHash(0xfeed);
const supplyQuery = `query Supply($n: Int) { tick(chain: "eth", protocol: "erc-20", tick: "alpha") { totalSupply } ticks(first: $n) { totalCount } }`;

describe('read replicas (own primary and streaming standby)', skipUnless(bin, because.noPgBin), () => {
  let primary: PgInstance;
  let standby: PgInstance;
  let writer: Sql;
  let onStandby: postgres.Sql;
  // on the primary unless a call names another target
  const startGateway = useGateways({ get target() { return { url: primary.url }; } }, { DATA_VERSION_POLL_MS: 100 });
  const supply = async (base: string, n = 1) => {
    const reply = await gql(base, supplyQuery, { n });
    expect(reply.json.errors, reply.text).toBeUndefined();
    return { supply: reply.json.data.tick.totalSupply as string, cache: reply.headers.get('x-cache') };
  };
  const setSupply = (value: string) => writer`UPDATE ticks SET total_supply = ${value} WHERE tick = ${tick.tick}`;
  const versionOn = async (sql: Sql | postgres.Sql) => (await sql<{ v: string }[]>`SELECT version::text AS v FROM data_version`)[0]!.v;
  // a lock's WAL record is not a commit: with synchronous_commit=off it can wait in the WAL buffers. A
  // committed transaction with an xid (synchronous_commit on) flushes everything before it to the standby.
  const flushWal = () => writer.begin(async (tx) => {
    await tx`SET LOCAL synchronous_commit = on`;
    await tx`SELECT txid_current()`;
  });
  const standbyHoldsChains = () => waitFor(async () =>
    (await onStandby`SELECT 1 FROM pg_locks WHERE relation = 'chains'::regclass AND mode = 'AccessExclusiveLock'`).length === 1, 10_000, 20);
  const caughtUp = () => waitFor(async () => (await versionOn(onStandby)) === (await versionOn(writer)), 15_000, 20);
  const metric = async (base: string, name: string, label: string) => {
    const text = await (await fetch(`${base}/metrics`)).text();
    const line = text.split('\n').find((l) => l.startsWith(`${name}{replica="${label}"}`));
    return line === undefined ? undefined : Number(line.split(' ').pop());
  };

  beforeAll(async () => {
    primary = await createPgInstance();
    await primary.start();
    writer = createSql({ url: primary.url, poolMax: 3, statementTimeoutMs: 60_000, connectTimeoutS: 10, readOnly: false });
    await migrate(writer);
    const fixture = new Fixture();
    const alpha = fixture.tick({ ...tick, total_supply: '1000' });
    fixture.mint(alpha, '0x2222222222222222222222222222222222222222', '10', txHash);
    await fixture.load(writer);
    // max_standby_streaming_delay=0: a query in the way of replay is cancelled at once (recovery conflict)
    standby = await createPgInstance({ standbyOf: primary, settings: ['max_standby_streaming_delay=0', 'hot_standby_feedback=off'] });
    await standby.start();
    onStandby = postgres(standby.url, { max: 2, onnotice: () => {} });
    await caughtUp();
  }, 120_000);

  afterAll(async () => {
    await startGateway.closeAll().catch(() => {});
    await onStandby?.end({ timeout: 5 });
    await writer?.end({ timeout: 5 });
    await standby?.destroy();
    await primary?.destroy();
    if (figures.length) console.info(`[replicas.standby]\n  ${figures.join('\n  ')}`);
  }, 60_000);

  it('a multi-host DATABASE_URL: reads go to the replica; over MAX_REPLICA_LAG_MS it leaves the rotation (metrics), back when caught up', async () => {
    const { gateway, base } = await startGateway({ MAX_REPLICA_LAG_MS: 1_500, DATABASE_READ_NAMES: ['standby-a'] },
      { target: { url: `postgres://postgres@127.0.0.1:${primary.port},127.0.0.1:${standby.port}/postgres` } });
    const label = 'standby-a';
    expect(gateway.sources.replicas.map((r) => [r.name, r.label])).toEqual([[label, `127.0.0.1:${standby.port}`]]);
    await waitFor(async () => (await metric(base, 'igw_replica_in_rotation', label)) === 1, 5_000, 50);
    // the proven bound: how long ago the primary was last read at a version the replica has (about one poll here)
    expect(await metric(base, 'igw_replica_lag_seconds', label)).toBeLessThan(1.5);
    expect(await supply(base)).toMatchObject({ supply: '1000' });

    await onStandby`SELECT pg_wal_replay_pause()`;
    try {
      await setSupply('2000');
      const wrote = performance.now();
      // the replica answers (it has not replayed the write) while within the budget…
      expect((await supply(base)).supply).toBe('1000');
      // …and leaves the rotation once over it: answers then come from the primary
      await waitFor(async () => (await metric(base, 'igw_replica_in_rotation', label)) === 0, 10_000, 20);
      const outAfter = performance.now() - wrote;
      const lag = (await metric(base, 'igw_replica_lag_seconds', label))!;
      expect(lag).toBeGreaterThan(1.5);
      expect((await supply(base)).supply).toBe('2000');
      const ready = await request(`${base}/readyz`);
      expect(ready.status).toBe(200); // the primary is within the budget
      figures.push(`replay paused, one write: replica out of rotation ${outAfter.toFixed(0)} ms after the write (budget 1500 ms), lag metric then ${lag.toFixed(2)} s`);
    } finally {
      await onStandby`SELECT pg_wal_replay_resume()`;
    }
    const back = await waitFor(async () => (await metric(base, 'igw_replica_in_rotation', label)) === 1, 10_000, 20);
    expect(await metric(base, 'igw_replica_lag_seconds', label)).toBeLessThan(1.5);
    expect((await supply(base)).supply).toBe('2000');
    figures.push(`replay resumed: back in rotation after ${back.toFixed(0)} ms`);
    const scrape = await (await fetch(`${base}/metrics`)).text();
    expect(scrape).toMatch(/^igw_listen_up 1$/m);
    expect(scrape).not.toMatch(/postgres@|postgres:\/\//);
  });

  it('metrics: replicas by name or position, never merged when two share a host:port; igw_db_pool_size is DB_POOL_MAX × servers', async () => {
    await caughtUp();
    // the same server twice (as two databases behind one pooler would be): two replicas, two series
    const { gateway, base } = await startGateway({ MAX_REPLICA_LAG_MS: 600_000, DATABASE_READ_URLS: `${standby.url},${standby.url}`, DB_POOL_MAX: 4 });
    await waitFor(async () => gateway.sources.replicas.every((r) => r.inRotation), 5_000, 20);
    const scrape = await (await fetch(`${base}/metrics`)).text();
    expect(scrape.split('\n').filter((l) => l.startsWith('igw_replica_in_rotation{'))).toEqual([
      'igw_replica_in_rotation{replica="0"} 1', 'igw_replica_in_rotation{replica="1"} 1',
    ]);
    expect(scrape.split('\n').filter((l) => l.startsWith('igw_replica_lag_seconds{')).map((l) => l.replace(/ .*/, ''))).toEqual([
      'igw_replica_lag_seconds{replica="0"}', 'igw_replica_lag_seconds{replica="1"}',
    ]);
    // before any request used a replica's pool: three servers of 4
    expect(scrape).toMatch(/^igw_db_pool_size 12$/m);
    expect(scrape).toMatch(/^igw_db_session_lost_total\{source="replica:1"\} 0$/m);
  });

  it('subscriptions: an event is read from the primary that announced it, never from a replica that has not replayed it', async () => {
    await caughtUp();
    const { gateway, base } = await startGateway({ MAX_REPLICA_LAG_MS: 600_000, DATABASE_READ_URLS: standby.url });
    await waitFor(async () => gateway.sources.replicas[0]!.inRotation, 5_000, 20);
    const client = createClient({ url: `${base}/graphql`, retryAttempts: 0 });
    const events: any[] = [];
    const stop = client.subscribe({
      query: `subscription { tickActivity(chain: "eth", protocol: "erc-20", tick: "alpha") { movement { amount } tick { stats { minted holders } } } }`,
    }, { next: (value) => void events.push(value), error: () => {}, complete: () => {} });
    try {
      await waitFor(async () => gateway.live.hub.stats().subscriptions === 1, 5_000, 10);
      await onStandby`SELECT pg_wal_replay_pause()`;
      try {
        await indexMint(writer, tick, '0x4444444444444444444444444444444444444444', '5');
        await waitFor(async () => events.length === 1, 3_000, 10);
        const [fresh] = await writer<{ minted: string; holders: string }[]>`
          SELECT minted::text, holders::text FROM ticks WHERE tick = ${tick.tick}`;
        const [stale] = await onStandby<{ minted: string }[]>`SELECT minted::text FROM ticks WHERE tick = ${tick.tick}`;
        expect(stale!.minted).not.toBe(fresh!.minted); // the replica in rotation has not replayed the mint
        expect(events[0]).toEqual({ data: { tickActivity: { movement: { amount: '5' }, tick: { stats: { minted: fresh!.minted, holders: Number(fresh!.holders) } } } } });
      } finally {
        await onStandby`SELECT pg_wal_replay_resume()`;
      }
      await caughtUp();
    } finally {
      stop();
      client.dispose();
    }
  });

  it('no stale cache entries: with replay paused, answers from the standby are stored under its own version; a gateway on the primary sees fresh answers only', async () => {
    const redis = await findRedis();
    const shared = redis ? { REDIS_URL: redis } : {};
    await caughtUp();
    await setSupply('3000');
    await caughtUp();
    // A balances onto the standby (a generous budget keeps it in rotation); B reads the primary only
    const a = await startGateway({ CACHE: true, MAX_REPLICA_LAG_MS: 600_000, DATABASE_READ_URLS: standby.url, ...shared });
    const b = await startGateway({ CACHE: true, ...shared });
    await waitFor(async () => a.gateway.sources.replicas[0]!.inRotation, 5_000, 20);
    await onStandby`SELECT pg_wal_replay_pause()`;
    try {
      await setSupply('4000');
      const fresh = await versionOn(writer);
      await waitFor(async () => a.gateway.ops.watcher.current()?.version === fresh && b.gateway.ops.watcher.current()?.version === fresh, 5_000, 10);
      expect(await versionOn(onStandby)).not.toBe(fresh);

      const fromA = await Promise.all(Array.from({ length: 20 }, (_, i) => supply(a.base, i + 1)));
      const oldFromA = fromA.filter((r) => r.supply === '3000').length;
      expect(oldFromA).toBe(20); // every one was balanced onto the (paused) standby
      const fromB = await Promise.all(Array.from({ length: 20 }, (_, i) => supply(b.base, i + 1)));
      const oldFromB = fromB.filter((r) => r.supply !== '4000').length;
      expect(oldFromB).toBe(0);
      expect(fromB.every((r) => r.cache === 'miss')).toBe(true);
      // and A's second round is answered from its cache entries of the standby's version: still consistent
      const again = await Promise.all(Array.from({ length: 20 }, (_, i) => supply(a.base, i + 1)));
      expect(again.every((r) => r.supply === '3000' && r.cache === 'hit')).toBe(true);
      figures.push(`cache (${redis ? 'shared Redis' : 'per-gateway memory'}): 20 answers from the paused standby, ${oldFromB} old answers seen by the primary's gateway (of 20), all 20 misses there`);
    } finally {
      await onStandby`SELECT pg_wal_replay_resume()`;
    }
    await caughtUp();
  });

  // the gateway's look-up statements waiting for a lock (the data-version reads of the open gateways wait too)
  const lookupWaiting = async (sql: Sql | postgres.Sql) => (await sql`
    SELECT 1 FROM pg_stat_activity WHERE application_name = 'inscription-gateway' AND wait_event_type = 'Lock'
       AND query LIKE '%FROM transactions x JOIN chains c%'`).length;

  it('a recovery conflict on the standby (40001) is retried on the primary: the client gets its answer', async () => {
    await caughtUp();
    const { base } = await startGateway({ MAX_REPLICA_LAG_MS: 600_000, DATABASE_READ_URLS: standby.url, DB_STATEMENT_TIMEOUT_MS: 30_000 });
    const conflictsBefore = Number((await onStandby`SELECT confl_lock FROM pg_stat_database_conflicts WHERE datname = current_database()`)[0]!.confl_lock);
    const first = await writer.reserve();
    const second = await writer.reserve();
    try {
      // the primary locks chains: replayed, the standby's startup process holds the lock…
      await first`BEGIN`;
      await first`LOCK chains IN ACCESS EXCLUSIVE MODE`;
      await flushWal();
      await standbyHoldsChains();
      // …so the gateway's transaction look-up on the standby takes transactions, then waits for chains
      const reply = gql(base, `{ transaction(chain: "eth", hash: "${txHash}") { txHash } }`);
      await waitFor(async () => (await lookupWaiting(onStandby)) === 1, 10_000, 20);
      // the primary now locks transactions: replay must take a lock the gateway's statement holds, and cancels it
      await second`BEGIN`;
      await second`LOCK transactions IN ACCESS EXCLUSIVE MODE`;
      await flushWal();
      // the retry goes to the primary, where it waits for the same two locks until they are released
      await waitFor(async () => (await lookupWaiting(writer)) === 1, 10_000, 20);
      await first`COMMIT`;
      await second`COMMIT`;
      const answered = await reply;
      expect(answered.json).toEqual({ data: { transaction: { txHash } }, extensions: expect.anything() });
    } finally {
      await first`ROLLBACK`.catch(() => {});
      await second`ROLLBACK`.catch(() => {});
      first.release();
      second.release();
    }
    // cumulative statistics are flushed by the cancelled backend within a second or so
    await waitFor(async () => Number((await onStandby`SELECT confl_lock FROM pg_stat_database_conflicts WHERE datname = current_database()`)[0]!.confl_lock) === conflictsBefore + 1, 10_000, 100);
    expect(await readFileTail(standby.logFile)).toMatch(/canceling statement due to conflict with recovery/);
  });

  it('a terminated backend (57P01): on the only source, -32000 / SERVICE_UNAVAILABLE; on the standby, retried on the primary', async () => {
    const single = await startGateway({ DB_STATEMENT_TIMEOUT_MS: 30_000 });
    const waitingOn = async (sql: Sql | postgres.Sql) =>
      (await sql<{ pid: number }[]>`SELECT pid FROM pg_stat_activity WHERE application_name = 'inscription-gateway' AND wait_event_type = 'Lock'
                                       AND query NOT LIKE '%data_version%'`)[0]?.pid;
    const terminate = async (sql: Sql | postgres.Sql) => {
      let pid: number | undefined;
      await waitFor(async () => (pid = await waitingOn(sql)) !== undefined, 10_000, 20);
      await sql`SELECT pg_terminate_backend(${pid!})`;
    };
    const locker = await writer.reserve();
    try {
      await locker`BEGIN`;
      await locker`LOCK ticks IN ACCESS EXCLUSIVE MODE`;
      const viaRpc = rpc(single.base, { jsonrpc: '2.0', id: 2, method: 'inds_getTicks', params: [1, 0, 'eth', '', '', '', 0, 2] });
      await terminate(writer);
      expect((await viaRpc).json).toMatchObject({ jsonrpc: '2.0', id: 2, error: { code: -32000, message: 'Service unavailable', data: { reason: 'database unreachable' } } });
      const viaGql = gql(single.base, '{ ticks(first: 1) { totalCount } }');
      await terminate(writer);
      expect((await viaGql).json.errors.map((e: any) => e.extensions.code)).toEqual(['SERVICE_UNAVAILABLE']);
      await locker`COMMIT`;

      // with the standby: its backend is terminated while it waits for a lock replayed from the primary
      await caughtUp();
      const balanced = await startGateway({ MAX_REPLICA_LAG_MS: 600_000, DATABASE_READ_URLS: standby.url, DB_STATEMENT_TIMEOUT_MS: 30_000 });
      await locker`BEGIN`;
      await locker`LOCK chains IN ACCESS EXCLUSIVE MODE`;
      await flushWal();
      await standbyHoldsChains();
      const reply = gql(balanced.base, `{ transaction(chain: "eth", hash: "${txHash}") { txHash } }`);
      await terminate(onStandby);
      // the retry waits on the primary for the same lock
      await waitFor(async () => (await waitingOn(writer)) !== undefined, 10_000, 20);
      await locker`COMMIT`;
      expect((await reply).json.data).toEqual({ transaction: { txHash } });
    } finally {
      await locker`ROLLBACK`.catch(() => {});
      locker.release();
    }
  });

  it('db:migrate against the standby: one line, exit 1, no stack trace; a multi-host URL migrates its primary', async () => {
    const migrateWith = (url: string) => promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/cli/migrate.ts'], {
      cwd: root, env: { ...process.env, DATABASE_URL: url }, timeout: 60_000,
    }).then(({ stdout }) => ({ code: 0, stdout, stderr: '' }), (error: { code: number; stdout: string; stderr: string }) => error);
    const refused = await migrateWith(standby.url);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(`127.0.0.1:${standby.port} is a read-only standby; run migrations against the primary\n`);
    // standby first, as libpq lists often have it after a failover: skipped, the primary is migrated
    const both = await migrateWith(`postgres://postgres@127.0.0.1:${standby.port},127.0.0.1:${primary.port}/postgres`);
    expect([both.code, both.stdout]).toEqual([0, 'database is up to date\n']);
  });

  it('/readyz: 503 with a reason when the primary is gone and the only replica lags; 200 again once it has replayed', async () => {
    await caughtUp();
    const { gateway, base } = await startGateway({ MAX_REPLICA_LAG_MS: 1_000, DATABASE_READ_URLS: standby.url });
    await waitFor(async () => gateway.sources.replicas[0]!.inRotation, 5_000, 20);
    await onStandby`SELECT pg_wal_replay_pause()`;
    await setSupply('5000');
    await waitFor(async () => !gateway.sources.replicas[0]!.inRotation, 10_000, 20);
    await writer.end({ timeout: 5 });
    await primary.stop('immediate');
    // the first 503s can say "database unreachable" (the probe's own round trip to the dead primary) until
    // the data-version watcher's next read (every 100 ms here) has failed too: then the lag budget is why
    await waitFor(async () => (await request(`${base}/readyz`)).json?.reason === 'no database source within the replica lag budget', 10_000, 50);
    const down = await request(`${base}/readyz`);
    expect(down.json).toEqual({ status: 'unavailable', reason: 'no database source within the replica lag budget' });
    // the standby has received the write: replayed, it is as new as the last primary version seen
    await onStandby`SELECT pg_wal_replay_resume()`;
    await waitFor(async () => (await request(`${base}/readyz`)).status === 200, 10_000, 50);
    expect((await supply(base)).supply).toBe('5000');
  });

});

async function readFileTail(file: string): Promise<string> {
  const { readFile } = await import('node:fs/promises');
  return (await readFile(file, 'utf8')).slice(-20_000);
}
