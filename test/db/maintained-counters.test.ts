import { describe, expect, it } from 'vitest';
import { startTestGateway, useDatabase } from '../support/gateway.js';
import { gqlJson } from '../support/http.js';
import { alice, bob, carol, fakeHash, Fixture } from '../support/fixtures.js';
import { upsertBalances, upsertMovements, upsertTransactions, type Tx } from '../../src/db/writes.js';

// The maintained counters (ticks.minted / holders / tx_cnt and list_totals) must always equal the real
// counts: after a bulk load (refresh_counters) and after an indexer's row-by-row writes (row triggers),
// done here as plain SQL statements on a writable connection.

const db = useDatabase({
  load: async (db) => {
    const f = new Fixture();
    const avax = f.tick({ chain: 'avalanche', protocol: 'asc-20', tick: 'avax', total_supply: '1000' });
    const eths = f.tick({ chain: 'eth', protocol: 'erc-20', tick: 'eths', total_supply: '100' });
    const pepe = f.tick({ chain: 'eth', protocol: 'erc-20', tick: 'pepe', total_supply: '1000000' });
    const bnbs = f.tick({ chain: 'bsc', protocol: 'bsc-20', tick: 'bnbs' });
    f.tick({ chain: 'eth', protocol: 'erc-20', tick: 'idle' });
    f.tick({ chain: 'bsc', protocol: 'erc-20', tick: 'eths' }); // same tick and protocol on another chain
    f.mint(avax, alice, '100').mint(avax, bob, '100').mint(avax, alice, '100').transfer(avax, alice, carol, '50');
    f.mint(eths, alice, '100').transfer(eths, alice, bob, '100');
    f.mint(pepe, bob, '500000').mint(pepe, carol, '1');
    f.mint(bnbs, carol, '7');
    await f.load(db.sql);
  },
});

// ---- the invariant ----------------------------------------------------------------------------

interface TickCounters { id: string; key: string; minted: string; holders: string; tx_cnt: string }

/** Every tick whose counters differ from the real counts (empty = all right). */
async function tickMismatches() {
  return db.sql<Record<string, string | boolean>[]>`
    SELECT t.id, t.chain || '/' || t.protocol || '/' || t.tick AS key,
           t.minted::text AS minted, r.minted::text AS real_minted,
           t.holders::text AS holders, r.holders::text AS real_holders,
           t.tx_cnt::text AS tx_cnt, r.tx_cnt::text AS real_tx_cnt,
           t.progress::text AS progress
      FROM ticks t,
           LATERAL (SELECT (SELECT coalesce(sum(m.amount), 0) FROM address_txs m WHERE m.tick_id = t.id AND m.event = 2) AS minted,
                           (SELECT count(*) FROM balances b WHERE b.tick_id = t.id AND b.balance > 0) AS holders,
                           (SELECT count(*) FROM transactions x
                             WHERE x.chain = t.chain AND x.protocol = t.protocol AND x.tick = t.tick) AS tx_cnt) r
     WHERE t.minted <> r.minted OR t.holders <> r.holders OR t.tx_cnt <> r.tx_cnt
        OR t.progress <> CASE WHEN t.total_supply > 0 THEN least(r.minted / t.total_supply, 1) ELSE 0 END
     ORDER BY t.id`;
}

const dims = (chain: string | null, protocol: string | null, tick: string | null) => JSON.stringify([chain, protocol, tick]);

/**
 * list_totals compared with counts computed here from the rows: for every list and every combination
 * of (chain | any) × (protocol | any) [× (tick | any) for transactions], the row's n equals the count;
 * a combination without a row must count 0, and a row of a combination that counts 0 must say 0.
 */
async function listTotalMismatches() {
  const expected = new Map<string, number>();
  const add = (key: string) => expected.set(key, (expected.get(key) ?? 0) + 1);
  for (const t of await db.sql<{ chain: string; protocol: string }[]>`SELECT chain, protocol FROM ticks`) {
    for (const c of [t.chain, null]) for (const p of [t.protocol, null]) add(`ticks ${dims(c, p, null)}`);
  }
  for (const x of await db.sql<{ chain: string; protocol: string; tick: string }[]>`SELECT chain, protocol, tick FROM transactions`) {
    for (const c of [x.chain, null]) for (const p of [x.protocol, null]) for (const t of [x.tick, null]) add(`transactions ${dims(c, p, t)}`);
  }
  const actual = new Map<string, number>();
  for (const r of await db.sql<{ list: string; chain: string | null; protocol: string | null; tick: string | null; n: string }[]>`
    SELECT list, chain, protocol, tick, n FROM list_totals`) {
    const key = `${r.list} ${dims(r.chain, r.protocol, r.tick)}`;
    expect(actual.has(key), `duplicate list_totals row ${key}`).toBe(false);
    actual.set(key, Number(r.n));
  }
  const problems: string[] = [];
  for (const key of new Set([...expected.keys(), ...actual.keys()])) {
    const want = expected.get(key) ?? 0;
    const got = actual.get(key);
    if ((got ?? 0) !== want) problems.push(`${key}: list_totals ${got ?? 'missing'}, real ${want}`);
  }
  return problems;
}

/**
 * The per-address counters compared with counts computed here: address_tx_totals (the transactions an
 * address sent or received, one sent to itself once) and address_totals (its address_txs rows, its
 * positive balances).
 */
async function addressTotalMismatches() {
  const expected = new Map<string, number>();
  for (const x of await db.sql<{ f: string; t: string }[]>`SELECT from_key AS f, to_key AS t FROM transactions`) {
    for (const key of new Set([x.f, x.t])) expected.set(key, (expected.get(key) ?? 0) + 1);
  }
  const problems = compareTotals('address_tx_totals', expected,
    await db.sql<{ address_key: string; n: string }[]>`SELECT address_key, n FROM address_tx_totals`);
  const movements = new Map<string, number>();
  for (const m of await db.sql<{ k: string }[]>`SELECT address_key AS k FROM address_txs`) movements.set(m.k, (movements.get(m.k) ?? 0) + 1);
  problems.push(...compareTotals('address_totals.movements', movements,
    await db.sql<{ address_key: string; n: string }[]>`SELECT address_key, movements AS n FROM address_totals`));
  const holdings = new Map<string, number>();
  for (const b of await db.sql<{ k: string; positive: boolean }[]>`SELECT address_key AS k, balance > 0 AS positive FROM balances`) {
    if (b.positive) holdings.set(b.k, (holdings.get(b.k) ?? 0) + 1);
  }
  problems.push(...compareTotals('address_totals.balances', holdings,
    await db.sql<{ address_key: string; n: string }[]>`SELECT address_key, balances AS n FROM address_totals`));
  return problems;
}

/** A per-address counter table against the counts computed here (a missing row counts 0). */
function compareTotals(table: string, expected: Map<string, number>, rows: { address_key: string; n: string }[]) {
  const actual = new Map(rows.map((r) => [r.address_key, Number(r.n)]));
  const problems: string[] = [];
  for (const key of new Set([...expected.keys(), ...actual.keys()])) {
    const want = expected.get(key) ?? 0;
    if ((actual.get(key) ?? 0) !== want) problems.push(`${key}: ${table} ${actual.get(key) ?? 'missing'}, real ${want}`);
  }
  return problems;
}

async function expectCountersRight(step: string) {
  expect(await tickMismatches(), `${step}: tick counters`).toEqual([]);
  expect(await listTotalMismatches(), `${step}: list_totals`).toEqual([]);
  expect(await addressTotalMismatches(), `${step}: address totals`).toEqual([]);
  const [neg] = await db.sql<{ n: string }[]>`
    SELECT (SELECT count(*) FROM ticks WHERE minted < 0 OR holders < 0 OR tx_cnt < 0)
         + (SELECT count(*) FROM list_totals WHERE n < 0)
         + (SELECT count(*) FROM address_tx_totals WHERE n < 0)
         + (SELECT count(*) FROM address_totals WHERE movements < 0 OR balances < 0) AS n`;
  expect(Number(neg!.n), `${step}: no negative counter`).toBe(0);
}

// ---- writes as an indexer does them -----------------------------------------------------------

let height = 50_000_000;
const at = '2024-03-01T00:00:00Z';

async function insertTick(chain: string, protocol: string, tick: string, totalSupply = '1000'): Promise<string> {
  const [row] = await db.sql<{ id: string }[]>`
    INSERT INTO ticks (chain, protocol, tick, name, deploy_by, total_supply, deploy_hash, deploy_time, created_at)
    VALUES (${chain}, ${protocol}, ${tick}, ${tick}, ${alice}, ${totalSupply}, ${fakeHash()}, ${at}, ${at}) RETURNING id`;
  return row!.id;
}

async function insertTx(chain: string, protocol: string, tick: string, op = 'mint', from = alice, to = alice, amt = '1'): Promise<string> {
  const [row] = await db.sql<{ id: string }[]>`
    INSERT INTO transactions (chain, protocol, block_height, position_in_block, block_time, tx_hash, from_address, to_address,
                              op, tick, amt, created_at, updated_at)
    VALUES (${chain}, ${protocol}, ${++height}, 0, ${at}, ${fakeHash()}, ${from}, ${to}, ${op}, ${tick}, ${amt}, ${at}, ${at})
    RETURNING id`;
  return row!.id;
}

async function insertMovement(tickId: string, address: string, amount: string, event: 1 | 2 | 3 | 4): Promise<string> {
  const operate = { 1: 'deploy', 2: 'mint', 3: 'transfer', 4: 'transfer' }[event];
  const [row] = await db.sql<{ id: string }[]>`
    INSERT INTO address_txs (tick_id, address, tx_hash, amount, event, operate, created_at, updated_at)
    VALUES (${tickId}, ${address}, ${fakeHash()}, ${amount}, ${event}, ${operate}, ${at}, ${at}) RETURNING id`;
  return row!.id;
}

async function upsertBalance(tickId: string, address: string, balance: string) {
  await db.sql`
    INSERT INTO balances (tick_id, address, balance, available) VALUES (${tickId}, ${address}, ${balance}, ${balance})
    ON CONFLICT (tick_id, address_key) DO UPDATE SET balance = EXCLUDED.balance, available = EXCLUDED.available`;
}

const tickId = async (chain: string, protocol: string, tick: string) =>
  (await db.sql<{ id: string }[]>`SELECT id FROM ticks WHERE chain = ${chain} AND protocol = ${protocol} AND tick = ${tick}`)[0]!.id;

async function counters(id: string) {
  const [row] = await db.sql<{ minted: string; holders: string; tx_cnt: string }[]>`
    SELECT minted::text, holders::text, tx_cnt::text FROM ticks WHERE id = ${id}`;
  return { minted: row!.minted, holders: Number(row!.holders), txCount: Number(row!.tx_cnt) };
}

// ---- the tests (in order: each step builds on the previous ones) ------------------------------

describe('counters stay equal to the real counts', () => {
  let newt: string;

  it('after a bulk load', async () => {
    await expectCountersRight('bulk load');
    expect(await counters(await tickId('avalanche', 'asc-20', 'avax'))).toEqual({ minted: '300', holders: 3, txCount: 4 });
    const [lt] = await db.sql<{ n: string }[]>`SELECT n FROM list_totals WHERE list = 'ticks' AND chain IS NULL AND protocol IS NULL AND tick IS NULL`;
    expect(Number(lt!.n)).toBe(6);
  });

  it('after row-by-row inserts of a new tick, its transactions, movements and balances', async () => {
    newt = await insertTick('bsc', 'bsc-20', 'newt');
    await expectCountersRight('tick inserted');
    await insertTx('bsc', 'bsc-20', 'newt', 'deploy');
    await insertMovement(newt, alice, '0', 1);
    await expectCountersRight('deploy');
    for (const [address, amount] of [[alice, '10'], [bob, '20'], [carol, '0.25'], [alice, '10']] as const) {
      await insertTx('bsc', 'bsc-20', 'newt', 'mint', address, address, amount);
      await insertMovement(newt, address, amount, 2);
      await expectCountersRight(`mint ${amount} to ${address}`);
    }
    await upsertBalance(newt, alice, '20');
    await upsertBalance(newt, bob, '20');
    await upsertBalance(newt, carol, '0.25');
    await upsertBalance(newt, '0xdddd000000000000000000000000000000000004', '0'); // a zero balance is no holder
    await expectCountersRight('balances');
    expect(await counters(newt)).toEqual({ minted: '40.25', holders: 3, txCount: 5 });
    // transfers: movements 3/4 leave minted alone; the transaction counts
    await insertTx('bsc', 'bsc-20', 'newt', 'transfer', alice, bob, '5');
    await insertMovement(newt, alice, '5', 4);
    await insertMovement(newt, bob, '5', 3);
    await upsertBalance(newt, alice, '15');
    await upsertBalance(newt, bob, '25');
    await expectCountersRight('transfer');
    // transactions of an existing tick, a non-inscription transaction, one of an unindexed tick
    await insertTx('eth', 'erc-20', 'eths', 'transfer', bob, carol);
    await insertTx('eth', '', '', '', alice, bob, '0');
    await insertTx('eth', 'erc-20', 'ghost');
    await expectCountersRight('other transactions');
    expect((await counters(newt)).txCount).toBe(6);
  });

  it('after a balance goes to 0 and back', async () => {
    await upsertBalance(newt, carol, '0');
    await expectCountersRight('carol to 0');
    expect((await counters(newt)).holders).toBe(2);
    await upsertBalance(newt, carol, '0'); // 0 → 0
    await expectCountersRight('carol 0 again');
    await upsertBalance(newt, carol, '3');
    await expectCountersRight('carol back');
    await upsertBalance(newt, carol, '4'); // positive → positive
    await expectCountersRight('carol positive again');
    expect((await counters(newt)).holders).toBe(3);
    // an update that does not touch the balance column
    await db.sql`UPDATE balances SET available = 0 WHERE tick_id = ${newt}`;
    await expectCountersRight('available only');
    // a balance row re-keyed to another address (a repair): both addresses' totals follow
    await db.sql`UPDATE balances SET address = ${'0xEeEe0000000000000000000000000000000000e5'} WHERE tick_id = ${newt} AND address_key = lower(${carol})`;
    await expectCountersRight('balance moved to another address');
    await db.sql`UPDATE balances SET address = ${carol} WHERE tick_id = ${newt} AND address_key = lower(${'0xEeEe0000000000000000000000000000000000e5'})`;
    await expectCountersRight('and back');
  });

  it('after the amount or the event of a movement changes', async () => {
    const id = await insertMovement(newt, bob, '1', 2);
    await expectCountersRight('one more mint');
    await db.sql`UPDATE address_txs SET amount = 1000000000000000000000000.000000000000000001 WHERE id = ${id}`;
    await expectCountersRight('amount raised above 2^64 with 18 decimals');
    expect((await counters(newt)).minted).toBe('1000000000000000000000040.250000000000000001');
    await db.sql`UPDATE address_txs SET amount = 2 WHERE id = ${id}`;
    await expectCountersRight('amount lowered');
    await db.sql`UPDATE address_txs SET event = 3 WHERE id = ${id}`;
    await expectCountersRight('mint → transfer in');
    await db.sql`UPDATE address_txs SET event = 2, amount = 7 WHERE id = ${id}`;
    await expectCountersRight('transfer in → mint, with a new amount');
    const eths = await tickId('eth', 'erc-20', 'eths');
    await db.sql`UPDATE address_txs SET tick_id = ${eths} WHERE id = ${id}`;
    await expectCountersRight('mint moved to another tick');
    await db.sql`UPDATE address_txs SET operate = 'mint!' WHERE id = ${id}`;
    await expectCountersRight('no counted column changed');
    await db.sql`UPDATE address_txs SET address = ${carol} WHERE id = ${id}`;
    await expectCountersRight('movement moved to another address');
    await db.sql`UPDATE address_txs SET address = ${carol.toLowerCase()} WHERE id = ${id}`;
    await expectCountersRight('same address in another letter case');
  });

  it('after a transaction moves to another tick, protocol or chain', async () => {
    const id = await insertTx('bsc', 'bsc-20', 'newt');
    await expectCountersRight('one more transaction');
    await db.sql`UPDATE transactions SET tick = 'bnbs' WHERE id = ${id}`;
    await expectCountersRight('moved to another tick');
    await db.sql`UPDATE transactions SET chain = 'eth', protocol = 'erc-20', tick = 'eths' WHERE id = ${id}`;
    await expectCountersRight('moved to another chain and protocol');
    await db.sql`UPDATE transactions SET protocol = 'erc-20', chain = 'bsc' WHERE id = ${id}`; // the bsc erc-20 eths
    await expectCountersRight('moved to the same tick on another chain');
    await db.sql`UPDATE transactions SET tick = '', protocol = '', op = '' WHERE id = ${id}`;
    await expectCountersRight('no longer an inscription');
    await db.sql`UPDATE transactions SET status = 0, amt = 5 WHERE id = ${id}`;
    await expectCountersRight('no counted column changed');
  });

  it('after a transaction changes its sender or receiver, or is sent to itself', async () => {
    const id = await insertTx('eth', 'erc-20', 'pepe', 'transfer', alice, bob);
    await expectCountersRight('alice → bob');
    await db.sql`UPDATE transactions SET to_address = ${alice.toUpperCase().replace('0X', '0x')} WHERE id = ${id}`;
    await expectCountersRight('alice → alice (same key, other case): counted once');
    await db.sql`UPDATE transactions SET from_address = ${carol} WHERE id = ${id}`;
    await expectCountersRight('carol → alice');
    await db.sql`UPDATE transactions SET from_address = ${bob}, to_address = ${carol} WHERE id = ${id}`;
    await expectCountersRight('bob → carol, both changed');
    await db.sql`DELETE FROM transactions WHERE id = ${id}`;
    await expectCountersRight('deleted');
  });

  it('after a balance moves to another tick', async () => {
    const bnbs = await tickId('bsc', 'bsc-20', 'bnbs');
    await upsertBalance(newt, '0xeeee000000000000000000000000000000000005', '9');
    await expectCountersRight('new holder');
    await db.sql`UPDATE balances SET tick_id = ${bnbs} WHERE tick_id = ${newt} AND address = '0xeeee000000000000000000000000000000000005'`;
    await expectCountersRight('balance moved');
  });

  it('after multi-row statements', async () => {
    await db.sql`UPDATE balances SET balance = 0 WHERE tick_id = ${newt}`;
    await expectCountersRight('every balance of newt to 0');
    expect((await counters(newt)).holders).toBe(0);
    await db.sql`UPDATE balances SET balance = balance + 1 WHERE address_key = lower(${alice})`;
    await expectCountersRight('every balance of alice + 1');
    await db.sql`UPDATE address_txs SET amount = amount * 2 WHERE event = 2 AND tick_id = ${newt}`;
    await expectCountersRight('every mint of newt doubled');
    await db.sql`UPDATE transactions SET tick = 'pepe' WHERE chain = 'eth' AND protocol = 'erc-20' AND tick = 'eths'`;
    await expectCountersRight('every eths transaction to pepe');
    await db.sql`INSERT INTO transactions (chain, protocol, block_height, position_in_block, block_time, tx_hash, from_address,
                                           to_address, op, tick, amt, created_at, updated_at)
                 SELECT chain, protocol, block_height + 1000000, position_in_block, block_time, tx_hash || 'c', from_address,
                        to_address, op, tick, amt, created_at, updated_at FROM transactions WHERE chain = 'avalanche'`;
    await expectCountersRight('INSERT … SELECT');
  });

  it("after the sync's batched multi-row upserts (sql/009, sql/012), replays and changed addresses included", async () => {
    const t = { chain: 'bsc', protocol: 'bsc-20', tick: 'newt' };
    const D = '0xDdDd000000000000000000000000000000000004';
    const txRow = (id: string, from: string, to: string) => ({ id, ...t, block_height: String(++height), position_in_block: '0',
      block_time: at, tx_hash: fakeHash(), from_address: from, to_address: to, op: 'transfer', tick: 'newt', amt: '1', gas: '0',
      gas_price: '0', status: 1, created_at: at, updated_at: at });
    const mv = (id: string, address: string, event: number, amount: string) => ({ id, ...t, address, tx_hash: fakeHash(), amount,
      event, operate: 'transfer', created_at: at, updated_at: at });
    const bal = (address: string, balance: string) => ({ ...t, address, balance, available: '0', updated_at: at });
    const write = (f: (tx: Tx) => Promise<void>) => db.sql.begin((tx) => f(tx as Tx));
    await write(async (tx) => {
      await upsertTransactions(tx, [txRow('90000001', alice, D), txRow('90000002', D, D), txRow('90000003', D.toLowerCase(), bob)]);
      await upsertMovements(tx, [mv('90000001', D, 3, '5'), mv('90000002', alice, 4, '5'), mv('90000003', D.toLowerCase(), 2, '7')]);
      await upsertBalances(tx, [bal(D, '12'), bal(alice, '0'), bal(bob, '3')]);
    });
    await expectCountersRight('batched inserts');
    // the same ids again (a follow replaying a flush), one with another sender / address, balances re-signed
    await write(async (tx) => {
      await upsertTransactions(tx, [txRow('90000001', alice, D), txRow('90000002', carol, D)]);
      await upsertMovements(tx, [mv('90000001', D, 3, '5'), mv('90000003', carol, 2, '7')]);
      await upsertBalances(tx, [bal(D.toLowerCase(), '0'), bal(alice, '4'), bal(bob, '3'), bal(carol, '7')]);
    });
    await expectCountersRight('batched replays and changes');
  });

  it('after deletes', async () => {
    const [oneBalance] = await db.sql<{ address: string }[]>`SELECT address FROM balances WHERE tick_id = ${newt} LIMIT 1`;
    await db.sql`DELETE FROM balances WHERE tick_id = ${newt} AND address = ${oneBalance!.address}`;
    await expectCountersRight('one balance deleted');
    const avax = await tickId('avalanche', 'asc-20', 'avax');
    await db.sql`DELETE FROM balances WHERE tick_id = ${avax} AND address_key = lower(${carol})`;
    await expectCountersRight('a positive balance deleted');
    await db.sql`DELETE FROM address_txs WHERE id = (SELECT min(id) FROM address_txs WHERE tick_id = ${avax} AND event = 2)`;
    await expectCountersRight('a mint movement deleted');
    await db.sql`DELETE FROM address_txs WHERE tick_id = ${avax} AND event = 4`;
    await expectCountersRight('a transfer movement deleted');
    await db.sql`DELETE FROM transactions WHERE id = (SELECT max(id) FROM transactions WHERE chain = 'avalanche')`;
    await expectCountersRight('a transaction deleted');
    await db.sql`DELETE FROM transactions WHERE tick = ''`;
    await expectCountersRight('non-inscription transactions deleted');
    // a whole tick: its rows first (foreign keys), then the tick
    await db.sql`DELETE FROM balances WHERE tick_id = ${newt}`;
    await db.sql`DELETE FROM address_txs WHERE tick_id = ${newt}`;
    await db.sql`DELETE FROM transactions WHERE chain = 'bsc' AND protocol = 'bsc-20' AND tick = 'newt'`;
    await db.sql`DELETE FROM ticks WHERE id = ${newt}`;
    await expectCountersRight('a whole tick deleted');
    await db.sql`DELETE FROM ticks WHERE chain = 'eth' AND tick = 'idle'`;
    await expectCountersRight('an idle tick deleted');
  });

  it('after a transaction-wrapped batch that is rolled back', async () => {
    const before = await snapshot();
    await expect(db.sql.begin(async (tx) => {
      await tx`DELETE FROM balances WHERE tick_id = (SELECT id FROM ticks WHERE tick = 'pepe')`;
      await tx`UPDATE transactions SET tick = 'avax' WHERE chain = 'eth'`;
      throw new Error('indexer crashed');
    })).rejects.toThrow('indexer crashed');
    expect(await snapshot()).toEqual(before);
    await expectCountersRight('rolled back');
  });

  it('refresh_counters() computes the same values the triggers kept', async () => {
    const kept = await snapshot();
    await db.sql`SELECT refresh_counters()`;
    expect(await snapshot()).toEqual(kept);
    await expectCountersRight('refreshed');
  });

  it('refresh_counters() repairs counters that were written wrong', async () => {
    const right = await snapshot();
    await db.sql`UPDATE ticks SET minted = minted + 5, holders = holders + 2, tx_cnt = 99`;
    await db.sql`UPDATE list_totals SET n = n + 3 WHERE list = 'transactions'`;
    await db.sql`INSERT INTO list_totals (list, chain, protocol, tick, n) VALUES ('ticks', 'nope', NULL, NULL, 4)`;
    expect(await tickMismatches()).not.toEqual([]);
    await db.sql`SELECT refresh_counters()`;
    expect(await snapshot()).toEqual(right);
    await expectCountersRight('repaired');
  });

  it('the gateway serves the maintained counters', async () => {
    const gw = await startTestGateway(db);
    try {
      const res = await gqlJson(gw.base, `{
        ticks(first: 100) { totalCount edges { node { id: recordId chainName protocol tick stats { minted holders txCount }
          holders(first: 0) { totalCount } transactions(first: 0) { totalCount } } } }
        eth: ticks(chain: "eth", first: 0) { totalCount }
        txs: transactions(first: 0) { totalCount }
        ethTxs: transactions(chain: "eth", protocol: "erc-20", first: 0) { totalCount }
        aTxs: transactions(address: "${alice.toLowerCase()}", first: 0) { totalCount }
        aEthTxs: transactions(address: "${alice}", chain: "eth", first: 0) { totalCount }
        nobodyTxs: transactions(address: "0x0000000000000000000000000000000000000000", first: 0) { totalCount }
        aMoves: addressTransactions(address: "${alice}", first: 0) { totalCount }
        aMints: addressTransactions(address: "${alice.toLowerCase()}", event: MINT, first: 0) { totalCount }
        nobodyMoves: addressTransactions(address: "0x0000000000000000000000000000000000000000", first: 0) { totalCount }
        bBalances: balances(address: "${bob}", first: 0) { totalCount }
        bEthBalances: balances(address: "${bob}", chain: "eth", first: 0) { totalCount }
      }`);
      expect(res.errors).toBeUndefined();
      const real = await db.sql<{ id: string; minted: string; holders: string; tx_cnt: string }[]>`
        SELECT t.id::text,
               (SELECT coalesce(sum(m.amount), 0) FROM address_txs m WHERE m.tick_id = t.id AND m.event = 2)::text AS minted,
               (SELECT count(*) FROM balances b WHERE b.tick_id = t.id AND b.balance > 0) AS holders,
               (SELECT count(*) FROM transactions x WHERE (x.chain, x.protocol, x.tick) = (t.chain, t.protocol, t.tick)) AS tx_cnt
          FROM ticks t`;
      const byId = new Map(real.map((r) => [r.id, r]));
      expect(res.data.ticks.totalCount).toBe(real.length);
      for (const { node } of res.data.ticks.edges) {
        const r = byId.get(node.id)!;
        expect(node.stats.minted, node.tick).toBe(normal(r.minted));
        expect(node.stats.holders, node.tick).toBe(Number(r.holders));
        expect(node.stats.txCount, node.tick).toBe(Number(r.tx_cnt));
        expect(node.holders.totalCount).toBe(Number(r.holders));
        expect(node.transactions.totalCount).toBe(Number(r.tx_cnt));
      }
      const count = async (q: Promise<{ n: string }[]>) => Number((await q)[0]!.n);
      expect(res.data.eth.totalCount).toBe(await count(db.sql`SELECT count(*) AS n FROM ticks WHERE chain = 'eth'`));
      expect(res.data.txs.totalCount).toBe(await count(db.sql`SELECT count(*) AS n FROM transactions`));
      expect(res.data.ethTxs.totalCount).toBe(await count(db.sql`SELECT count(*) AS n FROM transactions WHERE chain = 'eth' AND protocol = 'erc-20'`));
      // an address alone: address_tx_totals; with a chain as well: counted (bounded by the address's activity)
      const a = alice.toLowerCase();
      expect(res.data.aTxs.totalCount).toBeGreaterThan(0);
      expect(res.data.aTxs.totalCount).toBe(await count(db.sql`SELECT count(*) AS n FROM transactions WHERE from_key = ${a} OR to_key = ${a}`));
      expect(res.data.aEthTxs.totalCount).toBe(await count(db.sql`SELECT count(*) AS n FROM transactions WHERE (from_key = ${a} OR to_key = ${a}) AND chain = 'eth'`));
      expect(res.data.nobodyTxs.totalCount).toBe(0);
      // movements of an address: address_movement_totals alone; counted with an event filter
      expect(res.data.aMoves.totalCount).toBeGreaterThan(0);
      expect(res.data.aMoves.totalCount).toBe(await count(db.sql`SELECT count(*) AS n FROM address_txs WHERE address_key = ${a}`));
      expect(res.data.aMints.totalCount).toBe(await count(db.sql`SELECT count(*) AS n FROM address_txs WHERE address_key = ${a} AND event = 2`));
      expect(res.data.aMints.totalCount).toBeLessThan(res.data.aMoves.totalCount);
      expect(res.data.nobodyMoves.totalCount).toBe(0);
      // positive balances of an address: address_totals alone; counted with a chain filter
      const b = bob.toLowerCase();
      expect(res.data.bBalances.totalCount).toBeGreaterThan(0);
      expect(res.data.bBalances.totalCount).toBe(await count(db.sql`SELECT count(*) AS n FROM balances WHERE address_key = ${b} AND balance > 0`));
      expect(res.data.bEthBalances.totalCount).toBe(await count(db.sql`
        SELECT count(*) AS n FROM balances x JOIN ticks t ON t.id = x.tick_id WHERE x.address_key = ${b} AND x.balance > 0 AND t.chain = 'eth'`));
    } finally {
      await gw.close();
    }
  });
});

/** Every counter value: the ticks' stats and the non-zero list totals (refresh drops rows at 0). */
async function snapshot() {
  const ticks = await db.sql<TickCounters[]>`
    SELECT id::text, chain || '/' || protocol || '/' || tick AS key, minted::text, holders::text, tx_cnt::text,
           progress::text FROM ticks ORDER BY id`;
  const totals = await db.sql`
    SELECT list, chain, protocol, tick, n::text FROM list_totals WHERE n <> 0
     ORDER BY list, chain NULLS FIRST, protocol NULLS FIRST, tick NULLS FIRST`;
  // numeric text keeps the scale of the computation (10.0 vs 10): compare values, not spellings
  return {
    ticks: ticks.map((t) => ({ ...t, minted: normal(t.minted), progress: normal((t as any).progress) })),
    totals: [...totals],
  };
}

function normal(decimal: string): string {
  if (!decimal.includes('.')) return decimal;
  return decimal.replace(/0+$/, '').replace(/\.$/, '');
}

// ---- edge cases of the write path --------------------------------------------------------------
// Orders of writes an indexer may use that the counters must survive too.

class Rollback extends Error {}

describe('counters under unusual write orders', () => {
  // an indexer may record the deploy transaction before the tick row: the tick counts it on insert
  it('a tick inserted after its transactions counts them', async () => {
    await db.sql.begin(async (tx) => {
      await tx`INSERT INTO transactions (chain, protocol, block_height, position_in_block, block_time, tx_hash, from_address,
                                         to_address, op, tick, amt, created_at, updated_at)
               VALUES ('eth', 'erc-20', ${++height}, 0, ${at}, ${fakeHash()}, ${alice}, ${alice}, 'deploy', 'late', 0, ${at}, ${at})`;
      await tx`INSERT INTO ticks (chain, protocol, tick, name, deploy_by, total_supply, deploy_hash, deploy_time, created_at)
               VALUES ('eth', 'erc-20', 'late', 'late', ${alice}, 1000, ${fakeHash()}, ${at}, ${at})`;
      const [row] = await tx<{ tx_cnt: string }[]>`SELECT tx_cnt FROM ticks WHERE chain = 'eth' AND protocol = 'erc-20' AND tick = 'late'`;
      expect(Number(row!.tx_cnt)).toBe(1);
      throw new Rollback();
    }).catch((e) => { if (!(e instanceof Rollback)) throw e; });
  });

  // a re-keyed tick moves between list_totals rows and recounts the transactions of its new key
  it('a tick whose protocol changes counts the transactions of its new key', async () => {
    await db.sql.begin(async (tx) => {
      await tx`UPDATE ticks SET protocol = 'xrc-20' WHERE chain = 'avalanche' AND tick = 'avax'`;
      const [row] = await tx<{ tx_cnt: string; real: string }[]>`
        SELECT t.tx_cnt, (SELECT count(*) FROM transactions x WHERE (x.chain, x.protocol, x.tick) = (t.chain, t.protocol, t.tick)) AS real
          FROM ticks t WHERE chain = 'avalanche' AND tick = 'avax'`;
      expect(Number(row!.tx_cnt)).toBe(Number(row!.real));
      throw new Rollback();
    }).catch((e) => { if (!(e instanceof Rollback)) throw e; });
  });

  // the grand-total row of GROUP BY CUBE exists even without any transaction: its total must be 0
  it('refresh_counters() works on a read model without transactions', async () => {
    await db.sql.begin(async (tx) => {
      await tx`DELETE FROM transactions`;
      await tx`SELECT refresh_counters()`;
      const [row] = await tx<{ n: string }[]>`
        SELECT n FROM list_totals WHERE list = 'transactions' AND chain IS NULL AND protocol IS NULL AND tick IS NULL`;
      expect(Number(row?.n ?? 0)).toBe(0);
      throw new Rollback();
    }).catch((e) => { if (!(e instanceof Rollback)) throw e; });
  });
});
