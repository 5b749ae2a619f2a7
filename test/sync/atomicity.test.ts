import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findServer } from '../support/db.js';
import { startTestGateway, useDatabase } from '../support/gateway.js';
import { call } from '../support/http.js';
import { createSourceDatabase, IndexerWriter, type SourceDb } from '../support/indexer.js';
import { mariadbAvailable, startMariaInstance, type MariaInstance } from '../support/mariadb-instance.js';
import { startSyncProcess, stopSyncSuite, waitFor, type SyncProcess } from '../support/sync-process.js';
import { because, skipUnlessAll } from '../support/skips.js';

// A reader never sees half of a binlog flush. Real processes: a private MariaDB with a ROW binlog, the
// sync process following it, PostgreSQL, a gateway over HTTP. The indexer's writer commits flushes of
// many rows (one INSERT per row: hundreds of row events per source transaction, across txs, address_txs,
// balances and balance_txn, plus the block row) while two readers ask back to back:
// - the gateway (JSON-RPC inds_getTick): the tick's holders, minted and transaction count must each be
//   the state after a whole number of flushes, and the same number for all three;
// - a REPEATABLE READ snapshot of the read model: per flush (its addresses carry its number), the rows of
//   transactions, address_txs, balances and balance_history are all there or none are, and the indexed
//   height is the height of the last whole flush seen.

const server = await findServer();
const tick = { chain: 'eth', protocol: 'erc-20', tick: 'atom' };
const address = (flush: number, i: number) => `0xa7${flush.toString(16).padStart(4, '0')}${i.toString(16).padStart(4, '0')}${'0'.repeat(30)}`;

// The same readers against the polling follow (every 300 ms): while the indexer writes, a poll reads two
// snapshots of the source (the first just before its tick, the second at the tick; after a poll that found
// nothing, only the second) and commits them as one transaction, which must show whole flushes only, the
// indexed height of the last of them included. Smaller flushes back to back, more of them: some commit
// between a poll's two snapshots.
// Per flush: new holders (one mint each) and transfers between them (half of a mint: nobody reaches 0).
const modes = [
  { mode: 'binlog', port: 4451, mints: 150, transfers: 50, flushes: 8, args: ['--mode', 'binlog', '--server-id', '5531', '--log-level', 'info'] },
  { mode: 'polling', port: 4452, mints: 20, transfers: 5, flushes: 40, args: ['--mode', 'polling', '--poll-interval-ms', '300', '--log-level', 'debug'] },
] as const;

describe.each(modes)('sync: a $mode flush is applied all at once', { timeout: 240_000, ...skipUnlessAll([server, because.noServerForChild], [mariadbAvailable(), because.noMariadb]) }, ({ mode, port, mints, transfers, flushes, args }) => {
  /** the rows one flush adds to each read-model table (a transfer is one txs row and two legs) */
  const perFlush = { transactions: mints + transfers, address_txs: mints + 2 * transfers, balances: mints, balance_history: mints + 2 * transfers };
  let maria: MariaInstance;
  const db = useDatabase();
  let src: SourceDb;
  let w: IndexerWriter;
  let sync: SyncProcess | null = null;

  beforeAll(async () => {
    maria = await startMariaInstance(port);
    src = await createSourceDatabase({ host: maria.host, port: maria.port, user: maria.user });
    w = new IndexerWriter(src.conn, 0);
    w.deploy({ ...tick, totalSupply: '100000000' });
    w.mint(tick, '0x1111000000000000000000000000000000000001', '5');
    await w.flush();
    sync = startSyncProcess(['--source', src.url, '--database-url', db.target.url!, ...args]);
    await waitFor(async () => {
      const [b] = await db.sql`SELECT backfill_done FROM sync_source`.catch(() => [] as any[]);
      const [t] = await db.sql`SELECT count(*)::int AS n FROM transactions`;
      return b?.backfill_done && t!.n === 2;
    }, 60_000, 'the backfill');
  }, 180_000);
  afterAll(() => stopSyncSuite({ sync, src, maria }));

  it('readers of the gateway and of the read model see each flush whole or not at all', async () => {
    const { gateway, base } = await startTestGateway(db);
    try {
      const stats = async () => {
        const r = await call(base, 'inds_getTick', [tick.chain, tick.protocol, tick.tick, '']);
        const s = r.result?.stats ?? r.result;
        return { holders: Number(s.holders), minted: Number(s.minted), txCount: Number(s.tx_cnt ?? s.txCount) };
      };
      const start = await stats();
      // the source's height after each flush (flush number → height), for the snapshot reader's check
      const heights: number[] = [];
      const [[h0]] = (await src.conn.query(`SELECT block_number AS h FROM block WHERE chain = 'eth'`)) as any;
      const startHeight = Number(h0.h);

      let writing = true;
      const writer = (async () => {
        try {
          for (let f = 0; f < flushes; f++) {
            for (let i = 0; i < mints; i++) w.mint(tick, address(f, i), '1');
            for (let i = 0; i < transfers; i++) w.transfer(tick, address(f, i), address(f, i + 1), '0.5');
            await w.flush();
            const [[h]] = (await src.conn.query(`SELECT block_number AS h FROM block WHERE chain = 'eth'`)) as any;
            heights.push(Number(h.h));
          }
        } finally {
          writing = false;
        }
      })();

      // gateway reader: every answer is the start plus k whole flushes, the same k for all three counters
      const gatewaySeen = new Set<number>();
      const gatewayReader = (async () => {
        let k = 0;
        while (writing || k < flushes) {
          const s = await stats();
          const byHolders = (s.holders - start.holders) / mints;
          expect(Number.isInteger(byHolders), `holders ${s.holders}: not a whole number of flushes after ${start.holders}`).toBe(true);
          expect((s.minted - start.minted) / mints, `minted ${s.minted} against holders ${s.holders}`).toBe(byHolders);
          expect((s.txCount - start.txCount) / (mints + transfers), `tx count ${s.txCount} against holders ${s.holders}`).toBe(byHolders);
          expect(byHolders).toBeGreaterThanOrEqual(k); // never backwards
          k = byHolders;
          gatewaySeen.add(k);
        }
      })();

      // read-model reader: one snapshot per round
      const snapshotSeen = new Set<number>();
      const snapshotReader = (async () => {
        let complete = 0;
        while (writing || complete < flushes) {
          const snap = await db.sql.begin('ISOLATION LEVEL REPEATABLE READ READ ONLY', async (tx) => {
            const count = (table: string, column: string) => tx.unsafe(`SELECT substr(${column}, 5, 4) AS f, count(*)::int AS n FROM ${table}
              WHERE ${column} LIKE '0xa7%' GROUP BY 1`) as Promise<{ f: string; n: number }[]>;
            const [height] = await tx`SELECT block_number::int8::text AS h FROM indexed_blocks WHERE chain = 'eth'`;
            return {
              height: Number(height!.h),
              transactions: await count('transactions', 'to_address'),
              address_txs: await count('address_txs', 'address'),
              balances: await count('balances', 'address'),
              balance_history: await count('balance_history', 'address'),
            };
          });
          const present = new Set<number>();
          for (const table of ['transactions', 'address_txs', 'balances', 'balance_history'] as const) {
            for (const { f, n } of snap[table]) {
              expect(n, `${table}: flush ${Number.parseInt(f, 16)} has ${n} of its ${perFlush[table]} rows`).toBe(perFlush[table]);
              present.add(Number.parseInt(f, 16));
            }
          }
          // the same flushes in every table, a prefix of the writer's order, and the height of the last of them
          complete = present.size;
          expect([...present].sort((a, b) => a - b)).toEqual(Array.from({ length: complete }, (_, i) => i));
          for (const table of ['transactions', 'address_txs', 'balances', 'balance_history'] as const) expect(snap[table].length).toBe(complete);
          if (complete > 0 && heights.length >= complete) expect(snap.height).toBe(heights[complete - 1]);
          if (complete === 0) expect(snap.height).toBe(startHeight);
          snapshotSeen.add(complete);
        }
      })();

      await Promise.all([writer, gatewayReader, snapshotReader]);
      // the readers ran alongside the follow: they saw the flushes arrive one by one, not only the end
      expect(gatewaySeen.size, `gateway states seen: ${[...gatewaySeen]}`).toBeGreaterThanOrEqual(4);
      expect(snapshotSeen.size, `snapshot states seen: ${[...snapshotSeen]}`).toBeGreaterThanOrEqual(4);
      expect(Math.max(...gatewaySeen)).toBe(flushes);
      expect(Math.max(...snapshotSeen)).toBe(flushes);
      if (mode === 'polling') {
        // polls that applied a first snapshot and then committed the second one's rows with it
        const polls = sync!.output().split('\n').filter((l) => l.includes('"msg":"poll"')).map((l) => JSON.parse(l) as { firstMs: number | null; firstChanges: number; changes: number });
        expect(polls.filter((p) => p.firstMs !== null && p.changes > p.firstChanges).length,
          'polls whose second snapshot brought rows').toBeGreaterThanOrEqual(1);
      }
    } finally {
      await gateway.close();
    }
  });
});
