import { beforeAll, describe, expect, it } from 'vitest';
import { syncLogger } from '../../src/sync/run.js';
import { parseOptions, type SyncOptions } from '../../src/sync/options.js';
import { runSync } from '../../src/sync/run.js';
import { findServer } from '../support/db.js';
import { useDatabase } from '../support/gateway.js';
import { IndexerWriter, useSourceDatabase } from '../support/indexer.js';
import { startSyncProcess } from '../support/sync-process.js';
import { because, skipUnless } from '../support/skips.js';

// --verify compares values, not only per-chain counts: a balance 150 → 155, a transaction's block time
// +8 h and amount +1, a history row's balance +1 are each named (table, source id, column, both values);
// --verify writes nothing; --verify --repair re-copies exactly those rows.

const server = await findServer();
const eth = { chain: 'eth', protocol: 'erc-20', tick: 'vals' };
const alice = '0xA11cE00000000000000000000000000000000001';
const bob = '0x00000000000000000000000000000000000000b0';

describe('sync --verify: values', { timeout: 120_000, ...skipUnless(server, because.noServerForChild) }, () => {
  const db = useDatabase();
  const src = useSourceDatabase();
  const verify = async (extra: string[] = []) => {
    const p = startSyncProcess(['--source', src.url, '--database-url', db.target.url!, '--source-time-zone', '+08:00', '--verify',
      '--batch-size', '100', ...extra]);
    const { code } = await p.exited;
    return { code, out: p.output() };
  };
  const snapshot = async () => ({
    balances: await db.sql`SELECT address_key, balance::text FROM balances ORDER BY 1`,
    txs: await db.sql`SELECT id::text, block_time, amt::text FROM transactions ORDER BY id`,
    history: await db.sql`SELECT id::text, balance::text FROM balance_history ORDER BY id`,
  });

  beforeAll(async () => {
    const w = new IndexerWriter(src.conn, 8 * 60);
    w.deploy(eth);
    await w.flush('eth');
    w.mint(eth, alice, '150').mint(eth, bob, '20').transfer(eth, bob, alice, '1');
    await w.flush('eth');
    const options = parseOptions(['--source', src.url, '--database-url', db.target.url!, '--once', '--source-time-zone', '+08:00',
      '--metrics-port', '0', '--mode', 'polling'], {}) as SyncOptions;
    expect(await runSync(options, syncLogger('silent'))).toBe(0);
  }, 120_000);

  it('an identical pair compares every value and exits 0', async () => {
    const { code, out } = await verify();
    expect(out).toMatch(/values: \d+ rows compared, every mapped column \(0 id ranges whose checksums differed narrowed to rows\): 0 differences/);
    expect(code, out).toBe(0);
  });

  it('names each changed value with both values, writes nothing; --repair re-copies exactly those rows', async () => {
    const [tx] = await db.sql`SELECT id::text AS id FROM transactions WHERE op = 'mint' ORDER BY id LIMIT 1`;
    const [h] = await db.sql`SELECT id::text AS id, balance::text AS balance FROM balance_history ORDER BY id DESC LIMIT 1`;
    await db.sql`UPDATE balances SET balance = balance + 5 WHERE address_key = ${alice.toLowerCase()}`;
    await db.sql`UPDATE transactions SET block_time = block_time + interval '8 hours', amt = amt + 1 WHERE id = ${tx!.id}`;
    await db.sql`UPDATE balance_history SET balance = balance + 1 WHERE id = ${h!.id}`;
    const damaged = await snapshot();

    const first = await verify();
    expect(first.code, first.out).toBe(1);
    expect(first.out).toMatch(/balances → balances\s+\d+\s+balance\s+151\s+156/); // 150 minted + 1 received
    expect(first.out).toMatch(new RegExp(`txs → transactions\\s+${tx!.id}\\s+block_time\\s+(\\S+)Z\\s+\\S+Z`));
    expect(first.out).toMatch(new RegExp(`txs → transactions\\s+${tx!.id}\\s+amt\\s+150\\s+151`));
    expect(first.out).toMatch(new RegExp(`balance_txn → balance_history\\s+${h!.id}\\s+balance\\s+${h!.balance.replace('.', '\\.')}\\s+\\S+`));
    expect(first.out).toMatch(/: 4 differences/);
    expect(await snapshot()).toEqual(damaged); // --verify writes nothing

    const repair = await verify(['--repair']);
    expect(repair.out).toMatch(/repair: 3 rows re-copied from the source in one transaction/);
    const after = await verify();
    expect(after.out).toMatch(/: 0 differences/);
    expect(after.code, after.out).toBe(0);
  });
});
