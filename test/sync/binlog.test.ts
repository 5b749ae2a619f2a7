import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findServer } from '../support/db.js';
import { startTestGateway, useDatabase } from '../support/gateway.js';
import { call, gqlJson } from '../support/http.js';
import { historyDifferences } from '../support/history.js';
import { createSourceDatabase, IndexerWriter, type SourceDb } from '../support/indexer.js';
import { mariadbAvailable, startMariaInstance, type MariaInstance } from '../support/mariadb-instance.js';
import { startSyncProcess, stopSyncSuite, waitFor, type SyncProcess } from '../support/sync-process.js';
import { because, skipUnlessAll } from '../support/skips.js';

// Binlog follow against a private MariaDB with a ROW binlog: a flush arriving while a gateway serves
// changes its RPC answers and GraphQL freshness (the cache is invalidated); kill -9 mid-backfill and
// mid-follow, then resume with no loss and no duplicate; a source outage is ridden out.

const server = await findServer();
const tick = { chain: 'eth', protocol: 'erc-20', tick: 'bin' };
const holders = Array.from({ length: 20 }, (_, i) => `0x${(i + 1).toString(16).padStart(4, '0')}AbCd${'0'.repeat(30)}`);

describe('sync: binlog follow', { timeout: 180_000, ...skipUnlessAll([server, because.noServerForChild], [mariadbAvailable(), because.noMariadb]) }, () => {
  let maria: MariaInstance;
  const db = useDatabase();
  let src: SourceDb;
  let w: IndexerWriter;
  let sync: SyncProcess | null = null;
  const args = () => ['--source', src.url, '--database-url', db.target.url!, '--source-time-zone', 'America/New_York', '--batch-size', '100',
    '--server-id', '5511', '--log-level', 'info'];

  /** The read model holds exactly the source's rows (no loss, no duplicate). */
  async function expectSameAsSource() {
    const count = async (q: string) => Number(((await src.conn.query(q)) as any)[0][0].n);
    const pg = async (table: string) => (await db.sql.unsafe(`SELECT count(*)::int AS n FROM ${table}`))[0]!.n as number;
    expect(await pg('transactions')).toBe(await count('SELECT count(*) AS n FROM txs'));
    expect(await pg('address_txs')).toBe(await count('SELECT count(*) AS n FROM address_txs'));
    expect(await pg('balances')).toBe(await count('SELECT count(*) AS n FROM balances'));
    const [[s]] = (await src.conn.query(`SELECT CAST(sum(balance) AS CHAR) AS s FROM balances`)) as any;
    const [p] = await db.sql`SELECT sum(balance)::text AS s FROM balances`;
    expect(Number(p!.s)).toBe(Number(s.s));
    const [rows] = (await src.conn.query(`SELECT lower(address) AS a, CAST(balance AS CHAR) AS b FROM balances ORDER BY 1`)) as any;
    const mine = await db.sql`SELECT address_key AS a, balance::text AS b FROM balances ORDER BY 1`;
    expect(mine.map((r) => [r.a, Number(r.b)])).toEqual(rows.map((r: any) => [r.a, Number(r.b)]));
    const [ids] = await db.sql`SELECT count(DISTINCT id)::int AS d, count(*)::int AS n FROM transactions`;
    expect(ids!.d).toBe(ids!.n);
    // the balance history: same rows, and every height answers like the source's balance_txn
    expect(await pg('balance_history')).toBe(await count('SELECT count(*) AS n FROM balance_txn'));
    expect((await historyDifferences(src.conn, db.sql)).differences).toEqual([]);
  }
  const caughtUp = () => waitFor(async () => {
    const [[{ n }]] = (await src.conn.query('SELECT count(*) AS n FROM txs')) as any;
    const [p] = await db.sql`SELECT count(*)::int AS n FROM transactions`;
    const [b] = await db.sql`SELECT backfill_done FROM sync_source`.catch(() => [] as any[]);
    return b?.backfill_done && p!.n === Number(n);
  }, 60_000, 'the sync to catch up');

  beforeAll(async () => {
    maria = await startMariaInstance(4401);
    src = await createSourceDatabase({ host: maria.host, port: maria.port, user: maria.user });
    w = new IndexerWriter(src.conn, -5 * 60);
    w.deploy({ ...tick, totalSupply: '100000000' });
    await w.flush();
    // enough rows for a backfill of many ranges (batch size 100)
    for (let f = 0; f < 10; f++) {
      for (let i = 0; i < 60; i++) w.mint(tick, holders[(f * 60 + i) % holders.length]!, `${i + 1}.5`, i % 2 ? 'raw' : 'text');
      await w.flush();
    }
  }, 180_000);
  afterAll(() => stopSyncSuite({ sync, src, maria }));

  it('preflight sees the ROW binlog and the privileges and picks binlog mode', async () => {
    const p = startSyncProcess([...args(), '--dry-run']);
    expect((await p.exited).code).toBe(0);
    expect(p.output()).toMatch(/binlog\s+on, format ROW; REPLICATION SLAVE yes, REPLICATION CLIENT yes/);
    expect(p.output()).toMatch(/follow mode\s+binlog/);
  });

  it('kill -9 mid-backfill, then a resumed backfill copies every row once', async () => {
    sync = startSyncProcess(args());
    await waitFor(async () => {
      const [r] = await db.sql`SELECT sum(rows_copied)::int AS n, bool_and(done) AS done FROM sync_backfill`.catch(() => [] as any[]);
      return r && r.n >= 300 && !r.done;
    }, 60_000, 'the backfill to be under way');
    // the tables keyed by tick copied on a second connection in the same snapshot, beside txs and the history
    expect(sync.output()).toMatch(/"lanes":2,.*"msg":"backfill planned"/);
    await sync.kill('SIGKILL');
    const [mid] = await db.sql`SELECT backfill_done FROM sync_source`;
    expect(mid!.backfill_done).toBe(false);
    // a flush between the first snapshot and the resumed one: copied by the newer snapshot and replayed
    // from the binlog position of the first (the apply is idempotent)
    for (let i = 0; i < 10; i++) w.transfer(tick, holders[i]!, holders[i + 10]!, '0.5');
    await w.flush();
    sync = startSyncProcess(args());
    await caughtUp();
    expect(sync.output()).toMatch(/"lanes":\d,.*"msg":"backfill resumes"/);
    await expectSameAsSource();
  });

  it('a flush while a gateway serves: the RPC answer and GraphQL freshness change, the cache is invalidated', async () => {
    const { gateway, base } = await startTestGateway(db, { CACHE: true, DATA_VERSION_POLL_MS: 100 } as never);
    try {
      const newcomer = '0xFeEdFaCe00000000000000000000000000000001';
      const ask = () => call(base, 'inds_getBalancesByAddress', [10, 0, newcomer, '', '', '', '', 2]);
      expect((await ask()).result.total).toBe(0);
      expect((await ask()).result.total).toBe(0); // cached now
      const fresh = async () => ((await gqlJson(base, '{ chains(names: ["eth"]) { name } }')) as any).extensions;
      // the gateway's first data-version read may still be in flight: freshness appears once it is done
      const before = await waitFor(async () => { const f = await fresh(); return f?.freshness && f; }, 15_000, 'GraphQL freshness');
      w.mint(tick, newcomer, '7.25');
      await w.flush();
      const answer = await waitFor(async () => { const r = await ask(); return r.result.total === 1 && r; }, 15_000, 'the RPC answer to change');
      expect(JSON.stringify(answer.result)).toContain('7.25');
      // written as wall-clock time at -05:00 by the indexer host, read from the binlog, stored as UTC
      const [move] = await db.sql`SELECT created_at FROM address_txs WHERE address = ${newcomer}`;
      expect((move!.created_at as Date).toISOString()).toBe(new Date(w.now()).toISOString());
      const after = await waitFor(async () => { const f = await fresh(); return f?.freshness?.dataVersion !== before?.freshness?.dataVersion && f; },
        15_000, 'GraphQL freshness to change');
      expect(after.freshness.indexedHeights.eth).not.toBe(before.freshness.indexedHeights.eth);
      // the data's age: seconds since the newest indexed block time (the fixture's blocks are from 2024)
      const newest = Date.parse(`${(await db.sql`SELECT max(block_time) AS t FROM indexed_blocks`)[0]!.t.toISOString()}`);
      expect(Math.abs(after.freshness.dataAgeSeconds - (Date.now() - newest) / 1000)).toBeLessThan(5);
      const ready = await (await fetch(`${base}/readyz`)).json();
      expect(ready.status).toBe('ready');
      expect(Math.abs(ready.dataAgeSeconds - (Date.now() - newest) / 1000)).toBeLessThan(5);
    } finally {
      await gateway.close();
    }
  });

  it('kill -9 mid-follow, then resume from the committed position: no loss, no duplicate', async () => {
    const writing = (async () => {
      for (let f = 0; f < 15; f++) {
        for (let i = 0; i < 20; i++) w.transfer(tick, holders[i]!, holders[(i + 1) % holders.length]!, '0.25');
        await w.flush();
        await new Promise((r) => setTimeout(r, 30));
      }
    })();
    await waitFor(async () => {
      const [r] = await db.sql`SELECT count(*)::int AS n FROM transactions WHERE op = 'transfer'`;
      return r!.n > 40;
    }, 30_000, 'the follow to be applying transfers');
    await sync!.kill('SIGKILL');
    await writing;
    sync = startSyncProcess(args());
    await caughtUp();
    await expectSameAsSource();
    const [pos] = await db.sql`SELECT mode, binlog_file, binlog_pos::text AS pos FROM sync_source`;
    expect(pos!.mode).toBe('binlog');
    expect(Number(pos!.pos)).toBeGreaterThan(0);
  });

  it('a source outage is retried with backoff and nothing is lost; metrics report it', async () => {
    const port = await sync!.metricsPort();
    await maria.stop();
    await waitFor(async () => /source or target unavailable: retrying/.test(sync!.output()), 30_000, 'a retry');
    await maria.start();
    await src.conn.end().catch(() => {});
    const mysql = await import('mysql2/promise');
    src.conn = await mysql.createConnection({ host: maria.host, port: maria.port, user: 'root', database: src.database,
      dateStrings: true, supportBigNumbers: true, bigNumberStrings: true });
    await src.conn.query(`SET time_zone = '+00:00'`);
    w = Object.assign(w, { conn: src.conn });
    w.mint(tick, holders[3]!, '1');
    await w.flush();
    await caughtUp();
    await expectSameAsSource();
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    expect(metrics).toMatch(/igw_sync_errors_total\{kind="source"\} [1-9]/);
    expect(metrics).toMatch(/igw_sync_mode\{mode="binlog"\} 1/);
    expect(metrics).toMatch(/igw_sync_rows_applied_total\{table="txs",phase="follow"\} [1-9]/);
  });

  it('SIGTERM finishes the transaction in hand and exits 0', async () => {
    const exit = await sync!.kill('SIGTERM');
    expect(exit.code).toBe(0);
    sync = null;
  });

  it('--once catches up a backlog of 300 flushes from the saved position (the stream pauses while behind) and exits 0', async () => {
    for (let i = 0; i < 300; i++) {
      w.transfer(tick, holders[5]!, holders[6]!, '0.01');
      await w.flush();
    }
    const once = startSyncProcess([...args(), '--once']);
    expect((await once.exited).code).toBe(0);
    expect(once.output()).toMatch(/binlog stream paused until the backlog is applied/);
    await expectSameAsSource();
  });
});
