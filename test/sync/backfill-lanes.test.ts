import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, findServer, type TestDatabase } from '../support/db.js';
import { createSourceDatabase, IndexerWriter, type SourceDb } from '../support/indexer.js';
import { mariadbAvailable, startMariaInstance, type MariaInstance } from '../support/mariadb-instance.js';
import { startSyncProcess, stopSyncSuite } from '../support/sync-process.js';
import { because, skipUnlessAll } from '../support/skips.js';

// The backfill's two lanes (src/sync/backfill.ts): on MariaDB with a binlog the history, address_txs and
// utxos are copied on a second connection in the same snapshot, beside txs and balances; the history's move
// waits for the transactions. A bad row met by that lane ends the whole run within seconds, named; the rows
// are as the source has them.

const server = await findServer();
const tick = { chain: 'eth', protocol: 'erc-20', tick: 'lane' };
const holder = (i: number) => `0x${(i + 1).toString(16).padStart(4, '0')}1a2e${'0'.repeat(32)}`;

describe('sync: the backfill\'s two lanes', { timeout: 180_000, ...skipUnlessAll([server, because.noServerForChild], [mariadbAvailable(), because.noMariadb]) }, () => {
  let maria: MariaInstance;
  let src: SourceDb;

  beforeAll(async () => {
    maria = await startMariaInstance(4701);
    src = await createSourceDatabase({ host: maria.host, port: maria.port, user: maria.user });
    const w = new IndexerWriter(src.conn, 0);
    w.deploy({ ...tick, totalSupply: '100000000' });
    await w.flush();
    for (let f = 0; f < 10; f++) {
      for (let i = 0; i < 100; i++) w.mint(tick, holder(i % 40), '1.5');
      await w.flush();
    }
  }, 180_000);
  afterAll(() => stopSyncSuite({ src, maria }));

  const run = async (db: TestDatabase) => {
    const sync = startSyncProcess(['--source', src.url, '--database-url', db.target.url!, '--once', '--mode', 'binlog',
      '--batch-size', '100', '--server-id', '4702', '--log-level', 'info']);
    const started = Date.now();
    const exit = await Promise.race([sync.exited, new Promise<null>((resolve) => setTimeout(() => resolve(null), 60_000))]);
    await sync.kill();
    return { exit, seconds: (Date.now() - started) / 1000, output: sync.output() };
  };

  it('copies every table in two lanes: the read model holds the source\'s rows', async () => {
    const db = await createTestDatabase();
    try {
      const { exit, output } = await run(db);
      expect(exit?.code, output.slice(-3000)).toBe(0);
      expect(output).toMatch(/"lanes":2,.*"msg":"backfill planned"/);
      for (const [source, target] of [['txs', 'transactions'], ['address_txs', 'address_txs'], ['balance_txn', 'balance_history']]) {
        const [[s]] = (await src.conn.query(`SELECT count(*) AS n, CAST(coalesce(sum(id), 0) AS CHAR) AS ids FROM \`${source}\``)) as any;
        const [p] = await db.sql.unsafe(`SELECT count(*)::int AS n, coalesce(sum(id), 0)::text AS ids FROM ${target}`);
        expect([p!.n, p!.ids], target).toEqual([Number(s.n), s.ids]);
      }
      const [[b]] = (await src.conn.query('SELECT count(*) AS n, CAST(sum(balance) AS CHAR) AS s FROM balances')) as any;
      const [pb] = await db.sql`SELECT count(*)::int AS n, sum(balance)::text AS s FROM balances`;
      expect([pb!.n, Number(pb!.s)]).toEqual([Number(b.n), Number(b.s)]);
    } finally {
      await db.close();
    }
  });

  it('a bad row in the second lane ends the run within seconds, named; the first stops at a range\'s end', async () => {
    await src.conn.query(`UPDATE address_txs SET tick = 'ghost' ORDER BY id LIMIT 1`);
    const [[{ id }]] = (await src.conn.query(`SELECT id FROM address_txs WHERE tick = 'ghost'`)) as any;
    const db = await createTestDatabase();
    try {
      const { exit, seconds, output } = await run(db);
      expect(exit, output.slice(-3000)).not.toBeNull();
      expect(exit!.code).toBe(1);
      expect(seconds).toBeLessThan(45);
      expect(output).toMatch(/"lanes":2,.*"msg":"backfill planned"/);
      const line = output.split('\n').find((l) => /"table":"address_txs"/.test(l) && /"level":50/.test(l));
      expect(line, output.slice(-3000)).toBeDefined();
      expect(JSON.parse(line!).id).toBe(String(id));
      // the first lane stopped at a range's end: what it copied is recorded, nothing is left half done
      const stuck = await db.sql`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database()
        AND state LIKE 'idle in transaction%'`;
      expect(stuck[0]!.n).toBe(0);
      const [txs] = await db.sql`SELECT b.rows_copied::int AS recorded, (SELECT count(*)::int FROM transactions) AS n
        FROM sync_backfill b WHERE source_table = 'txs'`;
      expect(txs!.n).toBe(txs!.recorded);
    } finally {
      await db.close();
    }
  });
});
