import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findServer } from '../support/db.js';
import { useDatabase } from '../support/gateway.js';
import { createSourceDatabase, IndexerWriter, type SourceDb } from '../support/indexer.js';
import { mariadbAvailable, startMariaInstance, type MariaInstance } from '../support/mariadb-instance.js';
import { startSyncProcess, stopSyncSuite, waitFor, type SyncProcess } from '../support/sync-process.js';
import { because, skipUnlessAll } from '../support/skips.js';

// A rewind's re-sync shows only real states: it reads one source snapshot and commits in
// one read-model transaction. Rows the binlog never carried (written with sql_log_bin = 0) are found by
// the re-sync a lowered height starts; before, it copied them page by page and table by table (5,000 rows
// per transaction, address_txs before txs), and a reader saw counts the source never had.

const server = await findServer();
const tick = { chain: 'eth', protocol: 'erc-20', tick: 'snap' };
const holder = '0x00000000000000000000000000000000000000a1';
const hidden = 12_000;

describe('sync: a rewind\'s re-sync is one snapshot, one transaction', { timeout: 180_000, ...skipUnlessAll([server, because.noServerForChild], [mariadbAvailable(), because.noMariadb]) }, () => {
  let maria: MariaInstance;
  const db = useDatabase();
  let src: SourceDb;
  let sync: SyncProcess | null = null;

  beforeAll(async () => {
    maria = await startMariaInstance(4601);
    src = await createSourceDatabase({ host: maria.host, port: maria.port, user: maria.user });
    const w = new IndexerWriter(src.conn, 0);
    w.deploy(tick).mint(tick, holder, '5');
    await w.flush('eth');
  }, 120_000);
  afterAll(async () => {
    await stopSyncSuite({ sync, src, maria });
  });

  it('a reader never sees a state between the read model\'s and the source\'s', async () => {
    sync = startSyncProcess(['--source', src.url, '--database-url', db.target.url!, '--mode', 'binlog', '--server-id', '5711']);
    const counts = async () => {
      const [r] = await db.sql`SELECT (SELECT count(*) FROM address_txs)::int AS moves, (SELECT count(*) FROM transactions)::int AS txs`;
      return `${r!.moves}/${r!.txs}`;
    };
    await waitFor(async () => (await counts().catch(() => '')) === '2/2' &&
      (await db.sql`SELECT backfill_done FROM sync_source`)[0]?.backfill_done, 60_000, 'the backfill');
    // rows the binlog never carries: only a re-sync finds them
    await src.conn.query('SET SESSION sql_log_bin = 0');
    await src.conn.query(`INSERT INTO txs (chain, protocol, block_height, position_in_block, block_time, tx_hash, \`from\`, \`to\`, op, tick,
        amt, gas, gas_price, status, created_at, updated_at)
      SELECT 'eth', 'erc-20', 900 + seq, 0, '2024-03-01 00:00:00', UNHEX(LPAD(HEX(seq), 64, '0')), ?, ?, 'transfer', 'snap', 0, 21000, 1, 1,
             '2024-03-01 00:00:00', '2024-03-01 00:00:00' FROM seq_1_to_${hidden}`, [holder, holder]);
    await src.conn.query(`INSERT INTO address_txs (chain, event, protocol, operate, tx_hash, address, related_address, amount, tick,
        created_at, updated_at)
      SELECT 'eth', 3, 'erc-20', 'transfer', UNHEX(LPAD(HEX(seq), 64, '0')), ?, ?, 0, 'snap', '2024-03-01 00:00:00', '2024-03-01 00:00:00'
        FROM seq_1_to_${hidden}`, [holder, holder]);
    await src.conn.query('SET SESSION sql_log_bin = 1');
    const real = new Set(['2/2', `${2 + hidden}/${2 + hidden}`]);
    // the rewind: the height goes down (with the binlog); the re-sync follows
    await src.conn.query(`UPDATE block SET block_number = block_number - 1 WHERE chain = 'eth'`);
    const seen = new Set<string>();
    const deadline = Date.now() + 60_000;
    for (;;) {
      const c = await counts();
      seen.add(c);
      if (c === `${2 + hidden}/${2 + hidden}` || Date.now() > deadline) break;
    }
    expect([...seen].filter((s) => !real.has(s)), sync.output().slice(-2000)).toEqual([]);
    expect(seen.has(`${2 + hidden}/${2 + hidden}`), sync.output().slice(-2000)).toBe(true);
  });
});
