import { beforeAll, describe, expect, it } from 'vitest';
import { runSync } from '../../src/sync/run.js';
import { parseOptions, type SyncOptions } from '../../src/sync/options.js';
import { syncLogger } from '../../src/sync/run.js';
import { findServer } from '../support/db.js';
import { useDatabase } from '../support/gateway.js';
import { IndexerWriter, useSourceDatabase } from '../support/indexer.js';
import { because, skipUnless } from '../support/skips.js';

// How polling follows balances (updated in place, updated_at not indexed by the indexer): from the keys of
// the new address_txs / txs rows, read by the source's unique key; and, for a change no movement shows, by
// the safety-net sweep that reads --poll-sweep-ids ids of balances per cycle. Each `--once` run here is one
// poll cycle (nothing is more than a batch behind).

const server = await findServer();
const silent = syncLogger('silent');
const tick = { chain: 'eth', protocol: 'erc-20', tick: 'Derive' };
const holders = Array.from({ length: 12 }, (_, i) => `0x${(i + 1).toString(16).padStart(4, '0')}DeAd${'0'.repeat(30)}`);

describe('sync: polling follows balances by derivation and by the sweep', skipUnless(server, because.noServerForChild), () => {
  const db = useDatabase();
  const src = useSourceDatabase();
  let w: IndexerWriter;
  const options = (extra: string[] = []): SyncOptions => parseOptions([
    '--source', src.url, '--database-url', db.target.url!, '--once', '--metrics-port', '0', '--mode', 'polling',
    '--poll-sweep-ids', '1000', ...extra,
  ], {}) as SyncOptions;
  const ours = async (address: string) => (await db.sql`SELECT b.balance::text AS balance FROM balances b JOIN ticks t ON t.id = b.tick_id
    WHERE t.tick = 'derive' AND b.address_key = lower(${address})`)[0]?.balance as string | undefined;
  const theirs = async (address: string) =>
    String(((await src.conn.query('SELECT CAST(balance AS CHAR) AS b FROM balances WHERE address = ?', [address])) as any)[0][0].b);
  const sweepState = async () => (await db.sql`SELECT high_id::text AS cursor, gaps FROM sync_poll_state WHERE source_table = 'balances'`)[0]!;

  beforeAll(async () => {
    w = new IndexerWriter(src.conn, 0);
    w.deploy(tick);
    for (const h of holders) w.mint(tick, h, '100');
    await w.flush('eth');
    expect(await runSync(options(), silent)).toBe(0);
  });

  it('rejects a bad --poll-sweep-ids by name', () => {
    expect(() => parseOptions(['--source', 'mysql://r@h/db', '--database-url', 'postgres://a/b', '--poll-sweep-ids', '10'], {}))
      .toThrow(/--poll-sweep-ids: /);
  });

  it('a transfer is followed from its movements even when the balance rows are outside every updated_at window', async () => {
    w.transfer(tick, holders[0]!, holders[1]!, '7.25');
    await w.flush('eth');
    // stamped long ago: the sweep cannot see these rows, only the movements lead to them
    await src.conn.query(`UPDATE balances SET updated_at = '2001-01-01 00:00:00' WHERE address IN (?)`, [[holders[0], holders[1]]]);
    expect(await runSync(options(), silent)).toBe(0);
    expect(await ours(holders[0]!)).toBe('92.75');
    expect(await ours(holders[1]!)).toBe('107.25');
  });

  it('a balance changed with no movement is caught by the sweep, which reads --poll-sweep-ids ids per cycle', async () => {
    // a hand edit (no address_txs / txs row): only updated_at shows it; its id is moved past four sweep chunks
    await src.conn.query(`UPDATE balances SET id = 4500, balance = 77 WHERE address = ?`, [holders[2]]);
    const [[{ m }]] = (await src.conn.query('SELECT max(id) AS m FROM balances')) as any;
    expect(Number(m)).toBe(4500);
    const cursors: string[] = [];
    for (let cycle = 0; cycle < 4; cycle++) {
      expect(await runSync(options(), silent)).toBe(0);
      cursors.push((await sweepState()).cursor);
      // not reached yet: the chunk is 1,000 ids
      expect(await ours(holders[2]!)).toBe('100');
    }
    expect(cursors).toEqual(['1000', '2000', '3000', '4000']);
    expect(await runSync(options(), silent)).toBe(0);
    expect(await ours(holders[2]!)).toBe('77');
    // the pass ended at the highest id: the next one starts again from the first id
    expect((await sweepState()).cursor).toBe('0');
    expect((await sweepState()).gaps).toEqual({});
  });

  it('an update made while a pass is past the row is caught by the next pass', async () => {
    // the next pass reads from the start of this one: start a pass, edit a row it has passed, finish it
    expect(await runSync(options(), silent)).toBe(0);
    expect((await sweepState()).cursor).toBe('1000');
    await src.conn.query(`UPDATE balances SET balance = 55 WHERE address = ?`, [holders[3]]);
    for (let cycle = 0; cycle < 4; cycle++) expect(await runSync(options(), silent)).toBe(0);
    expect((await sweepState()).cursor).toBe('0');
    expect(await ours(holders[3]!)).toBe('100');
    expect(await runSync(options(), silent)).toBe(0);
    expect(await ours(holders[3]!)).toBe('55');
    for (const h of holders) expect(Number(await ours(h))).toBe(Number(await theirs(h)));
  });
});
