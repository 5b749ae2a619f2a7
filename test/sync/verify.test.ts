import { beforeAll, describe, expect, it } from 'vitest';
import { runSync } from '../../src/sync/run.js';
import { parseOptions, type SyncOptions } from '../../src/sync/options.js';
import { syncLogger } from '../../src/sync/run.js';
import { findServer } from '../support/db.js';
import { useDatabase } from '../support/gateway.js';
import { IndexerWriter, useSourceDatabase } from '../support/indexer.js';
import { startSyncProcess } from '../support/sync-process.js';
import { because, skipUnless } from '../support/skips.js';

// --verify: an identical pair exits 0; a damaged read model exits 1 with the difference named (table,
// chain, tick, both values); inscriptions_stats disagreeing is reported as a cross-check, not counted.

const server = await findServer();
const eth = { chain: 'eth', protocol: 'erc-20', tick: 'Vrfy' };
const bsc = { chain: 'bsc', protocol: 'bsc-20', tick: 'other' };
const alice = '0xAbCdEf0123456789aBcDeF0123456789AbCdEf01';
const bob = '0x4273173187f1108007b1C1ABE5301eFa03f7fc8A';

describe('sync --verify', { timeout: 120_000, ...skipUnless(server, because.noServerForChild) }, () => {
  const db = useDatabase();
  const src = useSourceDatabase();
  const args = () => ['--source', src.url, '--database-url', db.target.url!, '--source-time-zone', '+08:00', '--verify'];
  const verify = async () => {
    const p = startSyncProcess(args());
    const { code } = await p.exited;
    return { code, out: p.output() };
  };

  beforeAll(async () => {
    const w = new IndexerWriter(src.conn, 8 * 60);
    w.deploy({ ...eth, deployBy: alice }).deploy(bsc);
    await w.flush('eth');
    w.mint(eth, alice, '1000.5').mint(eth, bob, '20').transfer(eth, alice, bob, '0.25').mint(bsc, bob, '7');
    await w.flush('eth');
    const options = parseOptions(['--source', src.url, '--database-url', db.target.url!, '--once', '--source-time-zone', '+08:00',
      '--metrics-port', '0', '--mode', 'polling'], {}) as SyncOptions;
    expect(await runSync(options, syncLogger('silent'))).toBe(0);
  }, 120_000);

  it('an identical pair: exit 0, and inscriptions_stats (never updated by the fixture) only as a cross-check', async () => {
    const { code, out } = await verify();
    expect(out).toMatch(/the read model matches the source \(2 chains, 2 ticks/);
    expect(out).toMatch(/cross-check \(not counted\): inscriptions_stats disagrees/);
    expect(out).toMatch(/stats\s+inscriptions_stats\.minted\s+eth\s+erc-20\/vrfy\s+0\s+1020\.5/);
    expect(code).toBe(0);
  });

  it('a damaged read model: exit 1, each difference named with both values', async () => {
    // a lost movement (minted and the movement count of the tick, the row count of its chain) and a
    // transaction too many on bsc
    await db.sql`DELETE FROM address_txs WHERE id = (SELECT min(a.id) FROM address_txs a JOIN ticks t ON t.id = a.tick_id
                  WHERE t.tick = 'vrfy' AND a.event = 2 AND a.amount = 20)`;
    await db.sql`INSERT INTO transactions (id, chain, protocol, block_height, position_in_block, block_time, tx_hash, from_address,
                  to_address, op, tick, amt, gas, gas_price, status, created_at, updated_at)
                  SELECT 9999, 'bsc', protocol, block_height, 1, block_time, tx_hash, from_address, to_address, op, tick, amt, gas,
                         gas_price, status, created_at, updated_at FROM transactions ORDER BY id LIMIT 1`;
    const { code, out } = await verify();
    expect(out).toMatch(/verify: 4 differences between the source and the read model/);
    expect(out).toMatch(/rows\s+address_txs → address_txs\s+eth\s+-\s+5\s+4/);
    expect(out).toMatch(/rows\s+txs → transactions\s+bsc\s+-\s+2\s+3/);
    expect(out).toMatch(/minted\s+address_txs\s+eth\s+erc-20\/vrfy\s+1020\.5\s+1000\.5/);
    expect(out).toMatch(/movements\s+address_txs\s+eth\s+erc-20\/vrfy\s+5\s+4/);
    expect(code).toBe(1);
  });

  it('the balance history is counted per chain against balance_txn', async () => {
    const [[{ n }]] = await src.conn.query(`SELECT count(*) AS n FROM balance_txn WHERE chain = 'eth'`) as any;
    expect(Number(n)).toBeGreaterThan(0);
    await db.sql`DELETE FROM balance_history WHERE id = (SELECT max(id) FROM balance_history)`;
    const { code, out } = await verify();
    expect(out).toMatch(new RegExp(`rows\\s+balance_txn → balance_history\\s+\\w+\\s+-\\s+\\d+\\s+\\d+`));
    expect(code).toBe(1);
  });

  it('an unreachable source is an operational error: exit 2', async () => {
    const p = startSyncProcess(['--source', 'mysql://root@127.0.0.1:1/none', '--database-url', db.target.url!, '--verify']);
    expect((await p.exited).code).toBe(2);
    expect(p.output()).toMatch(/--verify failed/);
  });
});
