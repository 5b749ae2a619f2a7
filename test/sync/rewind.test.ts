import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectSource, parseSourceUrl } from '../../src/sync/source/connection.js';
import { verify } from '../../src/sync/verify.js';
import { findServer } from '../support/db.js';
import { startTestGateway, useDatabase } from '../support/gateway.js';
import { historyDifferences } from '../support/history.js';
import { call } from '../support/http.js';
import { createSourceDatabase, IndexerWriter, type MariaServer, type SourceDb } from '../support/indexer.js';
import { mariadbAvailable, startMariaInstance, type MariaInstance } from '../support/mariadb-instance.js';
import { startSyncProcess, stopSyncSuite, waitFor, type SyncProcess } from '../support/sync-process.js';
import { because, skipUnless, skipUnlessAll } from '../support/skips.js';

// A manual rewind in the source while the sync follows: an operator deletes a chain's rows above a height
// and lowers `block` by hand. In both follow modes the read model drops the rows above the height (also rows
// whose deletes the binlog never carried) and the v2 answers match the source again; what the indexer
// writes after the rewind arrives as usual.

const server = await findServer();
const tick = { chain: 'eth', protocol: 'erc-20', tick: 'rewd' };
const early = Array.from({ length: 6 }, (_, i) => `0x${(i + 1).toString(16).padStart(4, '0')}AaAa${'0'.repeat(30)}`);
const late = Array.from({ length: 6 }, (_, i) => `0x${(i + 1).toString(16).padStart(4, '0')}BbBb${'0'.repeat(30)}`);

function rewindSuite(mode: 'binlog' | 'polling') {
  let maria: MariaInstance | null = null;
  const db = useDatabase();
  let src: SourceDb;
  let w: IndexerWriter;
  let sync: SyncProcess | null = null;
  let height = 0;
  const args = () => ['--source', src.url, '--database-url', db.target.url!, '--mode', mode, '--poll-interval-ms', '200',
    '--reconcile-interval-s', '3600', '--server-id', '5611', '--source-time-zone', '+02:00'];
  const srcCount = async (q: string, p: unknown[] = []) => Number(((await src.conn.query(q, p)) as any)[0][0].n);
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
    let at: MariaServer | undefined;
    if (mode === 'binlog') {
      maria = await startMariaInstance(4501);
      at = { host: maria.host, port: maria.port, user: maria.user };
    }
    src = await createSourceDatabase(at);
    w = new IndexerWriter(src.conn, 2 * 60);
    w.deploy(tick);
    for (const a of early) w.mint(tick, a, '100');
    await w.flush();
    height = Number(((await src.conn.query('SELECT block_number AS h FROM block WHERE chain = ?', ['eth'])) as any)[0][0].h);
    sync = startSyncProcess(args());
    await same();
  }, 180_000);
  afterAll(() => stopSyncSuite({ sync, src, maria }));

  it('rows above a height deleted and block lowered by hand: the read model drops them, the v2 answers match again', async () => {
    // flushes above the height: newcomers mint, early holders pay them
    for (let f = 0; f < 3; f++) {
      for (let i = 0; i < late.length; i++) w.mint(tick, late[i]!, '5');
      w.transfer(tick, early[f]!, late[f]!, '1');
      await w.flush();
    }
    await same();
    expect(await db.sql`SELECT count(*)::int AS n FROM transactions WHERE block_height > ${height}`.then((r) => r[0]!.n)).toBe(21);

    // the rewind, as an operator types it; in binlog mode the txs deletes bypass the binlog (sql_log_bin=0):
    // only the lowered height tells
    await src.conn.query(`DELETE a FROM address_txs a JOIN txs t ON t.tx_hash = a.tx_hash AND t.chain = a.chain
                           WHERE t.chain = 'eth' AND t.block_height > ?`, [height]);
    await src.conn.query(`DELETE b FROM balance_txn b JOIN txs t ON t.tx_hash = b.tx_hash AND t.chain = b.chain
                           WHERE t.chain = 'eth' AND t.block_height > ?`, [height]);
    if (mode === 'binlog') await src.conn.query('SET SESSION sql_log_bin = 0');
    await src.conn.query(`DELETE FROM txs WHERE chain = 'eth' AND block_height > ?`, [height]);
    if (mode === 'binlog') await src.conn.query('SET SESSION sql_log_bin = 1');
    await src.conn.query(`DELETE FROM balances WHERE address IN (?)`, [late]);
    await src.conn.query(`UPDATE balances SET balance = '100' WHERE address IN (?)`, [early]);
    await src.conn.query(`UPDATE block SET block_number = ? WHERE chain = 'eth'`, [height]);

    const r = await same();
    expect(r.differences).toEqual([]);
    // the list totals the gateway answers totals from (kept per statement by the sync's batched counters)
    const [totals] = await db.sql`SELECT (SELECT n FROM list_totals WHERE list = 'transactions' AND chain IS NULL AND protocol IS NULL
      AND tick IS NULL)::int AS listed, (SELECT count(*) FROM transactions)::int AS n`;
    expect(totals!.listed).toBe(totals!.n);
    expect(await db.sql`SELECT count(*)::int AS n FROM transactions WHERE block_height > ${height}`.then((x) => x[0]!.n)).toBe(0);
    expect(await db.sql`SELECT count(*)::int AS n FROM balances WHERE address_key LIKE '%bbbb%'`.then((x) => x[0]!.n)).toBe(0);
    expect(sync!.output()).toMatch(/rewind in the source: re-syncing the chain/);
    // the history lost the rewound changes: the early holders' balances are current again at every height
    expect(await db.sql`SELECT count(*)::int AS n FROM balance_history WHERE block_height > ${height}`.then((x) => x[0]!.n)).toBe(0);
    expect((await historyDifferences(src.conn, db.sql)).differences).toEqual([]);

    const { gateway, base } = await startTestGateway(db);
    try {
      const holders = (await call(base, 'inds_getHoldersByTick', [50, 0, 'eth', 'erc-20', 'rewd', 2])).result;
      expect(holders.total).toBe(await srcCount('SELECT count(*) AS n FROM balances WHERE balance > 0'));
      expect(holders.total).toBe(early.length);
      const balances = (await call(base, 'inds_getBalancesByAddress', [10, 0, late[0], '', '', '', '', 2])).result;
      expect(balances.total).toBe(0);
    } finally {
      await gateway.close();
    }

    // the indexer re-indexes from the lowered height: its new rows arrive
    w.mint(tick, early[5]!, '9');
    await w.flush();
    await same();
    const [[{ b }]] = (await src.conn.query('SELECT CAST(balance AS CHAR) AS b FROM balances WHERE address = ?', [early[5]])) as any;
    expect(Number(b)).toBe(109);
    expect(await db.sql`SELECT balance::text AS b FROM balances WHERE address = ${early[5]!}`.then((x) => x[0]?.b)).toBe('109');
    expect((await historyDifferences(src.conn, db.sql)).differences).toEqual([]);
  });
}

describe('sync: rewind while polling', { timeout: 240_000, ...skipUnless(server, because.noServerForChild) }, () => rewindSuite('polling'));
describe('sync: rewind while following the binlog', { timeout: 240_000, ...skipUnlessAll([server, because.noServerForChild], [mariadbAvailable(), because.noMariadb]) }, () => rewindSuite('binlog'));
