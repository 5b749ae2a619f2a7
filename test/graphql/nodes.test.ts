import { describe, expect, it } from 'vitest';
import { DEMO_NOTABLE } from '../../src/db/seed/demo.js';
import { loadDemo, startTestGateway, useGateway } from '../support/gateway.js';
import { gqlJson } from '../support/http.js';

// Relay's Node interface: every node type's global id refetches the same object through node(id) and
// nodes(ids) (batched through the DataLoaders), and ids that are not ours are the client's error.

const gw = useGateway({ load: loadDemo });
const q = async (query: string, variables: Record<string, unknown> = {}) => {
  const result = await gqlJson(gw.base, query, variables);
  expect(result.errors).toBeUndefined();
  return result.data;
};
const decode = (id: string) => Buffer.from(id, 'base64').toString();
const encode = (text: string) => Buffer.from(text).toString('base64');

describe('node(id) and nodes(ids)', () => {
  it('refetches an object of every node type by its global id', async () => {
    const data = await q(`query($a: String!) {
      tick(chain: "avalanche", protocol: "asc-20", tick: "crazydog") {
        id recordId stats { id holders } chain { id chain }
        holders(first: 1) { edges { node { id address balance } } }
        transactions(first: 1) { edges { node { id recordId txHash } } }
      }
      balances(address: $a, first: 1) { edges { node { id address balance } } }
      addressTransactions(address: $a, first: 1) { edges { node { id recordId txHash } } }
    }`, { a: DEMO_NOTABLE.scriptedAddress });
    const t = data.tick;
    const holder = t.holders.edges[0].node;
    const balance = data.balances.edges[0].node;
    const tx = t.transactions.edges[0].node;
    const movement = data.addressTransactions.edges[0].node;
    expect(decode(t.id)).toBe(`Tick:${t.recordId}`);
    expect(decode(t.stats.id)).toBe(`TickStats:${t.recordId}`);
    expect(decode(t.chain.id)).toBe('Chain:avalanche');
    expect(decode(holder.id)).toBe(`Holder:${t.recordId}:${holder.address}`);
    expect(decode(tx.id)).toBe(`Transaction:${tx.recordId}`);
    expect(decode(movement.id)).toBe(`AddressTransaction:${movement.recordId}`);
    expect(decode(balance.id)).toMatch(new RegExp(`^Balance:\\d+:${balance.address}$`));

    const ids = [t.id, t.stats.id, t.chain.id, holder.id, balance.id, tx.id, movement.id];
    const byNode = await q(`query($ids: [ID!]!) { nodes(ids: $ids) {
      __typename id
      ... on Tick { tick } ... on TickStats { holders } ... on Chain { chain }
      ... on Holder { address balance } ... on Balance { address balance }
      ... on Transaction { txHash } ... on AddressTransaction { txHash }
    } }`, { ids });
    expect(byNode.nodes).toEqual([
      { __typename: 'Tick', id: t.id, tick: 'crazydog' },
      { __typename: 'TickStats', id: t.stats.id, holders: t.stats.holders },
      { __typename: 'Chain', id: t.chain.id, chain: 'avalanche' },
      { __typename: 'Holder', id: holder.id, address: holder.address, balance: holder.balance },
      { __typename: 'Balance', id: balance.id, address: balance.address, balance: balance.balance },
      { __typename: 'Transaction', id: tx.id, txHash: tx.txHash },
      { __typename: 'AddressTransaction', id: movement.id, txHash: movement.txHash },
    ]);
    for (const id of ids) expect((await q('query($id: ID!) { node(id: $id) { id } }', { id })).node).toEqual({ id });
  });

  it('answers null for ids of records that do not exist, in place', async () => {
    const data = await q(`query($ids: [ID!]!) { nodes(ids: $ids) { id } }`, {
      ids: [encode('Tick:999999999'), encode('Chain:avalanche'), encode('Chain:nochain'), encode('Balance:1:0xnobody'), encode('Transaction:0')],
    });
    expect(data.nodes).toEqual([null, { id: encode('Chain:avalanche') }, null, null, null]);
  });

  it('loads the ticks of nodes(ids) in one statement', async () => {
    const list = await q('{ ticks(first: 30) { edges { node { id } } } }');
    const ids = list.ticks.edges.map((e: any) => e.node.id);
    const fresh = await startTestGateway(gw.db);
    try {
      const result = await gqlJson(fresh.base, 'query($ids: [ID!]!) { nodes(ids: $ids) { id ... on Tick { tick } } }', { ids });
      expect(result.data.nodes.map((n: any) => n.id)).toEqual(ids);
      expect(fresh.statements.filter((s) => /FROM ticks/i.test(s))).toHaveLength(1);
    } finally {
      await fresh.close();
    }
  });

  it('refuses ids that are not ours with BAD_USER_INPUT, before any statement', async () => {
    const bad = ['not base64 at all!', encode('Nope:1'), encode('Tick'), encode('Tick:'), encode('Tick:abc'),
      encode('Tick:99999999999999999999'), encode('Balance:1'), encode('Balance:x:0xabc'), encode('__Schema:1')];
    const before = gw.statements.length;
    for (const id of bad) {
      const result = await gqlJson(gw.base, 'query($id: ID!) { node(id: $id) { id } }', { id });
      expect(result.errors?.[0]?.extensions?.code, id).toBe('BAD_USER_INPUT');
      expect(result.errors?.[0]?.message).toMatch(/^Invalid global id/);
    }
    expect(gw.statements.length).toBe(before);
    const many = await gqlJson(gw.base, 'query($ids: [ID!]!) { nodes(ids: $ids) { id } }', { ids: Array(101).fill(encode('Chain:btc')) });
    expect(many.errors?.[0]).toMatchObject({ message: 'at most 100 ids', extensions: { code: 'BAD_USER_INPUT' } });
  });
});
