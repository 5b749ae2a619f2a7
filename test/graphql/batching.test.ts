import { describe, expect, it } from 'vitest';
import { useGateway } from '../support/gateway.js';
import { gqlJson } from '../support/http.js';
import { alice, chainRows, Fixture } from '../support/fixtures.js';

// The no-N+1 proof: a list of N parents with nested fields costs the same (small) number of SQL
// statements for N = 10 as for N = 100. Statements are counted through the driver's debug hook
// (buildTestGateway's `statements`), i.e. every statement the gateway sends.

const holderOf = (i: number, k: number) => `0x${(i * 10 + k).toString(16).padStart(40, '0')}`;
const TICKS = 100;

const gw = useGateway({
  load: async (db) => {
    const f = new Fixture();
    for (let i = 0; i < TICKS; i++) {
      const t = f.tick({ chain: chainRows[i % chainRows.length]!.chain, protocol: 'p-20', tick: `k${i}` });
      f.mint(t, alice, String(i + 2));
      for (let k = 0; k < i % 4; k++) f.mint(t, holderOf(i, k), String(10 + k));
      if (i % 3 === 0) f.transfer(t, alice, holderOf(i, 9), '1');
    }
    f.block('eth', '19000000', '2024-01-01T00:00:00.000Z', '2024-01-01T00:00:01.000Z');
    f.block('bsc', '35000000', '2024-01-01T00:00:00.000Z', '2024-01-01T00:00:01.000Z');
    f.block('polygon', '52000000', '2024-01-01T00:00:00.000Z', '2024-01-01T00:00:01.000Z');
    await f.load(db.sql);
  },
  warm: true,
});

/** The driver's own catalog query on a fresh connection (see beforeAll). */
const isDriverInternal = (s: string) => /pg_catalog\.pg_type/.test(s);

async function measure(query: string, variables: Record<string, unknown>) {
  gw.statements.length = 0;
  const res = await gqlJson(gw.base, query, variables);
  expect(res.errors).toBeUndefined();
  const statements = gw.statements.filter((s) => !isDriverInternal(s)).map((s) => s.replace(/\s+/g, ' ').trim());
  return { data: res.data, statements, count: statements.length };
}

describe('no N+1', () => {
  const balancesQuery = `query($a: String!, $n: Int!) {
    balances(address: $a, first: $n) { edges { node {
      balance
      tick { tick stats { holders minted } chain { name latestBlock { number } } }
      chain { name }
    } } } }`;

  it('balances of an address with their ticks, chains and latest blocks: 4 statements for 10 or 100', async () => {
    const small = await measure(balancesQuery, { a: alice, n: 10 });
    const large = await measure(balancesQuery, { a: alice, n: 100 });
    expect(small.data.balances.edges).toHaveLength(10);
    expect(large.data.balances.edges).toHaveLength(100);
    // the 100 balances really span every chain, with and without a latest block
    const chains = new Set(large.data.balances.edges.map((e: any) => e.node.chain.name));
    expect(chains.size).toBe(chainRows.length);
    // balances page, ticks by id, chains by name, latest blocks by chain
    expect(small.count, small.statements.join('\n')).toBe(4);
    expect(large.count, large.statements.join('\n')).toBe(4);
    expect(large.statements.map((s) => s.slice(0, 40))).toEqual(small.statements.map((s) => s.slice(0, 40)));
    // and the nested values are right
    for (const { node } of large.data.balances.edges) {
      const i = Number(node.tick.tick.slice(1));
      expect(node.chain.name).toBe(chainRows[i % chainRows.length]!.name);
      expect(node.tick.chain.name).toBe(node.chain.name);
      expect(node.tick.stats.holders).toBe(1 + (i % 4) + (i % 3 === 0 ? 1 : 0));
      expect(node.balance).toBe(String(i + 2 - (i % 3 === 0 ? 1 : 0)));
      const block = { eth: '19000000', bsc: '35000000', polygon: '52000000' }[chainRows[i % chainRows.length]!.chain as 'eth'];
      expect(node.tick.chain.latestBlock).toEqual(block ? { number: block } : null);
    }
  });

  it('balances with totalCount: 4 statements for 10 or 100 (the count is one of them)', async () => {
    const q = `query($a: String!, $n: Int!) { balances(address: $a, first: $n) { totalCount edges { node { tick { tick chain { name } } chain { name } } } } }`;
    const small = await measure(q, { a: alice, n: 10 });
    const large = await measure(q, { a: alice, n: 100 });
    expect(small.data.balances.totalCount).toBe(TICKS);
    // balances page, count, ticks by id, chains by name
    expect(small.count, small.statements.join('\n')).toBe(4);
    expect(large.count, large.statements.join('\n')).toBe(4);
  });

  const ticksQuery = `query($n: Int!) {
    ticks(first: $n) { edges { node {
      id tick chain { name }
      holders(first: 3) { totalCount edges { node { address balance tick { tick } } } }
      transactions(first: 2) { totalCount edges { node { txHash op tick { tick } chain { name } } } }
    } } } }`;

  it('ticks with nested holders and transactions (LATERAL loaders): 4 statements for 5 or 50', async () => {
    const small = await measure(ticksQuery, { n: 5 });
    const large = await measure(ticksQuery, { n: 50 });
    expect(small.data.ticks.edges).toHaveLength(5);
    expect(large.data.ticks.edges).toHaveLength(50);
    // ticks page, holders of all ticks, transactions of all ticks, chains by name
    expect(small.count, small.statements.join('\n')).toBe(4);
    expect(large.count, large.statements.join('\n')).toBe(4);
    expect(large.statements.filter((s) => /CROSS JOIN LATERAL/.test(s))).toHaveLength(2);
  });

  it('the batched nested pages equal the pages fetched one tick at a time', async () => {
    const { data } = await measure(ticksQuery, { n: 50 });
    for (const { node } of data.ticks.edges.filter((_: unknown, k: number) => k % 7 === 0)) {
      const one = await gqlJson(gw.base, `query($id: String!) { ticks(tick: $id) { edges { node {
        holders(first: 3) { totalCount edges { node { address balance tick { tick } } } }
        transactions(first: 2) { totalCount edges { node { txHash op tick { tick } chain { name } } } } } } } }`, { id: node.tick });
      expect(one.errors).toBeUndefined();
      expect(one.data.ticks.edges).toHaveLength(1);
      const single = one.data.ticks.edges[0].node;
      expect(node.holders).toEqual(single.holders);
      expect(node.transactions).toEqual(single.transactions);
      for (const h of node.holders.edges) expect(h.node.tick.tick).toBe(node.tick);
      for (const t of node.transactions.edges) expect(t.node.tick.tick).toBe(node.tick);
    }
  });

  it('two different page shapes of one nested field cost one statement each', async () => {
    const q = `query($n: Int!) { ticks(first: $n) { edges { node {
      top: holders(first: 2) { edges { node { address } } }
      bottom: holders(first: 2, direction: ASC) { edges { node { address } } } } } } }`;
    const small = await measure(q, { n: 5 });
    const large = await measure(q, { n: 50 });
    // ticks page, holders DESC page, holders ASC page
    expect(small.count, small.statements.join('\n')).toBe(3);
    expect(large.count, large.statements.join('\n')).toBe(3);
  });

  it('balances → tick → holders and transactions, two levels deep: 4 statements for 10 or 100', async () => {
    const q = `query($a: String!, $n: Int!) { balances(address: $a, first: $n) { edges { node {
      tick { tick holders(first: 2) { edges { node { address tick { tick } } } } transactions(first: 1) { edges { node { txHash } } } }
    } } } }`;
    const small = await measure(q, { a: alice, n: 10 });
    const large = await measure(q, { a: alice, n: 100 });
    expect(large.data.balances.edges).toHaveLength(100);
    // balances page, ticks by id, holders of all ticks, transactions of all ticks
    expect(small.count, small.statements.join('\n')).toBe(4);
    expect(large.count, large.statements.join('\n')).toBe(4);
  });

  it('one tick with its holders and their tick: 2 statements (the tick found by key is primed by id)', async () => {
    const q = `query($c: String!, $t: String!) { tick(chain: $c, protocol: "p-20", tick: $t) {
      tick holders(first: 5) { edges { node { address tick { tick } } } } } }`;
    const one = await measure(q, { c: chainRows[3 % chainRows.length]!.chain, t: 'K3' });
    expect(one.data.tick.holders.edges.length).toBeGreaterThan(1);
    for (const e of one.data.tick.holders.edges) expect(e.node.tick.tick).toBe('k3');
    // the tick by (chain, protocol, tick), its holders page; no tick by id
    expect(one.count, one.statements.join('\n')).toBe(2);
  });

  it('one tick by deploy hash with its holders and their tick: 2 statements', async () => {
    const { data } = await gqlJson(gw.base, `{ tick(chain: "${chainRows[3 % chainRows.length]!.chain}", protocol: "p-20", tick: "k3") { deployHash } }`);
    const q = `query($c: String!, $h: String!) { tickByDeployHash(chain: $c, deployHash: $h) {
      tick holders(first: 5) { edges { node { tick { tick } } } } } }`;
    const one = await measure(q, { c: chainRows[3 % chainRows.length]!.chain, h: data.tick.deployHash });
    for (const e of one.data.tickByDeployHash.holders.edges) expect(e.node.tick.tick).toBe('k3');
    expect(one.count, one.statements.join('\n')).toBe(2);
  });

  const chainsQuery = `query($names: [String!]) { chains(names: $names) {
    name latestBlock { number }
    ticks(first: 2) { edges { node { tick stats { holders } chain { name } } } }
  } }`;

  it('chains with their ticks: 3 statements for one chain or all of them', async () => {
    const one = await measure(chainsQuery, { names: ['eth'] });
    const all = await measure(chainsQuery, { names: null });
    expect(one.data.chains).toHaveLength(1);
    expect(all.data.chains).toHaveLength(chainRows.length);
    // chains, latest blocks, ticks of every chain (LATERAL); Tick.chain is served by the primed chains
    expect(one.count, one.statements.join('\n')).toBe(3);
    expect(all.count, all.statements.join('\n')).toBe(3);
    for (const c of all.data.chains) {
      expect(c.ticks.edges).toHaveLength(2);
      for (const e of c.ticks.edges) expect(e.node.chain.name).toBe(c.name);
    }
  });

  it('a transaction list with its ticks and chains: 3 statements for 10 or 100', async () => {
    const q = `query($n: Int!) { transactions(first: $n) { edges { node { txHash tick { tick stats { holders } } chain { name } } } } }`;
    const small = await measure(q, { n: 10 });
    const large = await measure(q, { n: 100 });
    expect(large.data.transactions.edges).toHaveLength(100);
    // transactions page, ticks by (chain, protocol, tick), chains by name
    expect(small.count, small.statements.join('\n')).toBe(3);
    expect(large.count, large.statements.join('\n')).toBe(3);
  });
});
