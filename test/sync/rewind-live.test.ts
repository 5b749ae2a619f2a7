import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findServer } from '../support/db.js';
import { startTestGateway, useDatabase } from '../support/gateway.js';
import { call } from '../support/http.js';
import { createSourceDatabase, IndexerWriter, type SourceDb } from '../support/indexer.js';
import { mariadbAvailable, startMariaInstance, type MariaInstance } from '../support/mariadb-instance.js';
import { startSyncProcess, stopSyncSuite, waitFor, type SyncProcess } from '../support/sync-process.js';
import { because, skipUnlessAll } from '../support/skips.js';

// A rewind while the indexer keeps writing shows only states the source had. The writer commits flushes
// back to back, each one mint to a new holder at the next height (so every source state has as many rows
// above the start as heights above it); a rewind deletes the rows above a height in one source transaction
// and lowers the block row, and the writer re-indexes from there at once. Two readers run throughout: the
// gateway's tick totals (holders, minted and transaction count must have moved by the same number of
// mints), and a snapshot of the read model (its indexed height and its row counts must belong together).

const server = await findServer();
const tick = { chain: 'eth', protocol: 'erc-20', tick: 'rwnd' };
const baseHeight = 2_000_000;
/** flushes written before each rewind, and how far each rewind goes back */
const depth = 300;
const rounds = 2;

const modes = [
  { mode: 'binlog', serverId: 4611, args: ['--mode', 'binlog', '--server-id', '5741'] },
  { mode: 'polling', serverId: 4612, args: ['--mode', 'polling', '--poll-interval-ms', '200', '--reconcile-interval-s', '3600'] },
] as const;

const available = skipUnlessAll([server, because.noServerForChild], [mariadbAvailable(), because.noMariadb]);

describe.each(modes)('sync: a rewind under a writing indexer, $mode', { timeout: 300_000, ...available }, ({ serverId, args }) => {
  let maria: MariaInstance;
  const db = useDatabase();
  let src: SourceDb;
  let sync: SyncProcess | null = null;
  let height = 0;
  let round = 0;

  const holder = (h: number) => `0x${round.toString(16).padStart(2, '0')}${h.toString(16).padStart(38, '0')}`;
  const hash = (h: number) => Buffer.from(`${round.toString(16).padStart(8, '0')}${h.toString(16).padStart(56, '0')}`, 'hex');
  /** One indexer flush: a mint of 1 to a new holder at the next height, and the block row. */
  async function flush(): Promise<void> {
    const h = ++height;
    const at = '2024-03-01 00:00:00';
    const a = holder(h);
    const c = src.conn;
    await c.beginTransaction();
    await c.query(`INSERT INTO txs (chain, protocol, block_height, position_in_block, block_time, tx_hash, \`from\`, \`to\`, op, tick, amt,
        gas, gas_price, status, created_at, updated_at) VALUES ('eth', 'erc-20', ?, 0, ?, ?, ?, ?, 'mint', 'rwnd', 1, 21000, 1, 1, ?, ?)`,
    [baseHeight + h, at, hash(h), a, a, at, at]);
    await c.query(`INSERT INTO address_txs (chain, event, protocol, operate, tx_hash, address, related_address, amount, tick, created_at,
        updated_at) VALUES ('eth', 2, 'erc-20', 'mint', ?, ?, '', 1, 'rwnd', ?, ?)`, [hash(h), a, at, at]);
    await c.query(`INSERT INTO balances (sid, chain, protocol, address, tick, available, balance, created_at, updated_at)
        VALUES (?, 'eth', 'erc-20', ?, 'rwnd', 0, 1, ?, ?)`, [100 + h, a, at, at]);
    await c.query(`INSERT INTO balance_txn (chain, protocol, event, address, tick, amount, available, balance, tx_hash, created_at,
        updated_at) VALUES ('eth', 'erc-20', 2, ?, 'rwnd', 1, 0, 1, ?, ?, ?)`, [a, hash(h), at, at]);
    await c.query(`UPDATE block SET block_number = ?, block_time = ? WHERE chain = 'eth'`, [baseHeight + h, at]);
    await c.commit();
  }
  /** The operator's rewind: the rows above height `to` deleted and the block row lowered, in one transaction. */
  async function rewind(to: number): Promise<void> {
    const c = src.conn;
    const above = `SELECT tx_hash FROM txs WHERE chain = 'eth' AND tick = 'rwnd' AND block_height > ${baseHeight + to}`;
    await c.beginTransaction();
    await c.query(`DELETE FROM address_txs WHERE chain = 'eth' AND tx_hash IN (${above})`);
    await c.query(`DELETE FROM balance_txn WHERE chain = 'eth' AND tx_hash IN (${above})`);
    await c.query(`DELETE FROM balances WHERE chain = 'eth' AND address IN (SELECT \`to\` FROM txs WHERE chain = 'eth' AND tick = 'rwnd'
      AND block_height > ${baseHeight + to})`);
    await c.query(`DELETE FROM txs WHERE chain = 'eth' AND tick = 'rwnd' AND block_height > ${baseHeight + to}`);
    await c.query(`UPDATE block SET block_number = ? WHERE chain = 'eth'`, [baseHeight + to]);
    await c.commit();
    height = to;
    round++;
  }

  beforeAll(async () => {
    maria = await startMariaInstance(serverId);
    src = await createSourceDatabase({ host: maria.host, port: maria.port, user: maria.user });
    const w = new IndexerWriter(src.conn, 0);
    w.deploy({ ...tick, totalSupply: '100000000' });
    await w.flush();
    for (let i = 0; i < 20; i++) await flush();
    sync = startSyncProcess(['--source', src.url, '--database-url', db.target.url!, ...args]);
    await waitFor(async () => {
      const [b] = await db.sql`SELECT backfill_done FROM sync_source`.catch(() => [] as any[]);
      const [h] = await db.sql`SELECT block_number::int8 AS h FROM indexed_blocks WHERE chain = 'eth'`;
      return b?.backfill_done && Number(h?.h) === baseHeight + height;
    }, 60_000, 'the backfill');
  }, 180_000);
  afterAll(() => stopSyncSuite({ sync, src, maria }));

  it('the gateway and the read model show only states the source had', async () => {
    const { gateway, base } = await startTestGateway(db);
    try {
      const totals = async () => {
        const r = await call(base, 'inds_getTick', [tick.chain, tick.protocol, tick.tick, '']);
        const s = r.result?.stats ?? r.result;
        return [Number(s.holders), Number(s.minted), Number(s.tx_cnt ?? s.txCount)];
      };
      const snapshot = () => db.sql.begin('ISOLATION LEVEL REPEATABLE READ READ ONLY', async (tx) => {
        const [r] = await tx`SELECT (SELECT block_number::int8 FROM indexed_blocks WHERE chain = 'eth') AS height,
          (SELECT count(*) FROM transactions)::int AS transactions, (SELECT count(*) FROM address_txs)::int AS movements,
          (SELECT count(*) FROM balances)::int AS balances, (SELECT count(*) FROM balance_history)::int AS history`;
        return { height: Number(r!.height) - baseHeight, counts: [r!.transactions, r!.movements, r!.balances, r!.history] as number[] };
      });
      // the start: every source state is this plus one row per table (and one per total) for each height above it
      const start = await snapshot();
      expect(start.height).toBe(height);
      const startTotals = await totals();
      const violations: string[] = [];
      const heightsSeen = new Set<number>();
      let writing = true;
      const gatewayReader = (async () => {
        while (writing) {
          const t = await totals();
          const moved = t.map((v, i) => v - startTotals[i]!);
          if (new Set(moved).size !== 1) violations.push(`gateway totals ${t} (moved ${moved} from ${startTotals})`);
        }
      })();
      const snapshotReader = (async () => {
        while (writing) {
          const s = await snapshot();
          heightsSeen.add(s.height);
          const moved = s.counts.map((v, i) => v - start.counts[i]!);
          if (moved.some((m) => m !== s.height - start.height)) violations.push(`height ${s.height} with rows ${s.counts} (start ${start.height}: ${start.counts})`);
        }
      })();
      try {
        for (let r = 0; r < rounds; r++) {
          const from = height;
          for (let i = 0; i < depth; i++) await flush();
          await rewind(from);
          for (let i = 0; i < depth / 2; i++) await flush();
        }
        for (let i = 0; i < depth; i++) await flush();
        let last = start;
        await waitFor(async () => {
          if (sync!.child.exitCode !== null) throw new Error('the sync exited');
          const s = last = await snapshot();
          return s.height === height && s.counts.every((v, i) => v - start.counts[i]! === height - start.height);
        }, 120_000, 'the read model to reach the source').catch((error) => {
          throw new Error(`${(error as Error).message}: height ${last.height} rows ${last.counts}, the source's ${height}\n${sync!.output().slice(-3000)}`);
        });
      } finally {
        writing = false;
        await Promise.all([gatewayReader, snapshotReader]);
      }
      expect(violations.slice(0, 10), sync!.output().slice(-3000)).toEqual([]);
      // the rewinds were followed: re-synced, and the readers saw the heights go down and up again
      expect(sync!.output().match(/rewind re-sync done/g)?.length ?? 0, sync!.output().slice(-3000)).toBeGreaterThanOrEqual(1);
      expect(heightsSeen.size).toBeGreaterThanOrEqual(5);
    } finally {
      await gateway.close();
    }
  });
});
