import { beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../../src/db/migrate.js';
import { runSync } from '../../src/sync/run.js';
import { parseOptions, type SyncOptions } from '../../src/sync/options.js';
import { syncLogger } from '../../src/sync/run.js';
import { createTestDatabase, findServer } from '../support/db.js';
import { startTestGateway, useDatabase } from '../support/gateway.js';
import { call, gqlJson } from '../support/http.js';
import { historyDifferences } from '../support/history.js';
import { createSourceDatabase, IndexerWriter, useSourceDatabase } from '../support/indexer.js';
import { because, skipUnless } from '../support/skips.js';

// Backfill of a fixture written in the indexer's schema by an indexer host at +08:00 (a non-UTC zone),
// then the v2 answers the gateway gives for it; polling picks up flushes and a row committed late.

const server = await findServer();
const silent = syncLogger('silent');
const eth = { chain: 'eth', protocol: 'erc-20', tick: 'Pepe' }; // the source keeps the tick's case
const big = { chain: 'avalanche', protocol: 'asc-20', tick: 'huge' };
const alice = '0xAbCdEf0123456789aBcDeF0123456789AbCdEf01';
const bob = '0x4273173187f1108007b1C1ABE5301eFa03f7fc8A';

describe('sync: backfill and polling from an indexer database', skipUnless(server, because.noServerForChild), () => {
  const db = useDatabase();
  const src = useSourceDatabase();
  let w: IndexerWriter;
  const options = (extra: string[] = []): SyncOptions => parseOptions([
    '--source', src.url, '--database-url', db.target.url!, '--once', '--source-time-zone', '+08:00', '--metrics-port', '0',
    '--mode', 'polling', ...extra,
  ], {}) as SyncOptions;

  beforeAll(async () => {
    w = new IndexerWriter(src.conn, 8 * 60);
    w.deploy({ ...eth, deployBy: alice, totalSupply: '1000000' });
    w.deploy({ ...big, totalSupply: '99999999999999999999.999999999999999999', limit: '12345678901234567890.123456789012345678' });
    await w.flush('eth');
    w.mint(eth, alice, '1000', 'text');             // an older row: 0x text hash
    w.mint(eth, alice.toLowerCase(), '500.25', 'raw'); // same balance row, other casing: first casing kept
    w.transfer(eth, alice, bob, '300.5');
    w.mint(big, bob, '99999999999999999999.999999999999999999');
    await w.flush('eth');
  });

  it('rejects a bad option by name', () => {
    expect(() => parseOptions(['--source', 'http://x', '--database-url', 'postgres://a/b'], {})).toThrow(/--source: must be mysql:/);
    expect(() => parseOptions(['--source', 'mysql://r@h/db', '--database-url', 'postgres://a/b', '--source-time-zone', 'Mars/Olympus'], {}))
      .toThrow(/--source-time-zone: must be a UTC offset like \+08:00 or a zone name/);
  });

  it('--dry-run reports the preflight and writes nothing', async () => {
    expect(await runSync(options(['--dry-run']), silent)).toBe(0);
    const [row] = await db.sql`SELECT count(*)::int AS n FROM ticks`;
    expect(row!.n).toBe(0);
  });

  it('backfills: hashes, casing, exact decimals, converted times, signed amounts', async () => {
    const indexes = () => db.sql`SELECT tablename, indexname, indexdef FROM pg_indexes WHERE schemaname = current_schema()
      ORDER BY tablename, indexname`;
    const keys = () => db.sql`SELECT conrelid::regclass::text AS t, conname, contype::text FROM pg_constraint
      WHERE contype IN ('p', 'u') AND connamespace = current_schema()::regnamespace ORDER BY 1, 2`;
    const before = { indexes: await indexes(), keys: await keys() };
    expect(await runSync(options(), silent)).toBe(0);
    // every index and key dropped for the copy is back (some rebuilt while later tables were still copied)
    expect({ indexes: await indexes(), keys: await keys() }).toEqual(before);
    expect((await db.sql`SELECT count(*)::int AS n FROM sync_dropped_indexes`)[0]!.n).toBe(0);
    // the per-address transaction totals (recomputed while the rest was copied) match a recount
    const recount = await db.sql`SELECT k AS address_key, count(*)::int AS n FROM (SELECT from_key AS k FROM transactions
      UNION ALL SELECT to_key FROM transactions WHERE to_key <> from_key) s GROUP BY k ORDER BY 1`;
    expect(recount.length).toBeGreaterThan(1);
    expect(await db.sql`SELECT address_key, n::int AS n FROM address_tx_totals ORDER BY 1`).toEqual(recount);
    const ticks = await db.sql`SELECT tick, total_supply::text, limit_per_mint::text, minted::text, holders::int, tx_cnt::int,
      deploy_time FROM ticks ORDER BY id`;
    expect(ticks.map((t) => t.tick)).toEqual(['pepe', 'huge']);
    expect(ticks[1]!.total_supply).toBe('99999999999999999999.999999999999999999');
    expect(ticks[1]!.limit_per_mint).toBe('12345678901234567890.123456789012345678');
    expect(ticks[1]!.minted).toBe('99999999999999999999.999999999999999999');
    expect(ticks[0]!.minted).toBe('1500.25');
    expect(ticks[0]!.holders).toBe(2);
    expect(ticks[0]!.tx_cnt).toBe(4); // deploy, two mints, transfer
    // deployed at 2024-03-01 12:01 UTC, written as 20:01 local (+08:00)
    expect((ticks[0]!.deploy_time as Date).toISOString()).toBe('2024-03-01T12:01:00.000Z');
    const balances = await db.sql`SELECT address, balance::text FROM balances b JOIN ticks t ON t.id = b.tick_id
      WHERE t.tick = 'pepe' ORDER BY address`;
    expect(balances).toEqual([{ address: bob, balance: '300.5' }, { address: alice, balance: '1199.75' }]);
    const moves = await db.sql`SELECT address, event::int, amount::text, tx_hash FROM address_txs ORDER BY id`;
    expect(moves.filter((m) => m.event === 3 || m.event === 4).map((m) => [m.address, m.event, m.amount]))
      .toEqual([[alice, 4, '300.5'], [bob, 3, '300.5']]);
    for (const m of moves) expect(m.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    const txs = await db.sql`SELECT tx_hash FROM transactions ORDER BY id`;
    for (const t of txs) expect(t.tx_hash).toMatch(/^0x[0-9a-f]{64}$/);
    // inserts carry the indexer host's clock (+08:00 wall-clock text), updates the database's (read as UTC)
    const [first] = await db.sql`SELECT created_at FROM transactions ORDER BY id LIMIT 1`;
    expect((first!.created_at as Date).toISOString()).toBe('2024-03-01T12:01:00.000Z');
    const [updated] = await db.sql`SELECT updated_at FROM balances WHERE address = ${alice}`;
    expect(Math.abs((updated!.updated_at as Date).getTime() - Date.now())).toBeLessThan(120_000);
    const [block] = await db.sql`SELECT block_number::text, block_time FROM indexed_blocks WHERE chain = 'eth'`;
    expect((block!.block_time as Date).toISOString()).toBe(new Date(w.now()).toISOString());
  });

  it('backfills balance_txn into the history: every height answers like the source, atBlock through GraphQL too', async () => {
    const { heights, differences } = await historyDifferences(src.conn, db.sql);
    expect(differences).toEqual([]);
    expect(heights).toBeGreaterThan(3);
    const [[{ n }]] = await src.conn.query('SELECT count(*) AS n FROM balance_txn') as any;
    const [mine] = await db.sql`SELECT count(*)::int AS n FROM balance_history`;
    expect(mine!.n).toBe(Number(n));
    expect(Number(n)).toBe(5); // two mints and a transfer's two legs on pepe, one mint on huge
    // the block of each change is its transaction's: the transfer's height
    const [[{ h }]] = await src.conn.query(`SELECT block_height AS h FROM txs WHERE op = 'transfer'`) as any;
    const { gateway, base } = await startTestGateway(db);
    try {
      const q = `query($at: BigInt) { tick(chain: "eth", protocol: "erc-20", tick: "pepe") {
        holders(atBlock: $at) { totalCount edges { node { address balance } } } } }`;
      const before = await gqlJson(base, q, { at: String(Number(h) - 1) });
      expect(before.errors).toBeUndefined();
      expect(before.data.tick.holders.edges.map((e: any) => [e.node.address, e.node.balance])).toEqual([[alice, '1500.25']]);
      const at = await gqlJson(base, q, { at: String(h) });
      expect(at.data.tick.holders.edges.map((e: any) => [e.node.address, e.node.balance])).toEqual([[alice, '1199.75'], [bob, '300.5']]);
    } finally {
      await gateway.close();
    }
  });

  // balance_txn is copied into an unlogged stage (sql/015_sync_history_stage.sql), then moved into the history
  // with its intervals. A backfill stopped mid-history resumes from the stage; one whose stage a server crash
  // emptied (crash recovery truncates unlogged tables: TRUNCATE here does the same) copies the table again.
  for (const lost of [false, true]) {
    it(`a backfill stopped mid-history resumes${lost ? ' after a crash emptied the stage' : ' from the stage'}: every row once, every height like the source`, async () => {
      const other = await createTestDatabase();
      try {
        await migrate(other.sql);
        // stops the copy at its third range of balance_txn (one row each): the range's transaction fails
        await other.sql.unsafe(`
          CREATE FUNCTION test_stop_history() RETURNS trigger LANGUAGE plpgsql AS $$
          BEGIN
            IF NEW.source_table = 'balance_txn' AND NEW.rows_copied >= 3 THEN RAISE EXCEPTION 'test: stopped mid-history'; END IF;
            RETURN NEW;
          END $$;
          CREATE TRIGGER test_stop_history BEFORE UPDATE ON sync_backfill FOR EACH ROW EXECUTE FUNCTION test_stop_history();
          -- fires on the bulk connection too (session_replication_role = replica)
          ALTER TABLE sync_backfill ENABLE ALWAYS TRIGGER test_stop_history;`);
        // one row per range (below what --batch-size accepts: the fixture is small)
        const opts = (): SyncOptions => ({ ...options(), 'database-url': other.target.url!, 'batch-size': 1 });
        expect(await runSync(opts(), silent)).toBe(1);
        const state = async () => (await other.sql`
          SELECT b.rows_copied::int AS copied, b.done, (SELECT count(*)::int FROM sync_history_stage) AS staged,
                 (SELECT count(*)::int FROM balance_history) AS history
            FROM sync_backfill b WHERE source_table = 'balance_txn'`)[0]!;
        expect(await state()).toEqual({ copied: 2, done: false, staged: 2, history: 0 });
        await other.sql.unsafe('DROP TRIGGER test_stop_history ON sync_backfill');
        if (lost) await other.sql`TRUNCATE sync_history_stage`;
        expect(await runSync(opts(), silent)).toBe(0);
        const [[{ n }]] = await src.conn.query('SELECT count(*) AS n FROM balance_txn') as any;
        expect(await state()).toEqual({ copied: Number(n), done: true, staged: 0, history: Number(n) });
        const { heights, differences } = await historyDifferences(src.conn, other.sql);
        expect(differences).toEqual([]);
        expect(heights).toBeGreaterThan(3);
        const [ids] = await other.sql`SELECT count(DISTINCT id)::int AS d, count(*)::int AS n FROM balance_history`;
        expect(ids!.d).toBe(Number(n));
      } finally {
        await other.close();
      }
    });
  }

  it('the gateway answers the synced data over v2 JSON-RPC and GraphQL', async () => {
    const { gateway, base } = await startTestGateway(db);
    try {
      const balances = await call(base, 'inds_getBalancesByAddress', [10, 0, alice.toLowerCase(), '', '', '', '', 2]);
      expect(balances.result.total).toBe(1);
      expect(JSON.stringify(balances.result)).toContain('1199.75');
      const moves = await call(base, 'inds_getTransactionByAddress', [10, 0, bob, '', '', '', 0]);
      expect(moves.result.total).toBe(2);
      // the v2 wire format: 0x lower-case hashes (raw bytes and 0x text alike), unsigned amounts with event
      // 3 = in, exact 38-digit decimals, unix times converted from the indexer host's +08:00
      const hash = (n: number) => `0x${n.toString(16).padStart(8, '0').repeat(8)}`;
      expect(moves.result).toEqual({
        transactions: [
          { chain: 'avalanche', protocol: 'asc-20', tick: 'huge', address: bob, tx_hash: hash(7), amount: '99999999999999999999.999999999999999999',
            event: 2, operate: 'mint', created_at: 1709294760, updated_at: 1709294760 },
          { chain: 'eth', protocol: 'erc-20', tick: 'pepe', address: bob, tx_hash: hash(6), amount: '300.5', event: 3, operate: 'transfer',
            created_at: 1709294700, updated_at: 1709294700 },
        ],
        total: 2, limit: 10, offset: 0,
      });
      expect(balances.result).toEqual({
        inscriptions: [{ chain: 'eth', protocol: 'erc-20', tick: 'pepe', address: alice, balance: '1199.75', deploy_hash: hash(1), transfer_type: 2 }],
        total: 1, limit: 10, offset: 0,
      });
      const aliceMoves = await call(base, 'inds_getTransactionByAddress', [10, 0, alice, 'eth', '', '', 0]);
      expect(aliceMoves.result.transactions.map((m: any) => [m.event, m.amount, m.tx_hash])).toEqual([
        [4, '300.5', hash(6)], [2, '500.25', hash(5)], [2, '1000', hash(4)], [1, '0', hash(1)],
      ]);
      const detail = await call(base, 'index_getInscriptionByTick', ['avalanche', 'asc-20', 'HUGE']);
      expect(JSON.stringify(detail.result)).toContain('99999999999999999999.999999999999999999');
      const holders = await call(base, 'inds_getHoldersByTick', [10, 0, 'eth', 'erc-20', 'pepe', 2]);
      expect(holders.result.total).toBe(2);
      const q = await gqlJson(base, '{ chain(name: "eth") { latestBlock { number } } }');
      expect(q.errors).toBeUndefined();
    } finally {
      await gateway.close();
    }
  });

  it('polling catches up a later flush, updates in place and a row committed late below the watermark', async () => {
    w.transfer(eth, bob, alice, '0.5');
    await w.flush('eth');
    // a row whose id is below rows committed before it: reserve an id, commit a higher one first
    const late = await src.conn.query('SELECT 1'); void late;
    const [[{ next }]] = await src.conn.query(`SELECT coalesce(max(id), 0) + 1 AS next FROM txs`) as any;
    await src.conn.query(`INSERT INTO txs (id, chain, protocol, block_height, position_in_block, block_time, tx_hash, \`from\`, \`to\`, op,
      tick, amt, gas, gas_price, status, created_at, updated_at) VALUES (?, 'eth', 'erc-20', 5, 0, '2024-03-02 00:00:00', ?, ?, ?, 'mint', 'pepe', 1, 1, 1, 1,
      '2024-03-02 00:00:00', '2024-03-02 00:00:00')`, [Number(next) + 1, Buffer.alloc(32, 0xab), bob, bob]);
    expect(await runSync(options(), silent)).toBe(0);
    const [gap] = await db.sql`SELECT gaps FROM sync_poll_state WHERE source_table = 'txs'`;
    expect(Object.keys(gap!.gaps as object)).toContain(String(next));
    await src.conn.query(`INSERT INTO txs (id, chain, protocol, block_height, position_in_block, block_time, tx_hash, \`from\`, \`to\`, op,
      tick, amt, gas, gas_price, status, created_at, updated_at) VALUES (?, 'eth', 'erc-20', 4, 0, '2024-03-02 00:00:00', NULL, ?, ?, 'mint', 'pepe', 1, 1, 1, 1,
      '2024-03-02 00:00:00', '2024-03-02 00:00:00')`, [Number(next), bob, bob]);
    expect(await runSync(options(), silent)).toBe(0);
    const [n] = await db.sql`SELECT count(*)::int AS n FROM transactions WHERE id = ${Number(next)}`;
    expect(n!.n).toBe(1);
    const balances = await db.sql`SELECT address, balance::text FROM balances b JOIN ticks t ON t.id = b.tick_id
      WHERE t.tick = 'pepe' ORDER BY address`;
    expect(balances).toEqual([{ address: bob, balance: '300' }, { address: alice, balance: '1200.25' }]);
    const [dupes] = await db.sql`SELECT count(*)::int AS n FROM transactions`;
    const [[{ m }]] = await src.conn.query('SELECT count(*) AS m FROM txs') as any;
    expect(dupes!.n).toBe(Number(m));
    // the history polled by id watermark like the other insert-only tables
    expect((await historyDifferences(src.conn, db.sql)).differences).toEqual([]);
    const [[{ k }]] = await src.conn.query('SELECT count(*) AS k FROM balance_txn') as any;
    expect((await db.sql`SELECT count(*)::int AS n FROM balance_history`)[0]!.n).toBe(Number(k));
  });

  it('a balance_txn row whose transaction is not in txs has no block height: a bad row, named', async () => {
    await src.conn.query(`INSERT INTO balance_txn (chain, protocol, event, address, tick, amount, available, balance, tx_hash, created_at,
      updated_at) VALUES ('eth', 'erc-20', 2, ?, 'pepe', 1, 0, 1, ?, '2024-03-02 00:00:00', '2024-03-02 00:00:00')`, [bob, Buffer.alloc(32, 0xcd)]);
    const [[{ id }]] = await src.conn.query('SELECT max(id) AS id FROM balance_txn') as any;
    const lines: string[] = [];
    const log = syncLogger('error');
    const capture = Object.assign(Object.create(log), { error: (o: unknown, msg: string) => lines.push(JSON.stringify({ o, msg })) });
    expect(await runSync(options(), capture)).toBe(1);
    expect(lines.join('\n')).toContain(`balance_txn row ${id}: no txs row of its chain and tx_hash`);
    expect(await runSync(options(['--skip-bad-rows']), capture)).toBe(0);
    expect((await db.sql`SELECT count(*)::int AS n FROM balance_history WHERE id = ${Number(id)}`)[0]!.n).toBe(0);
  });

  it('a row that cannot be mapped stops the sync, named by table and id; --skip-bad-rows reports and goes on', async () => {
    await src.conn.query(`INSERT INTO address_txs (chain, event, protocol, operate, tx_hash, address, related_address, amount, tick,
      created_at, updated_at) VALUES ('eth', 9, 'erc-20', 'odd', NULL, ?, '', 1, 'pepe', '2024-03-02 00:00:00', '2024-03-02 00:00:00')`, [bob]);
    const lines: string[] = [];
    const log = syncLogger('error');
    const capture = Object.assign(Object.create(log), { error: (o: unknown, msg: string) => lines.push(JSON.stringify({ o, msg })) });
    expect(await runSync(options(), capture)).toBe(1);
    expect(lines.join('\n')).toMatch(/"table":"address_txs".*event 9/);
    expect(await runSync(options(['--skip-bad-rows']), capture)).toBe(0);
    expect(lines.at(-1)).toMatch(/bad row skipped/);
  });

  it('preflight names a missing column and the indexer migration that adds it, and refuses', async () => {
    const old = await createSourceDatabase();
    const fresh = await createTestDatabase();
    try {
      await old.conn.query('ALTER TABLE address_txs DROP COLUMN related_address');
      const out: string[] = [];
      const write = process.stdout.write.bind(process.stdout);
      process.stdout.write = ((chunk: string) => { out.push(String(chunk)); return true; }) as never;
      try {
        expect(await runSync({ ...options(), source: old.url, 'database-url': fresh.target.url! }, silent)).toBe(1);
      } finally {
        process.stdout.write = write;
      }
      expect(out.join('')).toMatch(/source column address_txs\.related_address is missing \(added by the indexer's db\/20240221_alter_tx_hash_chainid\.sql\)/);
      const [row] = await fresh.sql`SELECT count(*)::int AS n FROM ticks`;
      expect(row!.n).toBe(0);
    } finally {
      await old.close();
      await fresh.close();
    }
  });

  it('a bad row met by the backfill stops it; --skip-bad-rows copies the rest', async () => {
    const other = await createSourceDatabase();
    const fresh = await createTestDatabase();
    try {
      const ow = new IndexerWriter(other.conn, 0);
      ow.deploy(eth).mint(eth, bob, '1');
      ow.raw(`INSERT INTO balances (sid, chain, protocol, address, tick, available, balance) VALUES (99, 'eth', 'erc-20', ?, 'nosuch', 0, 1)`, [alice]);
      await ow.flush('eth');
      const opts = { ...options(), source: other.url, 'database-url': fresh.target.url! };
      expect(await runSync(opts, silent)).toBe(1);
      expect(await runSync({ ...opts, 'skip-bad-rows': true }, silent)).toBe(0);
      const [n] = await fresh.sql`SELECT count(*)::int AS n FROM balances`;
      expect(n!.n).toBe(1);
    } finally {
      await other.close();
      await fresh.close();
    }
  });

  it('a balance_txn row whose transaction is not in txs stops the backfill, named; --skip-bad-rows leaves it out of the history', async () => {
    const other = await createSourceDatabase();
    const fresh = await createTestDatabase();
    try {
      const ow = new IndexerWriter(other.conn, 0);
      ow.deploy(eth).mint(eth, bob, '1').mint(eth, alice, '2');
      await ow.flush('eth');
      await other.conn.query(`INSERT INTO balance_txn (chain, protocol, event, address, tick, amount, available, balance, tx_hash,
        created_at, updated_at) VALUES ('eth', 'erc-20', 2, ?, 'pepe', 1, 0, 1, ?, '2024-03-02 00:00:00', '2024-03-02 00:00:00')`,
      [bob, Buffer.alloc(32, 0xcd)]);
      const [[{ id }]] = await other.conn.query('SELECT max(id) AS id FROM balance_txn') as any;
      const lines: string[] = [];
      const capture = Object.assign(Object.create(silent), { error: (o: unknown, msg: string) => lines.push(JSON.stringify({ o, msg })) });
      const opts = { ...options(), source: other.url, 'database-url': fresh.target.url! };
      expect(await runSync(opts, capture)).toBe(1);
      expect(lines.join('\n')).toContain(`balance_txn row ${id}: no txs row of its chain and tx_hash`);
      expect((await fresh.sql`SELECT count(*)::int AS n FROM balance_history`)[0]!.n).toBe(0);
      expect(await runSync({ ...opts, 'skip-bad-rows': true }, capture)).toBe(0);
      // the others, each at its transaction's height
      const history = await fresh.sql`SELECT id::int AS id, block_height::int AS h FROM balance_history ORDER BY id`;
      const [others] = await other.conn.query(`SELECT b.id, (SELECT min(x.block_height) FROM txs x WHERE x.tx_hash = b.tx_hash
        AND x.chain = b.chain) AS h FROM balance_txn b WHERE b.id <> ? ORDER BY b.id`, [id]) as any;
      expect(history).toEqual(others.map((r: any) => ({ id: Number(r.id), h: Number(r.h) })));
      expect(others.length).toBeGreaterThanOrEqual(2);
    } finally {
      await other.close();
      await fresh.close();
    }
  });

  it('refuses another source for the same read model', async () => {
    const other = await createSourceDatabase();
    try {
      const opts = { ...options(), source: other.url };
      expect(await runSync(opts, silent)).toBe(1);
      const [row] = await db.sql`SELECT source_database FROM sync_source`;
      expect(row!.source_database).toBe(src.database);
    } finally {
      await other.close();
    }
  });
});
