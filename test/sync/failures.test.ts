import postgres from 'postgres';
import { beforeAll, describe, expect, it } from 'vitest';
import { copyChunksInto } from '../../src/sync/target/copy.js';
import { createTestDatabase, findServer } from '../support/db.js';
import { useDatabase } from '../support/gateway.js';
import { createSourceDatabase, IndexerWriter, useSourceDatabase } from '../support/indexer.js';
import { startSyncProcess, waitFor } from '../support/sync-process.js';
import { because, skipUnless } from '../support/skips.js';

// Every failure ends: a row the read model refuses never hangs the sync, even when the server fails a COPY
// after its last chunk was sent (postgres.js resolves the COPY with its stream and drops the error, which
// would leave the session `idle in transaction (aborted)` and `--once` never returning).

const server = await findServer();

describe('sync: failures end the run', skipUnless(server, because.noServerForChild), () => {
  const db = useDatabase();
  const src = useSourceDatabase();

  it('a COPY the server fails after its last chunk rejects with the server error', async () => {
    const client = postgres(db.target.url!, { max: 1, onnotice: () => {} });
    try {
      const r = await client.reserve();
      await r`CREATE TEMP TABLE copy_fail (k text PRIMARY KEY)`;
      await r`BEGIN`;
      const copy = copyChunksInto(r as never, 'copy_fail', ['k'], [Buffer.from('a\na\n')]);
      const outcome = await Promise.race([copy.then(() => 'resolved', (e: { code?: string }) => e.code),
        new Promise((resolve) => setTimeout(() => resolve('hung'), 10_000))]);
      expect(outcome).toBe('23505');
      await r`ROLLBACK`;
      // the connection is usable afterwards
      expect((await r`SELECT 1 AS one`)[0]!.one).toBe(1);
      r.release();
    } finally {
      await client.end({ timeout: 1 });
    }
  }, 30_000);

  it('a backfill whose COPY is refused names the source row and exits non-zero within seconds', async () => {
    const w = new IndexerWriter(src.conn, 0);
    w.deploy({ chain: 'eth', protocol: 'erc-20', tick: 'zebra' });
    w.deploy({ chain: 'eth', protocol: 'erc-20', tick: 'ZEBRA' });
    await w.flush('eth');
    const [rows] = await src.conn.query('SELECT id FROM inscriptions WHERE tick = ? COLLATE utf8mb4_bin', ['ZEBRA']);
    const upperId = String((rows as { id: number }[])[0]!.id);
    const sync = startSyncProcess(['--source', src.url, '--database-url', db.target.url!, '--once', '--mode', 'polling']);
    const started = Date.now();
    const exit = await Promise.race([sync.exited, new Promise<null>((resolve) => setTimeout(() => resolve(null), 45_000))]);
    await sync.kill();
    expect(exit, sync.output().slice(-3000)).not.toBeNull();
    expect(exit!.code).toBe(1);
    expect(Date.now() - started).toBeLessThan(45_000);
    const line = sync.output().split('\n').find((l) => /"table":"inscriptions"/.test(l) && /"level":50/.test(l));
    expect(line, sync.output().slice(-3000)).toBeDefined();
    const logged = JSON.parse(line!) as { id: string; column: string };
    expect(logged.id).toBe(upperId);
    expect(logged.column).toMatch(/tick/);
    // nothing is left waiting in an aborted transaction
    const stuck = await db.sql`SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database()
      AND state LIKE 'idle in transaction%'`;
    expect(stuck[0]!.n).toBe(0);
  }, 90_000);

  it('a txs position above 2^31 (bigint unsigned in the source) is copied and followed as it is', async () => {
    const db2 = await createTestDatabase();
    const src2 = await createSourceDatabase();
    try {
      const w = new IndexerWriter(src2.conn, 0);
      const t = { chain: 'eth', protocol: 'erc-20', tick: 'far' };
      w.deploy(t).mint(t, '0x00000000000000000000000000000000000000aa', '1');
      w.raw('UPDATE txs SET position_in_block = 3000000000 ORDER BY id DESC LIMIT 1');
      await w.flush('eth');
      const sync = startSyncProcess(['--source', src2.url, '--database-url', db2.target.url!, '--once', '--mode', 'polling']);
      const exit = await Promise.race([sync.exited, new Promise<null>((resolve) => setTimeout(() => resolve(null), 45_000))]);
      await sync.kill();
      expect(exit?.code, sync.output().slice(-3000)).toBe(0);
      const rows = await db2.sql`SELECT position_in_block::text AS p FROM transactions ORDER BY id`;
      expect(rows.map((r) => r.p)).toEqual(['0', '3000000000']);
      // and by the follow's apply (a later flush caught up by polling)
      w.mint(t, '0x00000000000000000000000000000000000000bb', '1');
      w.raw('UPDATE txs SET position_in_block = 4000000000 ORDER BY id DESC LIMIT 1');
      await w.flush('eth');
      const follow = startSyncProcess(['--source', src2.url, '--database-url', db2.target.url!, '--once', '--mode', 'polling']);
      const caught = await Promise.race([follow.exited, new Promise<null>((resolve) => setTimeout(() => resolve(null), 45_000))]);
      await follow.kill();
      expect(caught?.code, follow.output().slice(-3000)).toBe(0);
      const after = await db2.sql`SELECT position_in_block::text AS p FROM transactions ORDER BY id`;
      expect(after.map((r) => r.p)).toEqual(['0', '3000000000', '4000000000']);
    } finally {
      await src2.close();
      await db2.close();
    }
  }, 90_000);
});

// Ticks that differ only in case: the indexer lower-cases every tick it parses (uxuycom/indexer
// protocol/metadata.go), so `zebra` and `ZEBRA` are one tick to it; the first inscription is kept, the
// later one and the rows spelled like it are bad rows — named, counted, skipped with --skip-bad-rows.
describe('sync: ticks that differ only in case', skipUnless(server, because.noServerForChild), () => {
  const db = useDatabase();
  const src = useSourceDatabase();
  let w: IndexerWriter;
  const zebra = { chain: 'eth', protocol: 'erc-20', tick: 'zebra' };
  const ZEBRA = { chain: 'eth', protocol: 'erc-20', tick: 'ZEBRA' };
  const alice = '0x00000000000000000000000000000000000000a1';
  const bob = '0x00000000000000000000000000000000000000b0';
  const idOf = async (tick: string) => {
    const [rows] = await src.conn.query('SELECT id FROM inscriptions WHERE tick = ? COLLATE utf8mb4_bin', [tick]);
    return String((rows as { id: number }[])[0]!.id);
  };
  const badRows = (output: string) => output.split('\n').filter((l) => /bad row skipped/.test(l))
    .map((l) => JSON.parse(l) as { table: string; id: string; column?: string });

  beforeAll(async () => {
    w = new IndexerWriter(src.conn, 0);
    w.deploy(zebra).mint(zebra, alice, '10');
    w.deploy(ZEBRA).mint(ZEBRA, alice, '5');
    await w.flush('eth');
  });

  it('the preflight warns about them', async () => {
    const sync = startSyncProcess(['--source', src.url, '--database-url', db.target.url!, '--dry-run', '--mode', 'polling']);
    const exit = await sync.exited;
    expect(exit.code, sync.output()).toBe(0);
    expect(sync.output()).toMatch(new RegExp(`WARNING +inscriptions: 2 ticks eth/erc-20/zebra differ only in case .*inscription ${await idOf('zebra')} is kept`));
  }, 60_000);

  it('--skip-bad-rows keeps the first, skips the later one and its rows, in the backfill and in the follow', async () => {
    const sync = startSyncProcess(['--source', src.url, '--database-url', db.target.url!, '--skip-bad-rows', '--mode', 'polling',
      '--poll-interval-ms', '200']);
    try {
      await waitFor(async () => (await db.sql`SELECT backfill_done FROM sync_source`.catch(() => []))[0]?.backfill_done === true,
        60_000, 'the backfill').catch((error) => { throw new Error(`${(error as Error).message}\n${sync.output().slice(-3000)}`); });
      const upper = await idOf('ZEBRA');
      let bad = badRows(sync.output());
      expect(bad.find((b) => b.table === 'inscriptions')).toEqual(expect.objectContaining({ id: upper, column: 'tick' }));
      // the ZEBRA balance and movements are not added to zebra's
      expect(bad.map((b) => b.table).sort()).toEqual(expect.arrayContaining(['address_txs', 'balance_txn', 'balances', 'inscriptions']));
      expect(await db.sql`SELECT id::text, tick, minted::text FROM ticks`).toEqual([{ id: await idOf('zebra'), tick: 'zebra', minted: '10' }]);
      expect(await db.sql`SELECT balance::text FROM balances`).toEqual([{ balance: '10' }]);
      // the follow: a third spelling arrives with rows of its own, and a zebra mint beside it
      w.deploy({ ...zebra, tick: 'ZeBrA' }).mint({ ...zebra, tick: 'ZeBrA' }, bob, '3').mint(zebra, bob, '1');
      await w.flush('eth');
      const third = await idOf('ZeBrA');
      await waitFor(async () => (await db.sql`SELECT count(*)::int AS n FROM balances`)[0]!.n === 2, 30_000, 'the follow');
      bad = badRows(sync.output());
      expect(bad.find((b) => b.table === 'inscriptions' && b.id === third)).toBeDefined();
      // (the polling sweep may meet a skipped balance again: reported each time)
      expect(new Set(bad.filter((b) => b.table === 'balances').map((b) => b.id)).size).toBe(2);
      expect(await db.sql`SELECT minted::text, holders::int FROM ticks`).toEqual([{ minted: '11', holders: 2 }]);
      expect((await db.sql`SELECT balance::text FROM balances WHERE address_key = ${bob}`)[0]!.balance).toBe('1');
      expect(sync.child.exitCode).toBeNull();
    } finally {
      await sync.kill('SIGTERM');
    }
  }, 120_000);
});
