import { describe, expect, it } from 'vitest';
import { useGateway } from '../support/gateway.js';
import { alice, bob, fakeHash, Fixture } from '../support/fixtures.js';
import { gqlJson, post } from '../support/http.js';

// A transaction's position in its block is `bigint unsigned` in the indexer's schema and bigint in the read
// model: GraphQL carries it as a BigInt (a decimal string, like blockHeight: an Int is 32-bit), JSON-RPC as
// a JSON integer, byte for byte as before for the positions an Int holds.

const far = { hash: fakeHash(), position: 3_000_000_000 };
const near = { hash: fakeHash(), position: 7 };

const gw = useGateway({
  load: async (db) => {
    const f = new Fixture();
    const t = f.tick({ chain: 'eth', protocol: 'erc-20', tick: 'wide', total_supply: '1000' });
    f.mint(t, alice, '1');
    for (const { hash, position } of [near, far]) {
      f.data.transactions.push({
        chain: 'eth', protocol: 'erc-20', block_height: 19_000_000, position_in_block: position, block_time: '2024-03-01T00:00:00Z',
        tx_hash: hash, from_address: bob, to_address: alice, op: 'transfer', tick: 'wide', amt: '1', gas: 21000, gas_price: 1,
        status: 1, created_at: '2024-03-01T00:00:00Z', updated_at: '2024-03-01T00:00:00Z',
      });
    }
    await f.load(db.sql);
  },
});

describe('positionInBlock above 2^31 - 1', () => {
  it('GraphQL answers it as a BigInt string, in chain order, and by hash', async () => {
    const r: any = await gqlJson(gw.base, `{
      transactions(first: 10, tick: "wide", direction: ASC) { edges { node { txHash positionInBlock } } }
      transaction(chain: "eth", hash: "${far.hash}") { positionInBlock }
    }`);
    expect(r.errors).toBeUndefined();
    const nodes = r.data.transactions.edges.map((e: any) => e.node).filter((n: any) => [near.hash, far.hash].includes(n.txHash));
    expect(nodes).toEqual([{ txHash: near.hash, positionInBlock: '7' }, { txHash: far.hash, positionInBlock: '3000000000' }]);
    expect(r.data.transaction).toEqual({ positionInBlock: '3000000000' });
  });

  it('JSON-RPC answers it as a JSON integer; a small one is rendered as before', async () => {
    const raw = await post(gw.base, { jsonrpc: '2.0', id: 1, method: 'inds_getTransactions', params: [10, 0, '', 'eth', 'erc-20', 'wide', 1] });
    expect(raw.json.error).toBeUndefined();
    expect(raw.text).toContain(`"block_height":19000000,"position_in_block":3000000000,`);
    expect(raw.text).toContain(`"block_height":19000000,"position_in_block":7,`);
    const byHash = new Map(raw.json.result.data.map((x: any) => [x.tx_hash, x.position_in_block]));
    expect([byHash.get(near.hash), byHash.get(far.hash)]).toEqual([7, 3_000_000_000]);
  });
});
