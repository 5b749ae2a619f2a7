import { doc } from '../support/documented.js';
import { describe, expect, it } from 'vitest';
import { percentChange } from '../../src/graphql/types/activity.js';
import { useGateway } from '../support/gateway.js';
import { gqlJson } from '../support/http.js';
import { crazydogDeployer, lobbyDeployer, lobbyHash, tomrayHash } from '../support/documented.js';
import { loadRecords, type Records, scripted } from '../support/records.js';
import { expectExact, rpcCalls } from '../support/rpc.js';

// The v2 chain methods beyond the eight of the spec, on real PostgreSQL: inds_getLastBlockNumberIndexed,
// inds_chainInfo, inds_chainStat and inds_chainBlockStat, each one's happy, not-found and bad-input path and
// its documented exchange, and the GraphQL fields behind all the methods beyond the spec (decodeCallData,
// search, findTick, transaction, chain). Expected answers come from the records of test/support/records.ts (computed by hand
// from its rows), never from the database.

const hex = (text: string) => Buffer.from(text, 'utf8').toString('hex');

let records: Records;
const env = useGateway({ load: async (db) => { records = await loadRecords(db); } });
const { ok, fails } = rpcCalls(() => env.base);

describe('inds_getLastBlockNumberIndexed', () => {
  it('reproduces the documented exchange', async () => {
    const e = doc('inds_getLastBlockNumberIndexed');
    expectExact(await ok(e.method, e.params), e.result);
  });

  it('an empty list: every chain in display order; a chain with no indexed block answers "0" and zero times', async () => {
    const result = await ok('inds_getLastBlockNumberIndexed', [[]]);
    expect(result.map((r: any) => r.chain)).toEqual(['eth', 'avalanche', 'arbitrum', 'bsc', 'fantom', 'polygon', 'btc']);
    expectExact(result.find((r: any) => r.chain === 'polygon'), {
      chain: 'polygon', block_number: '0', block_time: '0001-01-01 00:00:00 +0000 UTC', timestamp: 0,
    });
    expectExact(result.at(-1), {
      chain: 'btc', block_number: '830439', block_time: '2024-02-14 15:33:22 +0000 UTC', timestamp: Date.parse('2024-02-14T15:33:22Z') / 1000,
    });
    expect(await ok('inds_getLastBlockNumberIndexed', [])).toEqual(result);
  });

  it('names are case-insensitive', async () => {
    expect((await ok('inds_getLastBlockNumberIndexed', [['AVALANCHE']]))[0].block_number).toBe('40433785');
  });

  it('not found: an unknown chain is -32603 naming it', async () => {
    const error = await fails('inds_getLastBlockNumberIndexed', [['avalanche', 'nochain', 'other']], -32603);
    expect(error.message).toBe('Record not found');
    expect(error.data).toEqual({ reason: 'unknown chains: nochain, other', chains: ['nochain', 'other'] });
  });

  it('bad input: not an array of strings', async () => {
    await fails('inds_getLastBlockNumberIndexed', ['avalanche'], -32602);
    await fails('inds_getLastBlockNumberIndexed', [[1]], -32602);
    await fails('inds_getLastBlockNumberIndexed', [[], []], -32602);
  });
});

describe('inds_chainInfo', () => {
  it('the chain record and its totals computed from the read model', async () => {
    expectExact(await ok('inds_chainInfo', ['Fantom']), {
      chain_id: 250, chain: 'fantom', outer_chain: 'FTM', name: 'Fantom Opera', logo: 'https://s3.indexs.io/chain/icon/fantom.png',
      network_id: 250, ext: '', block_number: '0', block_time: '0001-01-01T00:00:00Z', timestamp: '0001-01-01T00:00:00Z',
      // ftmx, ftmy; holders A and B; 8 raw transactions (1 deploy, 4 mints, 2 transfers, 1 plain) + 2 fixture mints
      tick_count: 2, address_count: 2, deploy_count: 1, mint_count: 6, transfer_count: 2, transaction_count: 10,
    });
    const avalanche = await ok('inds_chainInfo', ['avalanche']);
    expect([avalanche.block_number, avalanche.block_time, avalanche.tick_count]).toEqual(['40433785', '2024-01-16T10:18:46Z', 4]);
  });

  it('a chain with nothing indexed: zeros', async () => {
    const result = await ok('inds_chainInfo', ['polygon']);
    expect([result.tick_count, result.address_count, result.transaction_count]).toEqual([0, 0, 0]);
  });

  it('not found: an unknown chain is -32603 naming it', async () => {
    expect((await fails('inds_chainInfo', ['nochain'], -32603)).data).toEqual({ reason: 'unknown chain: nochain', chains: ['nochain'] });
  });

  it('bad input: empty, missing, wrong type', async () => {
    await fails('inds_chainInfo', [''], -32602);
    await fails('inds_chainInfo', [], -32602);
    await fails('inds_chainInfo', [['fantom']], -32602);
  });
});

describe('inds_chainStat', () => {
  it('the last 24 h against the 24 h before, ending at the newest indexed transaction', async () => {
    const [fantom] = await ok('inds_chainStat', [['fantom']]);
    expectExact(fantom, {
      chain_id: 250, chain: 'fantom', name: 'Fantom Opera', logo: 'https://s3.indexs.io/chain/icon/fantom.png',
      window_end: '2024-03-01T12:00:00Z',
      // current: 4 transactions; A, B, C, Dd; ftmx, ftmy — previous: 2 transactions (the one at exactly T-24h included); A, B, E; ftmx
      address_24h: 4, address_24h_previous: 3, address_24h_change: '33.33',
      tick_24h: 2, tick_24h_previous: 1, tick_24h_change: '100.00',
      transaction_24h: 4, transaction_24h_previous: 2, transaction_24h_change: '100.00',
    });
  });

  it('an empty list means every chain; a chain with no transactions has zeros and no change', async () => {
    const result = await ok('inds_chainStat', [[]]);
    expect(result.map((r: any) => r.chain)).toEqual(['eth', 'avalanche', 'arbitrum', 'bsc', 'fantom', 'polygon', 'btc']);
    expectExact(result.find((r: any) => r.chain === 'polygon'), {
      chain_id: 137, chain: 'polygon', name: 'Polygon Mainnet', logo: 'https://s3.indexs.io/chain/icon/polygon.png',
      window_end: '0001-01-01T00:00:00Z', address_24h: 0, address_24h_previous: 0, address_24h_change: null,
      tick_24h: 0, tick_24h_previous: 0, tick_24h_change: null, transaction_24h: 0, transaction_24h_previous: 0, transaction_24h_change: null,
    });
  });

  it('not found: an unknown chain is -32603 naming it', async () => {
    expect((await fails('inds_chainStat', [['fantom', 'nochain']], -32603)).data.chains).toEqual(['nochain']);
  });

  it('bad input: not an array of strings', async () => {
    await fails('inds_chainStat', ['fantom'], -32602);
    await fails('inds_chainStat', [[null]], -32602);
  });

  it('percent change: two decimals, half away from zero, null without a previous window', () => {
    expect([percentChange(4, 3), percentChange(2, 3), percentChange(1, 8), percentChange(0, 5), percentChange(5, 0)])
      .toEqual(['33.33', '-33.33', '-87.50', '-100.00', null]);
    expect([percentChange(1, 200), percentChange(1, 3), percentChange(2, 2)]).toEqual(['-99.50', '-66.67', '0.00']);
  });
});

describe('inds_chainBlockStat', () => {
  it('per-block activity of the newest blocks, newest first', async () => {
    const result = await ok('inds_chainBlockStat', ['fantom']);
    expect(result).toHaveLength(9); // 7 raw blocks + 2 fixture mints: fewer than 10
    expectExact(result.slice(0, 3), [
      { block_height: 50_001_000, block_time: '2024-03-01T12:00:00Z', tick_count: 1, transaction_count: 1, address_count: 2 },
      { block_height: 50_000_999, block_time: '2024-03-01T11:00:00Z', tick_count: 1, transaction_count: 1, address_count: 1 },
      { block_height: 50_000_990, block_time: '2024-02-29T13:00:00Z', tick_count: 1, transaction_count: 2, address_count: 3 },
    ]);
    const heights = result.map((b: any) => b.block_height);
    expect(heights).toEqual([...heights].sort((a: number, b: number) => b - a));
  });

  it('at most 10 blocks', async () => {
    // avalanche: every fixture transaction is its own block, more than 10 of them
    const result = await ok('inds_chainBlockStat', ['avalanche']);
    expect(result).toHaveLength(10);
    const heights = records.fixture.data.transactions.filter((x) => x.chain === 'avalanche').map((x) => x.block_height).sort((a, b) => b - a);
    expect(result.map((b: any) => b.block_height)).toEqual(heights.slice(0, 10));
  });

  it('a chain without transactions: an empty list', async () => {
    expect(await ok('inds_chainBlockStat', ['polygon'])).toEqual([]);
  });

  it('not found and bad input', async () => {
    await fails('inds_chainBlockStat', ['nochain'], -32603);
    await fails('inds_chainBlockStat', [''], -32602);
    await fails('inds_chainBlockStat', [1], -32602);
  });
});

describe('GraphQL fields behind the methods', () => {
  it('decodeCallData, search (a union), findTick, transaction { movements }, chain { figures activity recentBlocks }', async () => {
    const res = await gqlJson(env.base, `query($data: String!, $hash: String!) {
      decodeCallData(chain: "avalanche", data: $data) { protocol operation tickName amount tick { deployHash } }
      ticks: search(keyword: "sat") { __typename ... on TickSearchResult { totalCount ticks { tick } } }
      address: search(keyword: "${scripted}") { __typename ... on AddressSearchResult { chains { chainName balance } } }
      findTick(tick: "crazydog") { chainName stats { holders } balanceOf(address: "${crazydogDeployer}") { balance } }
      transaction(chain: "avalanche", hash: $hash) { op movements { address event } }
      chain(name: "fantom") { figures { tickCount } activity { windowEnd current { transactions } change { addresses } } recentBlocks(last: 2) { height } }
    }`, { data: hex('data:,{"p":"asc-20","op":"mint","tick":"tomray","amt":"1"}'), hash: lobbyHash });
    expect(res.errors).toBeUndefined();
    expect(res.data).toEqual({
      decodeCallData: { protocol: 'asc-20', operation: 'mint', tickName: 'tomray', amount: '1', tick: { deployHash: tomrayHash } },
      ticks: { __typename: 'TickSearchResult', totalCount: 3, ticks: [{ tick: 'sat' }, { tick: 'satoshi' }, { tick: 'sats' }] },
      address: { __typename: 'AddressSearchResult', chains: [{ chainName: 'avalanche', balance: '2613' }, { chainName: 'bsc', balance: '1140' }] },
      findTick: { chainName: 'avalanche', stats: { holders: 1 }, balanceOf: { balance: '5' } },
      transaction: { op: 'deploy', movements: [{ address: lobbyDeployer, event: 'DEPLOY' }] },
      chain: { figures: { tickCount: 2 }, activity: { windowEnd: '2024-03-01T12:00:00Z', current: { transactions: 4 }, change: { addresses: '33.33' } }, recentBlocks: [{ height: '50001000' }, { height: '50000999' }] },
    });
  });

  it('bad input surfaces as BAD_USER_INPUT', async () => {
    const res = await gqlJson(env.base, '{ decodeCallData(chain: "avalanche", data: "0xzz") { protocol } }');
    expect(res.errors?.[0]?.extensions?.code).toBe('BAD_USER_INPUT');
    const none = await gqlJson(env.base, '{ decodeCallData(chain: "avalanche", data: "0xa9059cbb") { protocol } }');
    expect(none.errors).toBeUndefined();
    expect(none.data).toEqual({ decodeCallData: null });
  });
});
