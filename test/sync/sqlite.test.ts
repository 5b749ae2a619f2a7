import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectSource, parseSourceUrl } from '../../src/sync/source/connection.js';
import { verify } from '../../src/sync/verify.js';
import { findServer } from '../support/db.js';
import { startTestGateway, useDatabase } from '../support/gateway.js';
import { call } from '../support/http.js';
import { IndexerWriter } from '../support/indexer.js';
import { createSqliteSource, type SqliteSource } from '../support/indexer-sqlite.js';
import { startSyncProcess, waitFor, type SyncProcess } from '../support/sync-process.js';
import { because, skipUnless } from '../support/skips.js';

// The indexer's SQLite storage as the source (--source sqlite:///path): backfill of the same fixture rows as
// the MySQL tests (test/sync/backfill.test.ts), then polling while a writer appends flushes to the file from
// another process (WAL: the sync reads committed transactions, the writer is never blocked). --verify and
// the v2 answers agree with the source.

const server = await findServer();
const eth = { chain: 'eth', protocol: 'erc-20', tick: 'Pepe' };
const big = { chain: 'avalanche', protocol: 'asc-20', tick: 'huge' };
const alice = '0xAbCdEf0123456789aBcDeF0123456789AbCdEf01';
const bob = '0x4273173187f1108007b1C1ABE5301eFa03f7fc8A';
const holders = Array.from({ length: 8 }, (_, i) => `0x${(i + 1).toString(16).padStart(4, '0')}CcCc${'0'.repeat(30)}`);

describe('sync from the indexer\'s SQLite storage', { timeout: 180_000, ...skipUnless(server, because.noServerForChild) }, () => {
  const db = useDatabase();
  let src: SqliteSource;
  let w: IndexerWriter;
  let sync: SyncProcess | null = null;
  const args = () => ['--source', src.url, '--database-url', db.target.url!, '--poll-interval-ms', '200', '--source-time-zone', '+08:00'];
  const same = () => waitFor(async () => {
    const conn = await connectSource(parseSourceUrl(src.url));
    try {
      const r = await verify(conn, db.sql);
      return r.differences.length === 0 && r;
    } finally {
      await conn.end();
    }
  }, 60_000, 'the read model to match the source');

  beforeAll(async () => {
    src = createSqliteSource();
    w = new IndexerWriter(src.conn, 8 * 60, 'sqlite');
    w.deploy({ ...eth, deployBy: alice, totalSupply: '1000000' });
    w.deploy({ ...big, totalSupply: '99999999999999999999.999999999999999999', limit: '12345678901234567890.123456789012345678' });
    await w.flush('eth');
    w.mint(eth, alice, '1000', 'text');
    w.mint(eth, alice.toLowerCase(), '500.25', 'raw');
    w.transfer(eth, alice, bob, '300.5');
    w.mint(big, bob, '99999999999999999999.999999999999999999');
    await w.flush('eth');
  });
  afterAll(async () => {
    await sync?.kill();
    await src?.close();
  });

  it('preflight: the SQLite file, every table and column present, polling', async () => {
    const p = startSyncProcess([...args(), '--dry-run']);
    expect((await p.exited).code).toBe(0);
    expect(p.output()).toMatch(/source\s+indexer\.db on SQLite 3\.\d+/);
    expect(p.output()).toMatch(/source schema every table and column present/);
    expect(p.output()).toMatch(/follow mode\s+polling \(binlog not usable: an SQLite source has no binlog\)/);
    const refused = startSyncProcess([...args(), '--mode', 'binlog', '--dry-run']);
    expect((await refused.exited).code).toBe(1);
    expect(refused.output()).toMatch(/--mode binlog is not possible: an SQLite source has no binlog/);
  });

  it('backfills: exact decimals, hashes, casing, times with their offset, signed amounts', async () => {
    sync = startSyncProcess(args());
    await same();
    const ticks = await db.sql`SELECT tick, total_supply::text, limit_per_mint::text, minted::text, holders::int, deploy_time
      FROM ticks ORDER BY id`;
    expect(ticks.map((t) => t.tick)).toEqual(['pepe', 'huge']);
    expect(ticks[1]!.total_supply).toBe('99999999999999999999.999999999999999999');
    expect(ticks[1]!.limit_per_mint).toBe('12345678901234567890.123456789012345678');
    expect(ticks[1]!.minted).toBe('99999999999999999999.999999999999999999');
    expect(ticks[0]!.minted).toBe('1500.25');
    expect((ticks[0]!.deploy_time as Date).toISOString()).toBe('2024-03-01T12:01:00.000Z');
    const balances = await db.sql`SELECT address, balance::text FROM balances b JOIN ticks t ON t.id = b.tick_id
      WHERE t.tick = 'pepe' ORDER BY address`;
    expect(balances).toEqual([{ address: bob, balance: '300.5' }, { address: alice, balance: '1199.75' }]);
    const moves = await db.sql`SELECT address, event::int, amount::text, tx_hash FROM address_txs ORDER BY id`;
    expect(moves.filter((m) => m.event === 3 || m.event === 4).map((m) => [m.address, m.event, m.amount]))
      .toEqual([[alice, 4, '300.5'], [bob, 3, '300.5']]);
    for (const m of moves) expect(m.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    const [state] = await db.sql`SELECT mode, backfill_done, server_uuid FROM sync_source`;
    expect(state).toMatchObject({ mode: 'polling', backfill_done: true, server_uuid: `sqlite:${src.path}` });
  });

  it('polls while a writer appends flushes to the file: every row arrives, the v2 answers match the source', async () => {
    for (let f = 0; f < 20; f++) {
      for (let i = 0; i < holders.length; i++) w.mint(eth, holders[i]!, `${f + 1}.5`);
      w.transfer(eth, alice, holders[f % holders.length]!, '0.25');
      await w.flush('eth');
      await new Promise((r) => setTimeout(r, 25));
    }
    const r = await same();
    expect(r.ticks).toBe(2);
    const [[{ n }]] = (await src.conn.query('SELECT count(*) AS n FROM txs')) as any;
    expect(await db.sql`SELECT count(*)::int AS n FROM transactions`.then((x) => x[0]!.n)).toBe(Number(n));
    const { gateway, base } = await startTestGateway(db);
    try {
      const answer = (await call(base, 'inds_getHoldersByTick', [50, 0, 'eth', 'erc-20', 'pepe', 2])).result;
      const [[{ h }]] = (await src.conn.query(`SELECT count(*) AS h FROM balances WHERE tick = 'Pepe' AND CAST(balance AS REAL) > 0`)) as any;
      expect(answer.total).toBe(Number(h));
      expect(answer.total).toBe(holders.length + 2);
    } finally {
      await gateway.close();
    }
    // --verify on the pair: identical, exit 0
    const v = startSyncProcess([...args(), '--verify']);
    expect((await v.exited).code).toBe(0);
    expect(v.output()).toMatch(/the read model matches the source/);
  });
});
