import postgres from 'postgres';
import { afterAll, describe, expect, it } from 'vitest';
import { createSql, type Sql } from '../../src/db/client.js';
import { createVersionWatcher, dataVersionChannel, readSnapshot } from '../../src/db/version.js';
import { findServer } from '../support/db.js';
import { alice, Fixture } from '../support/fixtures.js';
import { dataVersion, indexMint, waitFor } from '../support/ops.js';
import { because, skipUnless } from '../support/skips.js';
import { useDatabase } from '../support/gateway.js';

// The data version of sql/004_data_version.sql: bumped once per writing transaction on any table the
// indexer writes (even in replica mode), never by a rolled-back one, notified at commit; readable by the
// gateway's read-only connection; followed by the watcher.

const onServer = (await findServer()) !== null;
const tick = { chain: 'eth', protocol: 'erc-20', tick: 'vers' };

let readOnly: Sql;

const db = useDatabase({
  load: async (db) => {
    const f = new Fixture();
    f.mint(f.tick(tick), alice, '10');
    f.block('eth', '100', '2024-01-15T09:00:00.000Z', '2024-01-15T09:00:01.000Z');
    await f.load(db.sql);
    readOnly = createSql({ ...db.target, poolMax: 1, statementTimeoutMs: 5_000, connectTimeoutS: 5, readOnly: true });
  },
});
afterAll(async () => {
  await readOnly?.end({ timeout: 5 });
});

const bumpOf = async (write: () => Promise<unknown>) => {
  const before = BigInt(await dataVersion(db.sql));
  await write();
  return BigInt(await dataVersion(db.sql)) - before;
};

describe('data version', () => {
  it('is bumped by a write to each table the indexer writes', async () => {
    const writes: Record<string, () => Promise<unknown>> = {
      chains: () => db.sql`UPDATE chains SET ext = 'x' WHERE chain = 'btc'`,
      indexed_blocks: () => db.sql`UPDATE indexed_blocks SET block_number = block_number + 1`,
      ticks: () => db.sql`UPDATE ticks SET name = 'Vers' WHERE tick = 'vers'`,
      balances: () => db.sql`UPDATE balances SET available = available WHERE address = ${alice}`,
      address_txs: () => db.sql`UPDATE address_txs SET operate = operate`,
      transactions: () => db.sql`DELETE FROM transactions WHERE tx_hash = 'none'`,
    };
    for (const [table, write] of Object.entries(writes)) expect(await bumpOf(write), table).toBe(1n);
  });

  it('once per transaction, however many statements and rows (cascaded counter updates included)', async () => {
    expect(await bumpOf(() => indexMint(db.sql, tick, alice, '5'))).toBe(1n);
    expect(await bumpOf(() => db.sql.begin(async (tx) => {
      for (let i = 0; i < 5; i++) await tx`UPDATE balances SET balance = balance + 1 WHERE address = ${alice}`;
    }))).toBe(1n);
    // two transactions, two bumps
    expect(await bumpOf(async () => {
      await db.sql`UPDATE ticks SET name = 'a' WHERE tick = 'vers'`;
      await db.sql`UPDATE ticks SET name = 'b' WHERE tick = 'vers'`;
    })).toBe(2n);
  });

  it('is not bumped by a rolled-back transaction, nor by reads', async () => {
    expect(await bumpOf(() => db.sql.begin(async (tx) => {
      await tx`UPDATE ticks SET name = 'gone' WHERE tick = 'vers'`;
      throw new Error('rollback');
    }).catch(() => {}))).toBe(0n);
    expect(await bumpOf(() => db.sql`SELECT count(*) FROM balances`)).toBe(0n);
  });

  it('is bumped by bulk loads that switch row triggers off (session_replication_role = replica)', async () => {
    const f = new Fixture();
    f.data.chains = [];
    f.mint(f.tick({ chain: 'bsc', protocol: 'bsc-20', tick: 'bulk' }), alice, '1');
    expect(await bumpOf(() => f.load(db.sql))).toBe(1n);
  });

  it('is readable, not writable, by the gateway’s read-only connection', async () => {
    const snapshot = await readSnapshot(readOnly);
    expect(snapshot.version).toBe(await dataVersion(db.sql));
    expect(snapshot.epoch).toMatch(/^[0-9a-f]{12}$/);
    expect(snapshot.heights.eth).toBe((await db.sql`SELECT block_number::text AS n FROM indexed_blocks WHERE chain = 'eth'`)[0]!.n);
    expect(snapshot.heights.btc).toBeNull();
    // the embedded engine ignores startup parameters (default_transaction_read_only among them)
    if (db.engine === 'server') await expect(readOnly`UPDATE data_version SET version = 0`).rejects.toMatchObject({ code: '25006' });
  });

  it('is announced on igw_data_version at commit, with the new version', skipUnless(onServer, because.noNotify), async () => {
    const listener = postgres(db.target.url!, { max: 1, onnotice: () => {} });
    const seen: string[] = [];
    try {
      await listener.listen(dataVersionChannel, (payload) => seen.push(payload));
      await db.sql.begin(async (tx) => {
        await tx`UPDATE ticks SET name = 'c' WHERE tick = 'vers'`;
        await new Promise((r) => setTimeout(r, 100));
        expect(seen, 'nothing before the commit').toEqual([]);
      });
      await waitFor(async () => seen.length > 0, 2_000);
      expect(seen).toEqual([await dataVersion(db.sql)]);
    } finally {
      await listener.end({ timeout: 5 });
    }
  });

  it('is followed by the watcher: by notification, or by polling when LISTEN is off', async () => {
    for (const listen of onServer ? [true, false] : [false]) {
      const changes: string[] = [];
      const watcher = createVersionWatcher(readOnly, { pollMs: 100, listen, onChange: (_next, _prev, via) => changes.push(via) });
      await watcher.start();
      try {
        expect(watcher.listening()).toBe(listen);
        expect(changes).toEqual(['start']);
        await db.sql`UPDATE indexed_blocks SET block_number = block_number + 1 WHERE chain = 'eth'`;
        const target = await dataVersion(db.sql);
        await waitFor(async () => watcher.current()?.version === target, 2_000, 5);
        expect(changes.at(-1)).toBe(listen ? 'notify' : 'poll');
        expect(watcher.current()?.heights.eth).toBe((await db.sql`SELECT block_number::text AS n FROM indexed_blocks WHERE chain = 'eth'`)[0]!.n);
      } finally {
        await watcher.stop();
      }
    }
  });
});
