import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findServer } from '../support/db.js';
import { useDatabase } from '../support/gateway.js';
import { IndexerWriter, useSourceDatabase } from '../support/indexer.js';
import { startMysqlProxy, type MysqlProxy } from '../support/mysql-proxy.js';
import { startSyncProcess, waitFor, type SyncProcess } from '../support/sync-process.js';
import { because, skipUnless } from '../support/skips.js';

// The polling follow while the indexer writes nothing: the source is read once per interval (one snapshot),
// not early as well; the statements are counted on the wire by a proxy in front of the shared MariaDB. A
// flush after the idle spell is still visible within about an interval.

const server = await findServer();
const tick = { chain: 'bsc', protocol: 'bsc-20', tick: 'idle' };
const holder = (i: number) => `0x${(i + 1).toString(16).padStart(4, '0')}1d1e${'0'.repeat(32)}`;
const intervalMs = 300;
const snapshotStart = /^START TRANSACTION WITH CONSISTENT SNAPSHOT/;

describe('sync: an idle polling follow', { timeout: 120_000, ...skipUnless(server, because.noServerForChild) }, () => {
  const db = useDatabase();
  const src = useSourceDatabase();
  let proxy: MysqlProxy;
  let w: IndexerWriter;
  let sync: SyncProcess | null = null;
  const transfers = async () => (await db.sql`SELECT count(*)::int AS n FROM transactions`)[0]!.n as number;
  const sourceTxs = async () => Number(((await src.conn.query('SELECT count(*) AS n FROM txs')) as any)[0][0].n);

  beforeAll(async () => {
    proxy = await startMysqlProxy({ host: '127.0.0.1', port: 3306 });
    w = new IndexerWriter(src.conn, 0);
    w.deploy({ ...tick, hash: '0x1d1e000000000000000000000000000000000000000000000000000000000001' });
    for (let i = 0; i < 20; i++) w.mint(tick, holder(i % 5), '10');
    await w.flush('bsc');
    sync = startSyncProcess(['--source', src.url.replace(':3306/', `:${proxy.port}/`), '--database-url', db.target.url!,
      '--mode', 'polling', '--poll-interval-ms', String(intervalMs), '--reconcile-interval-s', '3600', '--log-level', 'info']);
    await waitFor(async () => (await transfers()) === (await sourceTxs()), 60_000, 'the backfill');
    // the follow's first cycles (the backfill's tail, the first sweep pass) are over
    await new Promise((r) => setTimeout(r, 4 * intervalMs));
  }, 90_000);
  afterAll(async () => {
    await sync?.kill();
    await proxy?.close();
  });

  it('reads one snapshot per interval; a flush then is visible within about an interval', async () => {
    proxy.reset();
    const spellMs = 10 * intervalMs;
    await new Promise((r) => setTimeout(r, spellMs));
    const statements = proxy.statements();
    const snapshots = statements.filter((s) => snapshotStart.test(s)).length;
    expect(sync!.child.exitCode, sync!.output()).toBeNull();
    // one per interval, and one for a cycle that straddles the spell's edge
    expect(snapshots, statements.join('\n')).toBeGreaterThanOrEqual(spellMs / intervalMs - 2);
    expect(snapshots, statements.join('\n')).toBeLessThanOrEqual(spellMs / intervalMs + 1);

    const before = await transfers();
    w.transfer(tick, holder(0), holder(7), '1');
    const t0 = Date.now();
    await w.flush('bsc');
    await waitFor(async () => (await transfers()) > before, 10_000, 'the flush after the idle spell');
    expect(Date.now() - t0).toBeLessThan(intervalMs + 1_000);
  });
});
