import { describe, expect, it } from 'vitest';
import { useGateway } from '../support/gateway.js';
import { gqlJson } from '../support/http.js';
import { Fixture } from '../support/fixtures.js';

const gw = useGateway({
  load: async (db) => {
    const f = new Fixture();
    const a = f.tick({ chain: 'avalanche', protocol: 'asc-20', tick: 'avax', total_supply: '1000', limit_per_mint: '100' });
    const b = f.tick({ chain: 'eth', protocol: 'erc-20', tick: 'eths', total_supply: '100' });
    f.tick({ chain: 'eth', protocol: 'erc-20', tick: 'none' });
    f.mint(a, '0xAAaa000000000000000000000000000000000001', '100').mint(a, '0xBBbb000000000000000000000000000000000002', '100');
    f.mint(a, '0xAAaa000000000000000000000000000000000001', '100');
    f.mint(b, '0xAAaa000000000000000000000000000000000001', '100');
    await f.load(db.sql);
  },
});

describe('ticks', () => {
  it('lists with stats, totals and ordering', async () => {
    const res = await gqlJson(gw.base, `{
      ticks(orderBy: HOLDERS, direction: DESC) {
        totalCount
        edges { cursor node { chainName protocol tick totalSupply stats { minted holders txCount progress status } } }
        pageInfo { hasNextPage hasPreviousPage }
      } }`);
    expect(res.errors).toBeUndefined();
    const nodes = res.data.ticks.edges.map((e: any) => e.node);
    expect(res.data.ticks.totalCount).toBe(3);
    expect(nodes.map((n: any) => n.tick)).toEqual(['avax', 'eths', 'none']);
    expect(nodes[0].stats).toEqual({ minted: '300', holders: 2, txCount: 3, progress: '0.3', status: 'MINTING' });
    expect(nodes[1].stats).toEqual({ minted: '100', holders: 1, txCount: 1, progress: '1', status: 'COMPLETED' });
    expect(nodes[2].stats).toEqual({ minted: '0', holders: 0, txCount: 0, progress: '0', status: 'MINTING' });
  });
});
