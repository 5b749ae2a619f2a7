import { describe, expect, it } from 'vitest';
import { startTestGateway, useGateway } from '../support/gateway.js';
import { gqlJson } from '../support/http.js';
import { alice, bob, carol, dave, erin, Fixture } from '../support/fixtures.js';

// Balances at a block height (atBlock): Tick.holders, Tick.balanceOf and balances(address, chain) answered
// from the balance history (sql/011), here derived from the fixture's movements by loadDataset, the way the
// seed and the benchmark data get theirs. Each fixture operation is one block.

const frank = '0x000000000000000000000000000000000000000f';
const many = (i: number) => `0x${(0x1000 + i).toString(16).padStart(40, '0')}`;

/** Height of each step (the block of its transaction). */
const h: Record<string, number> = {};
let indexed = 0;
let bscIndexed = 0;

const gw = useGateway({
  load: async (db) => {
    const f = new Fixture();
    const t = f.tick({ chain: 'eth', protocol: 'erc-20', tick: 'hist' });
    const other = f.tick({ chain: 'eth', protocol: 'erc-20', tick: 'twin' });
    const bsc = f.tick({ chain: 'bsc', protocol: 'bsc-20', tick: 'away' });
    const step = (name: string, op: () => void) => {
      op();
      h[name] = f.data.transactions.at(-1)!.block_height;
    };
    step('mintA', () => f.mint(t, alice, '100'));
    step('mintB', () => f.mint(t, bob, '50'));
    step('mintC', () => f.mint(t, carol, '30'));
    step('mintD', () => f.mint(t, dave, '80'));
    step('a2c', () => f.transfer(t, alice, carol, '30')); // alice 70, carol 60
    step('b2e', () => f.transfer(t, bob, erin, '50')); // bob 0, erin 50
    step('twinA', () => f.mint(other, alice, '5'));
    step('mintF', () => f.mint(t, frank, '10'));
    step('d2a', () => f.transfer(t, dave, alice, '80')); // dave 0, alice 150
    step('bscA', () => f.mint(bsc, alice, '7'));
    // ticks for the batching check: one mint each
    for (let i = 0; i < 12; i++) f.mint(f.tick({ chain: 'eth', protocol: 'erc-20', tick: `many${i}` }), many(i), String(i + 1));
    indexed = f.data.transactions.at(-1)!.block_height + 5;
    bscIndexed = h.mintA! + 1; // bsc is indexed up to an older height than eth
    f.block('eth', String(indexed), '2024-02-01T00:00:00.000Z', '2024-02-01T00:00:01.000Z');
    f.block('bsc', String(bscIndexed), '2024-02-01T00:00:00.000Z', '2024-02-01T00:00:01.000Z');
    await f.load(db.sql);
  },
  warm: true,
});

const holdersQuery = `query($at: BigInt, $first: Int, $after: String) {
  tick(chain: "eth", protocol: "erc-20", tick: "hist") {
    holders(atBlock: $at, first: $first, after: $after) {
      totalCount
      edges { cursor node { id address balance } }
      pageInfo { hasNextPage endCursor }
    }
  }
}`;

async function holdersAt(at: number | null, first = 10, after?: string) {
  const res = await gqlJson(gw.base, holdersQuery, { at: at === null ? null : String(at), first, after });
  expect(res.errors).toBeUndefined();
  return res.data.tick.holders;
}
const pairs = (conn: any) => conn.edges.map((e: any) => [e.node.address, e.node.balance]);

describe('Tick.holders(atBlock)', () => {
  it('before the first movement: nobody', async () => {
    const c = await holdersAt(h.mintA! - 1);
    expect(c.totalCount).toBe(0);
    expect(c.edges).toEqual([]);
    expect(c.pageInfo.hasNextPage).toBe(false);
  });

  it('at each height: the balances as of the end of that block, ordered like the current list', async () => {
    expect(pairs(await holdersAt(h.mintA!))).toEqual([[alice, '100']]);
    expect(pairs(await holdersAt(h.mintD!))).toEqual([[alice, '100'], [dave, '80'], [bob, '50'], [carol, '30']]);
    // between two movements: the state after the earlier one
    expect(pairs(await holdersAt(h.a2c! + 0))).toEqual([[dave, '80'], [alice, '70'], [carol, '60'], [bob, '50']]);
    // bob sent everything: a zero balance is not a holder
    const afterB = await holdersAt(h.b2e!);
    expect(pairs(afterB)).toEqual([[dave, '80'], [alice, '70'], [carol, '60'], [erin, '50']]);
    expect(afterB.totalCount).toBe(4);
    // the last movement, and any later indexed height: the current holders
    const last = await holdersAt(h.d2a!);
    expect(pairs(last)).toEqual([[alice, '150'], [carol, '60'], [erin, '50'], [frank, '10']]);
    expect(pairs(await holdersAt(indexed))).toEqual(pairs(last));
  });

  it('atBlock omitted: the current holders (the maintained list), same answer as at the indexed height', async () => {
    const now = await holdersAt(null);
    expect(pairs(now)).toEqual([[alice, '150'], [carol, '60'], [erin, '50'], [frank, '10']]);
    expect(now.totalCount).toBe(4);
    const at = await holdersAt(indexed);
    expect(at.totalCount).toBe(4);
    // a past holder is another object than the current one (global ids carry the height)
    expect(at.edges[0].node.id).not.toBe(now.edges[0].node.id);
  });

  it('pages by keyset cursor at a past height', async () => {
    const at = h.b2e!;
    const p1 = await holdersAt(at, 3);
    expect(pairs(p1)).toEqual([[dave, '80'], [alice, '70'], [carol, '60']]);
    expect(p1.pageInfo.hasNextPage).toBe(true);
    const p2 = await holdersAt(at, 3, p1.pageInfo.endCursor);
    expect(pairs(p2)).toEqual([[erin, '50']]);
    expect(p2.pageInfo.hasNextPage).toBe(false);
    // a page of 2 then 2: the same four, nothing twice
    const q1 = await holdersAt(at, 2);
    const q2 = await holdersAt(at, 2, q1.pageInfo.endCursor);
    expect([...pairs(q1), ...pairs(q2)]).toEqual(pairs(await holdersAt(at, 10)));
    // backwards too
    const res = await gqlJson(gw.base, `query($at: BigInt, $before: String) { tick(chain: "eth", protocol: "erc-20", tick: "hist") {
      holders(atBlock: $at, last: 2, before: $before) { edges { node { address } } } } }`, { at: String(at), before: p2.edges[0].cursor });
    expect(res.errors).toBeUndefined();
    expect(res.data.tick.holders.edges.map((e: any) => e.node.address)).toEqual([alice, carol]);
  });

  it('node(id) of a past holder answers the balance at that height', async () => {
    const c = await holdersAt(h.a2c!);
    const idOfA = c.edges.find((e: any) => e.node.address === alice).node.id;
    const res = await gqlJson(gw.base, `query($id: ID!) { node(id: $id) { ... on Holder { address balance } } }`, { id: idOfA });
    expect(res.errors).toBeUndefined();
    expect(res.data.node).toEqual({ address: alice, balance: '70' });
  });
});

describe('Tick.balanceOf(address, atBlock)', () => {
  const q = `query($a: String!, $at: BigInt) { tick(chain: "eth", protocol: "erc-20", tick: "hist") {
    balanceOf(address: $a, atBlock: $at) { id address balance } } }`;
  const at = async (address: string, height: number | null) => {
    const res = await gqlJson(gw.base, q, { a: address, at: height === null ? null : String(height) });
    expect(res.errors).toBeUndefined();
    return res.data.tick.balanceOf?.balance ?? null;
  };

  it('is null before the first change, then the balance after the last change by that block', async () => {
    expect(await at(alice, h.mintA! - 1)).toBeNull();
    expect(await at(alice, h.mintA!)).toBe('100');
    expect(await at(alice.toLowerCase(), h.mintD!)).toBe('100');
    expect(await at(alice, h.a2c!)).toBe('70');
    expect(await at(alice, h.d2a! - 1)).toBe('70');
    expect(await at(alice, h.d2a!)).toBe('150');
    expect(await at(alice, indexed)).toBe('150');
    expect(await at(alice, null)).toBe('150');
  });

  it('a balance that went to zero is 0 (not null), like the current balanceOf', async () => {
    expect(await at(bob, h.mintB!)).toBe('50');
    expect(await at(bob, h.b2e!)).toBe('0');
    expect(await at(bob, null)).toBe('0');
  });

  it('within one block the last change (highest id) is the balance at its end; a row-by-row writer keeps the intervals', async () => {
    const [tick] = await gw.db.sql<{ id: string }[]>`SELECT id::text FROM ticks WHERE tick = 'hist'`;
    const G = '0x00000000000000000000000000000000000000a9';
    const height = h.mintF!;
    // three changes of G, written one statement each as an indexer's sync would: two in one block
    await gw.db.sql`INSERT INTO balance_history (id, tick_id, address, block_height, amount, balance, available, tx_hash, created_at)
                 VALUES (900001, ${tick!.id}, ${G}, ${height}, 5, 5, 5, '0x01', now())`;
    await gw.db.sql`INSERT INTO balance_history (id, tick_id, address, block_height, amount, balance, available, tx_hash, created_at)
                 VALUES (900003, ${tick!.id}, ${G}, ${height + 1}, 1, 8, 8, '0x03', now())`;
    // committed late (a lower id in the earlier block)
    await gw.db.sql`INSERT INTO balance_history (id, tick_id, address, block_height, amount, balance, available, tx_hash, created_at)
                 VALUES (900002, ${tick!.id}, ${G}, ${height}, 2, 7, 7, '0x02', now())`;
    try {
      expect(await at(G, height - 1)).toBeNull();
      expect(await at(G, height)).toBe('7');
      expect(await at(G, height + 1)).toBe('8');
      const c = await holdersAt(height);
      expect(pairs(c).filter(([a]: string[]) => a === G)).toEqual([[G, '7']]);
      expect(pairs(await holdersAt(height + 1)).filter(([a]: string[]) => a === G)).toEqual([[G, '8']]);
      // a rewind deletes the later row: the earlier one is current again
      await gw.db.sql`DELETE FROM balance_history WHERE id = 900003`;
      expect(pairs(await holdersAt(indexed)).filter(([a]: string[]) => a === G)).toEqual([[G, '7']]);
    } finally {
      await gw.db.sql`DELETE FROM balance_history WHERE id IN (900001, 900002, 900003)`;
    }
    expect(await at(G, indexed)).toBeNull();
  });
});

describe('balances(address, chain, atBlock)', () => {
  const q = `query($a: String!, $chain: String, $at: BigInt, $first: Int, $after: String) {
    balances(address: $a, chain: $chain, atBlock: $at, first: $first, after: $after) {
      totalCount edges { node { balance tick { tick } } } pageInfo { hasNextPage endCursor } } }`;
  const list = async (vars: Record<string, unknown>) => {
    const res = await gqlJson(gw.base, q, { a: alice, chain: 'eth', ...vars });
    expect(res.errors).toBeUndefined();
    return res.data.balances;
  };
  const ticks = (c: any) => c.edges.map((e: any) => [e.node.tick.tick, e.node.balance]);

  it('answers per height on the named chain, by balance', async () => {
    expect(ticks(await list({ at: String(h.mintA! - 1) }))).toEqual([]);
    expect(ticks(await list({ at: String(h.a2c!) }))).toEqual([['hist', '70']]);
    const later = await list({ at: String(h.twinA!) });
    expect(ticks(later)).toEqual([['hist', '70'], ['twin', '5']]);
    expect(later.totalCount).toBe(2);
    expect(ticks(await list({ at: String(indexed) }))).toEqual([['hist', '150'], ['twin', '5']]);
    // case-insensitive address; omitted height: now, every chain unless one is named
    expect(ticks(await list({ a: alice.toLowerCase(), at: String(indexed) }))).toEqual([['hist', '150'], ['twin', '5']]);
    expect(ticks(await list({ chain: null }))).toEqual([['hist', '150'], ['away', '7'], ['twin', '5']]);
    // the bsc tick at a bsc height
    expect(ticks(await list({ chain: 'bsc', at: String(bscIndexed) }))).toEqual([]);
  });

  it('takes the tick filters of the current list', async () => {
    const res = await gqlJson(gw.base, `query($a: String!, $at: BigInt) {
      byTick: balances(address: $a, chain: "eth", tick: "TWIN", atBlock: $at) { totalCount edges { node { balance } } }
      bySearch: balances(address: $a, chain: "eth", search: "is", atBlock: $at) { edges { node { tick { tick } } } }
      byProtocol: balances(address: $a, chain: "eth", protocol: "bsc-20", atBlock: $at) { totalCount } }`, { a: alice, at: String(indexed) });
    expect(res.errors).toBeUndefined();
    expect(res.data.byTick).toEqual({ totalCount: 1, edges: [{ node: { balance: '5' } }] });
    expect(res.data.bySearch.edges.map((e: any) => e.node.tick.tick)).toEqual(['hist']);
    expect(res.data.byProtocol.totalCount).toBe(0);
  });

  it('pages by keyset cursor at a past height', async () => {
    const p1 = await list({ at: String(indexed), first: 1 });
    expect(ticks(p1)).toEqual([['hist', '150']]);
    expect(p1.pageInfo.hasNextPage).toBe(true);
    const p2 = await list({ at: String(indexed), first: 1, after: p1.pageInfo.endCursor });
    expect(ticks(p2)).toEqual([['twin', '5']]);
    expect(p2.pageInfo.hasNextPage).toBe(false);
  });

  it('a zero balance at that height is left out', async () => {
    const res = await gqlJson(gw.base, q, { a: bob, chain: 'eth', at: String(h.b2e!) });
    expect(res.errors).toBeUndefined();
    expect(res.data.balances.edges).toEqual([]);
    expect(res.data.balances.totalCount).toBe(0);
  });
});

describe('bad input', () => {
  const code = (res: any) => res.errors?.[0]?.extensions?.code;
  const run = (query: string, variables: Record<string, unknown> = {}) => gqlJson(gw.base, query, variables);

  it('a negative or non-numeric atBlock is refused before any statement', async () => {
    for (const v of ['-1', 'abc', '1.5', '', '0x10']) {
      gw.statements.length = 0;
      const res = await run(holdersQuery, { at: v });
      expect(res.data).toBeUndefined();
      expect(res.errors?.[0]?.message).toMatch(/got invalid value .*Expected type BigInt/);
      expect(gw.statements).toEqual([]);
    }
    const literal = await run('{ tick(chain: "eth", protocol: "erc-20", tick: "hist") { holders(atBlock: -3) { totalCount } } }');
    expect(literal.errors?.[0]?.message).toMatch(/BigInt/);
    const number = await run(holdersQuery, { at: 5 });
    expect(number.errors?.[0]?.message).toMatch(/Expected type BigInt/);
  });

  it('a height above what is indexed is an error naming the chain and its height', async () => {
    const res = await run(holdersQuery, { at: String(indexed + 1) });
    expect(code(res)).toBe('BAD_USER_INPUT');
    expect(res.errors![0]!.message).toBe(`atBlock ${indexed + 1} is above the indexed height ${indexed} of chain eth`);
    // per chain: a height eth has is above bsc's
    const away = await run(`query($at: BigInt) { tick(chain: "bsc", protocol: "bsc-20", tick: "away") {
      balanceOf(address: "${alice}", atBlock: $at) { balance } } }`, { at: String(h.mintD!) });
    expect(code(away)).toBe('BAD_USER_INPUT');
    expect(away.errors![0]!.message).toMatch(/above the indexed height .* of chain bsc/);
    const huge = await run(holdersQuery, { at: '99999999999999999999999' });
    expect(code(huge)).toBe('BAD_USER_INPUT');
    expect(huge.errors![0]!.message).toMatch(/out of range/);
    // leading zeros are the same height
    const padded = await run(holdersQuery, { at: `0000000000000000000000${h.mintA}` });
    expect(padded.errors).toBeUndefined();
    expect(padded.data.tick.holders.edges.map((e: any) => e.node.address)).toEqual([alice]);
  });

  it('balances at a height needs a chain; a chain with nothing indexed is named', async () => {
    const res = await run(`{ balances(address: "${alice}", atBlock: "${h.mintA}") { totalCount } }`);
    expect(code(res)).toBe('BAD_USER_INPUT');
    expect(res.errors![0]!.message).toBe('atBlock needs chain: block heights are per chain');
    const none = await run(`{ balances(address: "${alice}", chain: "fantom", atBlock: "1") { totalCount } }`);
    expect(code(none)).toBe('BAD_USER_INPUT');
    expect(none.errors![0]!.message).toBe('atBlock: chain fantom has no indexed block');
    // no SQL text leaks in any of them
    for (const r of [res, none]) expect(JSON.stringify(r.errors)).not.toMatch(/SELECT|balance_history/);
  });

  it('a forged global id with a bad height is refused', async () => {
    const id = Buffer.from('Holder:1:0xabc@x1').toString('base64');
    const res = await run(`query($id: ID!) { node(id: $id) { id } }`, { id });
    expect(res.errors?.[0]?.message).toMatch(/Invalid global id/);
  });
});

describe('cost and batching', () => {
  const isDriverInternal = (s: string) => /pg_catalog\.pg_type/.test(s);
  const q = `query($n: Int!, $at: BigInt) { ticks(chain: "eth", protocol: "erc-20", first: $n) { edges { node {
    tick
    holders(atBlock: $at, first: 3) { totalCount edges { node { address balance tick { tick } } } }
    balanceOf(address: "${alice}", atBlock: $at) { balance }
  } } } }`;
  async function measure(n: number) {
    gw.statements.length = 0;
    const res = await gqlJson(gw.base, q, { n, at: String(h.b2e!) });
    expect(res.errors).toBeUndefined();
    return { data: res.data, statements: gw.statements.filter((s) => !isDriverInternal(s)) };
  }

  it('ticks with their holders, counts and balances at a height: the same statements for 3 ticks or 14', async () => {
    const small = await measure(3);
    const large = await measure(14);
    expect(large.data.ticks.edges).toHaveLength(14);
    // ticks page, the chain's indexed height, holders pages, holder counts, balances
    expect(large.statements.length, large.statements.join('\n---\n')).toBe(small.statements.length);
    expect(large.statements.length).toBeLessThanOrEqual(5);
    const hist = large.data.ticks.edges.find((e: any) => e.node.tick === 'hist').node;
    expect(hist.holders.totalCount).toBe(4);
    expect(hist.holders.edges.map((e: any) => e.node.address)).toEqual([dave, alice, carol]);
    expect(hist.balanceOf).toEqual({ balance: '70' });
    // a tick whose only mint came after that height has no holders then
    const m = large.data.ticks.edges.find((e: any) => e.node.tick === 'many0').node;
    expect(m.holders).toEqual({ totalCount: 0, edges: [] });
    expect(m.balanceOf).toBeNull();
  });

  it('a list at a height costs more than the same list now, and the cost limit counts it', async () => {
    const doc = (at: string) => `{ tick(chain: "eth", protocol: "erc-20", tick: "hist") { holders(first: 10${at}) { edges { node { address } } } } }`;
    // the cost each one is reported with by a gateway that takes nothing
    const probe = await startTestGateway(gw.db, { GRAPHQL_MAX_COST: 1 });
    const costOf = async (d: string) => Number(/found (\d+)/.exec((await gqlJson(probe.base, d)).errors![0]!.message)![1]);
    let nowCost: number;
    let pastCost: number;
    try {
      nowCost = await costOf(doc(''));
      pastCost = await costOf(doc(`, atBlock: "${h.b2e}"`));
    } finally {
      await probe.close();
    }
    expect(pastCost).toBeGreaterThan(nowCost);
    const gwSmall = await startTestGateway(gw.db, { GRAPHQL_MAX_COST: nowCost });
    try {
      const now = await gqlJson(gwSmall.base, doc(''));
      expect(now.errors).toBeUndefined();
      const past = await gqlJson(gwSmall.base, doc(`, atBlock: "${h.b2e}"`));
      expect(past.errors?.[0]?.message).toMatch(new RegExp(`Query Cost limit of ${nowCost} exceeded, found ${pastCost}`));
    } finally {
      await gwSmall.close();
    }
  });
});
