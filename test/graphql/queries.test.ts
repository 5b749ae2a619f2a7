import { beforeAll, describe, expect, it } from 'vitest';
import type { TickInput, TransactionInput } from '../../src/db/load.js';
import { useGateway } from '../support/gateway.js';
import { gqlJson } from '../support/http.js';
import { alice, bob, carol, fakeHash, Fixture } from '../support/fixtures.js';

// Every query field of the schema against one hand-built dataset whose expected answers are computed
// from the fixture itself (not from the database).

let f: Fixture;

const DEPLOYER = '0xDeAd00000000000000000000000000000000BeEf';
const BIG = '340282366920938463463374607431768211455'; // 2^128 - 1
const TINY = '0.000000000000000001';
const AVAX_HASH = '0xABCDEF0000000000000000000000000000000000000000000000000000000001';

const ticks: Record<string, TickInput> = {};
const searchTicks = ['a%b', 'a_b', 'a\\b', 'axb', 'ab'];
const manualTx: Record<string, TransactionInput> = {};

async function q<T = any>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const res = await gqlJson<T>(gw.base, query, variables);
  expect(res.errors).toBeUndefined();
  return res.data!;
}

const lower = (s: string) => s.toLowerCase();

function rawTx(spec: Partial<TransactionInput> & Pick<TransactionInput, 'chain' | 'block_height' | 'position_in_block'>): TransactionInput {
  const at = '2024-03-01T12:00:00.000Z';
  return {
    protocol: '', block_time: at, tx_hash: fakeHash(), from_address: alice, to_address: bob, op: '', tick: '', amt: '0',
    gas: 21000, gas_price: 1, status: 1, created_at: at, updated_at: at, ...spec,
  };
}

const gw = useGateway({
  load: async (db) => {
    f = new Fixture();
    ticks.avax = f.tick({
      chain: 'avalanche', protocol: 'asc-20', tick: 'avax', total_supply: '1000', limit_per_mint: '100', deploy_by: DEPLOYER,
      deploy_hash: AVAX_HASH, deploy_time: '2024-01-15T09:37:29.000Z', created_at: '2024-01-15T09:37:29.000Z',
      updated_at: '2024-02-27T15:12:23.000Z',
    });
    ticks.eths = f.tick({ chain: 'eth', protocol: 'erc-20', tick: 'eths', total_supply: '100', limit_per_mint: '0.5' });
    ticks.none = f.tick({ chain: 'eth', protocol: 'erc-20', tick: 'none' });
    ticks.big = f.tick({
      chain: 'eth', protocol: 'erc-20', tick: 'big', total_supply: '1000000000000000000000000000000000000000000', decimals: 18,
      deploy_by: DEPLOYER.toLowerCase(),
    });
    ticks.bnbs = f.tick({ chain: 'bsc', protocol: 'bsc-20', tick: 'bnbs', transfer_type: 2 });
    ticks.tiny = f.tick({ chain: 'arbitrum', protocol: 'arc-20', tick: 'tiny', decimals: 18, transfer_type: 1 });
    for (const s of searchTicks) ticks[s] = f.tick({ chain: 'polygon', protocol: 'prc-20', tick: s });

    f.mint(ticks.avax, alice, '100').mint(ticks.avax, bob, '100').mint(ticks.avax, alice, '100');
    f.transfer(ticks.avax, alice, carol, '50'); // alice 150, bob 100, carol 50
    f.mint(ticks.eths, alice, '100').transfer(ticks.eths, alice, bob, '50'); // alice 50, bob 50 (a tie broken by address)
    f.mint(ticks.bnbs, carol, '30').transfer(ticks.bnbs, carol, alice, '20'); // alice 20, carol 10
    f.data.movements.push({
      chain: 'eth', protocol: 'erc-20', tick: 'big', address: alice, tx_hash: fakeHash(), amount: '0', event: 1, operate: 'deploy',
      created_at: '2024-01-16T00:00:00.000Z', updated_at: '2024-01-16T00:00:00.000Z',
    });
    f.mint(ticks.big, alice, BIG);
    for (const s of searchTicks) f.mint(ticks[s]!, alice, '10');
    f.data.balances.push(
      { chain: 'arbitrum', protocol: 'arc-20', tick: 'tiny', address: alice, balance: TINY, available: TINY },
      { chain: 'eth', protocol: 'erc-20', tick: 'none', address: alice, balance: '0', available: '0' },
    );
    // transactions whose chain order differs from their record order
    const heights = f.data.transactions.map((t) => t.block_height);
    const top = Math.max(...heights) + 500;
    const bottom = Math.min(...heights) - 1000;
    manualTx.plain = rawTx({ chain: 'eth', block_height: top, position_in_block: 3, from_address: alice, to_address: bob });
    manualTx.ghost = rawTx({
      chain: 'eth', protocol: 'erc-20', tick: 'ghost', op: 'mint', amt: '5', block_height: top, position_in_block: 1,
      from_address: carol, to_address: alice.toUpperCase().replace('0X', '0x'),
    });
    manualTx.bscTie = rawTx({ chain: 'bsc', protocol: 'bsc-20', tick: 'bnbs', op: 'transfer', block_height: top, position_in_block: 1, from_address: bob, to_address: carol });
    manualTx.early = rawTx({ chain: 'bsc', protocol: 'bsc-20', tick: 'bnbs', op: 'mint', block_height: bottom, position_in_block: 9, from_address: carol, to_address: carol });
    f.data.transactions.push(manualTx.plain, manualTx.ghost, manualTx.bscTie, manualTx.early);
    f.block('eth', '19000000', '2024-03-01T10:00:00.000Z', '2024-03-01T10:00:05.000Z');
    f.block('avalanche', '42000000', '2024-03-01T11:00:00.000Z', '2024-03-01T11:00:02.000Z');
    await f.load(db.sql);
  },
});

describe('chains', () => {
  it('lists every chain in display order with its latest block (null when none)', async () => {
    const data = await q(`{ chains { chain chainId outerChain name logo networkId ext latestBlock { number time indexedAt } } }`);
    expect(data.chains.map((c: any) => c.chain)).toEqual(['eth', 'avalanche', 'arbitrum', 'bsc', 'fantom', 'polygon', 'btc']);
    expect(data.chains[0]).toEqual({
      chain: 'eth', chainId: 1, outerChain: 'eth', name: 'Ethereum', logo: 'https://s3.indexs.io/chain/icon/eth.png', networkId: 1, ext: '',
      latestBlock: { number: '19000000', time: '2024-03-01T10:00:00Z', indexedAt: '2024-03-01T10:00:05Z' },
    });
    expect(data.chains[1].latestBlock).toEqual({ number: '42000000', time: '2024-03-01T11:00:00Z', indexedAt: '2024-03-01T11:00:02Z' });
    for (const c of data.chains.slice(2)) expect(c.latestBlock).toBeNull();
  });

  it('filters by names case-insensitively, in display order, leaving unknown names out', async () => {
    const data = await q(`query($n: [String!]) { chains(names: $n) { chain } }`, { n: ['BSC', 'nope', 'eth', 'Polygon'] });
    expect(data.chains.map((c: any) => c.chain)).toEqual(['eth', 'bsc', 'polygon']);
    const none = await q(`{ chains(names: ["nope"]) { chain } }`);
    expect(none.chains).toEqual([]);
  });

  it('finds one chain by name case-insensitively, null when unknown', async () => {
    const data = await q(`{
      a: chain(name: "eth") { chain name latestBlock { number } }
      b: chain(name: "ETH") { chain name }
      c: chain(name: "AvaLanche") { chain latestBlock { number } }
      d: chain(name: "nope") { chain }
      e: chain(name: "fantom") { chain latestBlock { number } }
    }`);
    expect(data.a).toEqual({ chain: 'eth', name: 'Ethereum', latestBlock: { number: '19000000' } });
    expect(data.b).toEqual({ chain: 'eth', name: 'Ethereum' });
    expect(data.c).toEqual({ chain: 'avalanche', latestBlock: { number: '42000000' } });
    expect(data.d).toBeNull();
    expect(data.e).toEqual({ chain: 'fantom', latestBlock: null });
  });

  it('finds a chain by an upper-case name when it is the only lookup of the request', async () => {
    const data = await q(`{ chain(name: "BSC") { chain chainId } }`);
    expect(data.chain).toEqual({ chain: 'bsc', chainId: 56 });
  });
});

const tickFields = `id recordId chainName protocol tick name limitPerMint deployBy totalSupply deployHash deployTime transferType decimals
  createdAt updatedAt stats { minted holders txCount progress status }`;

describe('tick lookups', () => {
  it('tick(chain, protocol, tick) is case-insensitive and returns every field', async () => {
    const data = await q(`{ t: tick(chain: "AVALANCHE", protocol: "ASC-20", tick: "AvAx") { ${tickFields} chain { chain name } } }`);
    expect(data.t).toMatchObject({
      chainName: 'avalanche', protocol: 'asc-20', tick: 'avax', name: 'avax', limitPerMint: '100', deployBy: DEPLOYER,
      totalSupply: '1000', deployHash: AVAX_HASH, deployTime: '2024-01-15T09:37:29Z', transferType: 'NONE', decimals: 0,
      createdAt: '2024-01-15T09:37:29Z', updatedAt: '2024-02-27T15:12:23Z',
      stats: { minted: '300', holders: 3, txCount: 4, progress: '0.3', status: 'MINTING' },
      chain: { chain: 'avalanche', name: 'Avalanche' },
    });
    expect(data.t.recordId).toMatch(/^\d+$/);
    // the Relay id: base64 of Tick:<record id>
    expect(Buffer.from(data.t.id, 'base64').toString()).toBe(`Tick:${data.t.recordId}`);
  });

  it('tick(…) returns null when not found', async () => {
    const data = await q(`{
      a: tick(chain: "eth", protocol: "erc-20", tick: "nope") { id: recordId }
      b: tick(chain: "bsc", protocol: "erc-20", tick: "eths") { id: recordId }
      c: tick(chain: "eth", protocol: "asc-20", tick: "eths") { id: recordId }
    }`);
    expect(data).toEqual({ a: null, b: null, c: null });
  });

  it('exact decimals, dates and a null updatedAt', async () => {
    const data = await q(`{
      big: tick(chain: "eth", protocol: "erc-20", tick: "big") { totalSupply decimals deployBy stats { minted holders progress status } }
      eths: tick(chain: "eth", protocol: "erc-20", tick: "eths") { limitPerMint updatedAt stats { minted progress status } }
      none: tick(chain: "eth", protocol: "erc-20", tick: "none") { updatedAt stats { minted holders txCount progress status } }
      bnbs: tick(chain: "bsc", protocol: "bsc-20", tick: "bnbs") { transferType }
      tiny: tick(chain: "arbitrum", protocol: "arc-20", tick: "tiny") { transferType decimals }
    }`);
    expect(data.big.totalSupply).toBe('1000000000000000000000000000000000000000000');
    expect(data.big.decimals).toBe(18);
    expect(data.big.stats.minted).toBe(BIG);
    expect(data.big.stats.status).toBe('MINTING');
    expect(data.big.stats.holders).toBe(1);
    expect(data.big.stats.progress).toMatch(/^0\.000340282366920938/);
    expect(data.eths).toEqual({ limitPerMint: '0.5', updatedAt: null, stats: { minted: '100', progress: '1', status: 'COMPLETED' } });
    expect(data.none).toEqual({ updatedAt: null, stats: { minted: '0', holders: 0, txCount: 0, progress: '0', status: 'MINTING' } });
    expect(data.bnbs.transferType).toBe('BALANCE');
    expect(data.tiny).toEqual({ transferType: 'UTXO_HASH', decimals: 18 });
  });

  it('tickByDeployHash compares the hash case-insensitively and the chain too', async () => {
    const data = await q(`query($lo: String!, $up: String!) {
      a: tickByDeployHash(chain: "avalanche", deployHash: $lo) { tick deployHash }
      b: tickByDeployHash(chain: "Avalanche", deployHash: $up) { tick }
      c: tickByDeployHash(chain: "eth", deployHash: $lo) { tick }
      d: tickByDeployHash(chain: "avalanche", deployHash: "0x00") { tick }
    }`, { lo: AVAX_HASH.toLowerCase(), up: AVAX_HASH.toUpperCase() });
    expect(data.a).toEqual({ tick: 'avax', deployHash: AVAX_HASH });
    expect(data.b).toEqual({ tick: 'avax' });
    expect(data.c).toBeNull();
    expect(data.d).toBeNull();
  });

  it('ticksByDeployHash keeps selector order and leaves unknown selectors out', async () => {
    const selectors = [
      { chain: 'eth', deployHash: ticks.big!.deploy_hash.toUpperCase() },
      { chain: 'eth', deployHash: '0xdoesnotexist' },
      { chain: 'AVALANCHE', deployHash: AVAX_HASH.toLowerCase() },
      { chain: 'bsc', deployHash: ticks.eths!.deploy_hash }, // right hash, wrong chain
      { chain: 'eth', deployHash: ticks.eths!.deploy_hash },
      { chain: 'polygon', deployHash: ticks['a%b']!.deploy_hash },
    ];
    const data = await q(`query($s: [TickSelector!]!) { ticksByDeployHash(selectors: $s) { chainName tick } }`, { s: selectors });
    expect(data.ticksByDeployHash).toEqual([
      { chainName: 'eth', tick: 'big' },
      { chainName: 'avalanche', tick: 'avax' },
      { chainName: 'eth', tick: 'eths' },
      { chainName: 'polygon', tick: 'a%b' },
    ]);
    const empty = await q(`{ ticksByDeployHash(selectors: []) { tick } }`);
    expect(empty.ticksByDeployHash).toEqual([]);
  });
});

// ---- the tick list ----------------------------------------------------------------------------

interface TickNode { id: string; tick: string; chainName: string; deployTime: string; stats: { progress: string; holders: number; txCount: number } }

function compareDecimalStrings(a: string, b: string): number {
  const [ai = '', af = ''] = a.split('.');
  const [bi = '', bf = ''] = b.split('.');
  const width = Math.max(af.length, bf.length);
  const x = BigInt(ai + af.padEnd(width, '0'));
  const y = BigInt(bi + bf.padEnd(width, '0'));
  return x < y ? -1 : x > y ? 1 : 0;
}

const sortKey: Record<string, (n: TickNode) => string | number | null> = {
  ID: () => null,
  DEPLOY_TIME: (n) => Date.parse(n.deployTime),
  PROGRESS: (n) => n.stats.progress,
  HOLDERS: (n) => n.stats.holders,
  TX_COUNT: (n) => n.stats.txCount,
};

function expectedOrder(nodes: TickNode[], orderBy: string, direction: 'ASC' | 'DESC'): string[] {
  const key = sortKey[orderBy]!;
  const cmp = (a: TickNode, b: TickNode) => {
    const ka = key(a);
    const kb = key(b);
    let c = 0;
    if (typeof ka === 'string' && typeof kb === 'string') c = compareDecimalStrings(ka, kb);
    else if (typeof ka === 'number' && typeof kb === 'number') c = ka - kb;
    if (c === 0) c = Number(a.id) - Number(b.id);
    return direction === 'ASC' ? c : -c;
  };
  return [...nodes].sort(cmp).map((n) => n.id);
}

describe('ticks list', () => {
  const nodeFields = 'id: recordId tick chainName deployTime stats { progress holders txCount }';
  let all: TickNode[];

  beforeAll(async () => {
    const data = await q(`{ ticks(first: 100, orderBy: ID, direction: ASC) { totalCount edges { node { ${nodeFields} } } } }`);
    all = data.ticks.edges.map((e: any) => e.node);
  });

  it('lists every tick, by id descending by default', async () => {
    expect(all).toHaveLength(f.data.ticks.length);
    const data = await q(`{ ticks(first: 100) { totalCount edges { node { id: recordId } } } }`);
    expect(data.ticks.totalCount).toBe(f.data.ticks.length);
    expect(data.ticks.edges.map((e: any) => e.node.id)).toEqual(expectedOrder(all, 'ID', 'DESC'));
  });

  for (const orderBy of ['ID', 'DEPLOY_TIME', 'PROGRESS', 'HOLDERS', 'TX_COUNT']) {
    for (const direction of ['ASC', 'DESC'] as const) {
      it(`orders by ${orderBy} ${direction} with the id breaking ties`, async () => {
        const data = await q(`query($o: TickOrderField!, $d: OrderDirection!) {
          ticks(first: 100, orderBy: $o, direction: $d) { edges { node { id: recordId } } } }`, { o: orderBy, d: direction });
        expect(data.ticks.edges.map((e: any) => e.node.id)).toEqual(expectedOrder(all, orderBy, direction));
      });
    }
  }

  it('the fixture has ties on every sort key (so the tie-break is exercised)', () => {
    for (const orderBy of ['DEPLOY_TIME', 'PROGRESS', 'HOLDERS', 'TX_COUNT']) {
      const keys = all.map((n) => String(sortKey[orderBy]!(n)));
      expect(new Set(keys).size, orderBy).toBeLessThan(keys.length);
    }
  });

  it('filters by chain, protocol, tick and deployer, case-insensitively', async () => {
    const data = await q(`query($dep: String!) {
      byChain: ticks(chain: "ETH", first: 100) { totalCount edges { node { tick } } }
      byProtocol: ticks(protocol: "PRC-20", first: 100, orderBy: ID, direction: ASC) { totalCount edges { node { tick } } }
      byTick: ticks(tick: "AVAX") { totalCount edges { node { tick chainName } } }
      byDeployer: ticks(deployBy: $dep, first: 100, direction: ASC) { totalCount edges { node { tick } } }
      combined: ticks(chain: "eth", protocol: "erc-20", tick: "BIG", deployBy: $dep) { totalCount edges { node { tick } } }
      mismatch: ticks(chain: "bsc", tick: "avax") { totalCount edges { node { tick } } }
      unknown: ticks(chain: "nope") { totalCount edges { node { tick } } }
    }`, { dep: DEPLOYER.toUpperCase().replace('0X', '0x') });
    const ticksOf = (c: any) => c.edges.map((e: any) => e.node.tick);
    expect(ticksOf(data.byChain)).toEqual(['big', 'none', 'eths']);
    expect(data.byChain.totalCount).toBe(3);
    expect(ticksOf(data.byProtocol)).toEqual(searchTicks);
    expect(data.byProtocol.totalCount).toBe(5);
    expect(data.byTick).toEqual({ totalCount: 1, edges: [{ node: { tick: 'avax', chainName: 'avalanche' } }] });
    expect(ticksOf(data.byDeployer)).toEqual(['avax', 'big']);
    expect(data.byDeployer.totalCount).toBe(2);
    expect(data.combined).toEqual({ totalCount: 1, edges: [{ node: { tick: 'big' } }] });
    expect(data.mismatch).toEqual({ totalCount: 0, edges: [] });
    expect(data.unknown).toEqual({ totalCount: 0, edges: [] });
  });
});

// ---- balances ---------------------------------------------------------------------------------

describe('balances', () => {
  const fields = 'edges { node { address balance available updatedAt tick { tick chainName } chain { chain name } } } totalCount';

  it('lists only positive balances of the address, by balance descending (tick id breaks ties)', async () => {
    const data = await q(`query($a: String!) { balances(address: $a, first: 100) { ${fields} } }`, { a: alice.toLowerCase() });
    const nodes = data.balances.edges.map((e: any) => e.node);
    const searchDesc = [...searchTicks].reverse(); // equal balances: tick id descending
    expect(nodes.map((n: any) => n.tick.tick)).toEqual(['big', 'avax', 'eths', 'bnbs', ...searchDesc, 'tiny']);
    expect(data.balances.totalCount).toBe(10);
    expect(nodes.map((n: any) => n.balance)).toEqual([BIG, '150', '50', '20', '10', '10', '10', '10', '10', TINY]);
    expect(nodes[0]).toMatchObject({ address: alice, available: BIG, tick: { tick: 'big', chainName: 'eth' }, chain: { chain: 'eth', name: 'Ethereum' } });
    expect(nodes.at(-1)).toMatchObject({ balance: TINY, available: TINY, tick: { tick: 'tiny' }, chain: { chain: 'arbitrum', name: 'Arbitrum One' } });
    expect(nodes[1]).toMatchObject({ tick: { tick: 'avax', chainName: 'avalanche' }, chain: { chain: 'avalanche' } });
    for (const n of nodes) expect(n.updatedAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
  });

  it('ascending reverses the order, ties included', async () => {
    const desc = await q(`query($a: String!) { balances(address: $a, first: 100) { edges { node { tick { id } } } } }`, { a: alice });
    const asc = await q(`query($a: String!) { balances(address: $a, first: 100, direction: ASC) { edges { node { tick { id } } } } }`, { a: alice });
    const ids = (d: any) => d.balances.edges.map((e: any) => e.node.tick.id);
    expect(ids(asc)).toEqual([...ids(desc)].reverse());
    // the five equal balances are ordered by tick id, following the direction
    const ties = ids(asc).slice(1, 6).map(Number);
    expect(asc.balances.edges).toHaveLength(10);
    expect(ties).toEqual([...ties].sort((x, y) => x - y));
  });

  it('filters by chain, protocol and tick', async () => {
    const data = await q(`query($a: String!) {
      chain: balances(address: $a, chain: "ETH") { totalCount edges { node { tick { tick } balance } } }
      protocol: balances(address: $a, protocol: "ASC-20") { totalCount edges { node { tick { tick } balance } } }
      tick: balances(address: $a, tick: "Eths") { totalCount edges { node { tick { tick } balance } } }
      zero: balances(address: $a, tick: "none") { totalCount edges { node { balance } } }
      other: balances(address: $a, chain: "fantom") { totalCount edges { node { balance } } }
    }`, { a: alice });
    const pick = (c: any) => c.edges.map((e: any) => [e.node.tick.tick, e.node.balance]);
    expect(pick(data.chain)).toEqual([['big', BIG], ['eths', '50']]);
    expect(data.chain.totalCount).toBe(2);
    expect(pick(data.protocol)).toEqual([['avax', '150']]);
    expect(data.protocol.totalCount).toBe(1);
    expect(pick(data.tick)).toEqual([['eths', '50']]);
    expect(data.zero).toEqual({ totalCount: 0, edges: [] });
    expect(data.other).toEqual({ totalCount: 0, edges: [] });
  });

  it('search matches a case-insensitive substring with %, _ and \\ taken literally', async () => {
    const search = async (s: string) => {
      const data = await q(`query($a: String!, $s: String!) {
        balances(address: $a, search: $s, first: 100, direction: ASC) { totalCount edges { node { tick { tick } } } } }`, { a: alice, s });
      const found = data.balances.edges.map((e: any) => e.node.tick.tick).sort();
      expect(data.balances.totalCount).toBe(found.length);
      return found;
    };
    expect(await search('%')).toEqual(['a%b']);
    expect(await search('_')).toEqual(['a_b']);
    expect(await search('\\')).toEqual(['a\\b']);
    expect(await search('A%B')).toEqual(['a%b']);
    expect(await search('a_')).toEqual(['a_b']);
    expect(await search('%%')).toEqual([]);
    expect(await search('XB')).toEqual(['axb']);
    expect(await search('b')).toEqual(['a%b', 'a\\b', 'a_b', 'ab', 'axb', 'big', 'bnbs']);
    expect(await search('AVA')).toEqual(['avax']);
    expect(await search('nothing')).toEqual([]);
    // an empty search filters nothing
    expect(await search('')).toHaveLength(10);
  });

  it('search combines with the other filters', async () => {
    const data = await q(`query($a: String!) {
      x: balances(address: $a, search: "b", chain: "eth") { edges { node { tick { tick } } } }
      y: balances(address: $a, search: "b", protocol: "prc-20", tick: "ab") { edges { node { tick { tick } } } }
    }`, { a: alice });
    expect(data.x.edges.map((e: any) => e.node.tick.tick)).toEqual(['big']);
    expect(data.y.edges.map((e: any) => e.node.tick.tick)).toEqual(['ab']);
  });

  it('an address with no balances has an empty list', async () => {
    const data = await q(`{ balances(address: "0x0000000000000000000000000000000000000000") { totalCount edges { node { balance } } pageInfo { hasNextPage hasPreviousPage } } }`);
    expect(data.balances).toEqual({ totalCount: 0, edges: [], pageInfo: { hasNextPage: false, hasPreviousPage: false } });
  });
});

// ---- the movement log -------------------------------------------------------------------------

describe('addressTransactions', () => {
  const eventName: Record<number, string> = { 1: 'DEPLOY', 2: 'MINT', 3: 'TRANSFER_IN', 4: 'TRANSFER_OUT' };
  const expected = (address: string, events: number[] | null) =>
    f.data.movements
      .filter((m) => lower(m.address) === lower(address) && (events === null || events.includes(m.event)))
      .reverse()
      .map((m) => ({ txHash: m.tx_hash, event: eventName[m.event], amount: m.amount }));

  const cases: [string, number[] | null][] = [
    ['ALL', null], ['DEPLOY', [1]], ['MINT', [2]], ['TRANSFER', [3, 4]], ['TRANSFER_IN', [3]], ['TRANSFER_OUT', [4]],
  ];
  for (const [filter, events] of cases) {
    it(`event filter ${filter}, newest first`, async () => {
      for (const address of [alice, bob, carol]) {
        const data = await q(`query($a: String!, $e: MovementEventFilter!) {
          addressTransactions(address: $a, event: $e, first: 100) { totalCount edges { node { txHash event amount } } } }`,
        { a: address.toUpperCase().replace('0X', '0x'), e: filter });
        const want = expected(address, events);
        expect(data.addressTransactions.edges.map((e: any) => e.node)).toEqual(want);
        expect(data.addressTransactions.totalCount).toBe(want.length);
      }
    });
  }

  it('the log of alice has every kind of event (so each filter is exercised)', () => {
    expect(new Set(expected(alice, null).map((m) => m.event))).toEqual(new Set(['DEPLOY', 'MINT', 'TRANSFER_IN', 'TRANSFER_OUT']));
  });

  it('returns every field, filters by tick fields, and ASC is oldest first', async () => {
    const data = await q(`query($a: String!) {
      asc: addressTransactions(address: $a, direction: ASC, first: 100) { edges { node { txHash } } }
      avax: addressTransactions(address: $a, chain: "AVALANCHE", protocol: "asc-20", tick: "AVAX") {
        totalCount edges { node { id: recordId address txHash amount event operate createdAt updatedAt tick { tick chainName } } } }
      ethMint: addressTransactions(address: $a, chain: "eth", event: MINT, first: 100) { totalCount edges { node { txHash tick { tick } } } }
    }`, { a: alice });
    expect(data.asc.edges.map((e: any) => e.node.txHash)).toEqual(expected(alice, null).map((m) => m.txHash).reverse());
    const avax = f.data.movements.filter((m) => m.tick === 'avax' && m.address === alice).reverse();
    expect(data.avax.totalCount).toBe(avax.length);
    expect(data.avax.edges.map((e: any) => e.node.txHash)).toEqual(avax.map((m) => m.tx_hash));
    const first = data.avax.edges[0].node;
    expect(first).toMatchObject({ address: alice, amount: '50', event: 'TRANSFER_OUT', operate: 'transfer', tick: { tick: 'avax', chainName: 'avalanche' } });
    expect(first.createdAt).toBe(avax[0]!.created_at.replace(/\.000Z$/, 'Z'));
    expect(first.updatedAt).toBe(avax[0]!.updated_at.replace(/\.000Z$/, 'Z'));
    const ids = data.avax.edges.map((e: any) => Number(e.node.id));
    expect(ids).toEqual([...ids].sort((x, y) => y - x));
    expect(data.ethMint.edges.map((e: any) => e.node.tick.tick)).toEqual(['big', 'eths']);
    expect(data.ethMint.totalCount).toBe(2);
    // the mint of a number above 2^64 round-trips exactly
    const big = await q(`query($a: String!) { addressTransactions(address: $a, tick: "big", event: MINT) { edges { node { amount } } } }`, { a: alice });
    expect(big.addressTransactions.edges).toEqual([{ node: { amount: BIG } }]);
  });
});

// ---- raw transactions -------------------------------------------------------------------------

describe('transactions', () => {
  const txFields = 'id: recordId chainName protocol blockHeight positionInBlock txHash from to op tickName amount';
  // record ids follow the fixture's array order, so the array index stands for the id tie-break
  const chainOrder = (filter: (t: TransactionInput) => boolean, direction: 'ASC' | 'DESC') => {
    const rows = f.data.transactions.map((t, i) => ({ t, i })).filter(({ t }) => filter(t));
    rows.sort((a, b) => a.t.block_height - b.t.block_height || a.t.position_in_block - b.t.position_in_block || a.i - b.i);
    if (direction === 'DESC') rows.reverse();
    return rows.map(({ t }) => t.tx_hash);
  };
  const hashes = (c: any) => c.edges.map((e: any) => e.node.txHash);

  it('lists every transaction in chain order, newest first by default, both directions', async () => {
    const data = await q(`{
      d: transactions(first: 100) { totalCount edges { node { ${txFields} } } }
      a: transactions(first: 100, direction: ASC) { totalCount edges { node { txHash } } }
    }`);
    expect(hashes(data.d)).toEqual(chainOrder(() => true, 'DESC'));
    expect(hashes(data.a)).toEqual(chainOrder(() => true, 'ASC'));
    expect(data.d.totalCount).toBe(f.data.transactions.length);
    expect(data.a.totalCount).toBe(f.data.transactions.length);
    // the fixture's chain order differs from its record order
    expect(hashes(data.a)).not.toEqual(f.data.transactions.map((t) => t.tx_hash));
    // same block and position on two chains: the record id decides
    const asc = hashes(data.a);
    expect(asc.indexOf(manualTx.ghost!.tx_hash)).toBe(asc.indexOf(manualTx.bscTie!.tx_hash) - 1);
    expect(asc[0]).toBe(manualTx.early!.tx_hash);
    expect(asc.at(-1)).toBe(manualTx.plain!.tx_hash);
    const top = data.d.edges[0].node;
    expect(top).toMatchObject({
      chainName: 'eth', protocol: '', blockHeight: String(manualTx.plain!.block_height), positionInBlock: '3', from: alice, to: bob, op: '', tickName: '', amount: '0',
    });
  });

  it('address matches the sender or the recipient, case-insensitively', async () => {
    for (const address of [alice, bob, carol]) {
      for (const direction of ['ASC', 'DESC'] as const) {
        const data = await q(`query($a: String!, $d: OrderDirection!) {
          transactions(address: $a, direction: $d, first: 100) { totalCount edges { node { txHash } } } }`,
        { a: address.toLowerCase(), d: direction });
        const want = chainOrder((t) => lower(t.from_address) === lower(address) || lower(t.to_address) === lower(address), direction);
        expect(hashes(data.transactions)).toEqual(want);
        expect(data.transactions.totalCount).toBe(want.length);
      }
    }
  });

  it('filters by chain, protocol and tick (case-insensitive)', async () => {
    const data = await q(`query($a: String!) {
      chain: transactions(chain: "BSC", first: 100) { totalCount edges { node { txHash } } }
      protocol: transactions(protocol: "ERC-20", first: 100) { totalCount edges { node { txHash } } }
      tick: transactions(tick: "AVAX", first: 100, direction: ASC) { totalCount edges { node { txHash } } }
      all3: transactions(chain: "eth", protocol: "erc-20", tick: "eths", first: 100) { totalCount edges { node { txHash } } }
      addr: transactions(address: $a, chain: "eth", first: 100) { totalCount edges { node { txHash } } }
      ghost: transactions(tick: "ghost") { totalCount edges { node { txHash } } }
      none: transactions(chain: "fantom") { totalCount edges { node { txHash } } }
    }`, { a: alice });
    const check = (c: any, want: string[]) => {
      expect(hashes(c)).toEqual(want);
      expect(c.totalCount).toBe(want.length);
    };
    check(data.chain, chainOrder((t) => t.chain === 'bsc', 'DESC'));
    check(data.protocol, chainOrder((t) => t.protocol === 'erc-20', 'DESC'));
    check(data.tick, chainOrder((t) => t.tick === 'avax', 'ASC'));
    check(data.all3, chainOrder((t) => t.chain === 'eth' && t.protocol === 'erc-20' && t.tick === 'eths', 'DESC'));
    check(data.addr, chainOrder((t) => t.chain === 'eth' && (lower(t.from_address) === lower(alice) || lower(t.to_address) === lower(alice)), 'DESC'));
    check(data.ghost, [manualTx.ghost!.tx_hash]);
    check(data.none, []);
  });

  it('Transaction.tick is the indexed tick, null for a non-inscription or unindexed transaction', async () => {
    const data = await q(`{ transactions(first: 100) { edges { node { txHash tickName chain { chain } tick { tick chainName protocol } } } } }`);
    const byHash = new Map<string, any>(data.transactions.edges.map((e: any) => [e.node.txHash, e.node]));
    expect(byHash.get(manualTx.plain!.tx_hash)).toMatchObject({ tickName: '', tick: null, chain: { chain: 'eth' } });
    expect(byHash.get(manualTx.ghost!.tx_hash)).toMatchObject({ tickName: 'ghost', tick: null });
    expect(byHash.get(manualTx.bscTie!.tx_hash)).toMatchObject({ tick: { tick: 'bnbs', chainName: 'bsc', protocol: 'bsc-20' }, chain: { chain: 'bsc' } });
    for (const t of f.data.transactions.filter((x) => x.tick === 'avax')) {
      expect(byHash.get(t.tx_hash)).toMatchObject({ tick: { tick: 'avax', chainName: 'avalanche' }, chain: { chain: 'avalanche' } });
    }
  });

  it('returns amounts above 2^64, gas and dates exactly', async () => {
    const data = await q(`{ transactions(tick: "big") { edges { node { amount gas gasPrice status blockTime createdAt updatedAt op } } } }`);
    const t = f.data.transactions.find((x) => x.tick === 'big')!;
    expect(data.transactions.edges).toEqual([{
      node: {
        amount: BIG, gas: '21000', gasPrice: '25000000000', status: 1, op: 'mint',
        blockTime: t.block_time.replace(/\.000Z$/, 'Z'), createdAt: t.created_at.replace(/\.000Z$/, 'Z'), updatedAt: t.updated_at.replace(/\.000Z$/, 'Z'),
      },
    }]);
  });
});

// ---- nested connections -----------------------------------------------------------------------

describe('nested connections', () => {
  it('Tick.holders: positive balances by balance, the address breaking ties, both directions', async () => {
    const data = await q(`{
      avax: tick(chain: "avalanche", protocol: "asc-20", tick: "avax") {
        holders { totalCount edges { node { address balance available tick { tick } } } } }
      eths: tick(chain: "eth", protocol: "erc-20", tick: "eths") {
        d: holders { totalCount edges { node { address balance } } }
        a: holders(direction: ASC) { edges { node { address } } } }
      none: tick(chain: "eth", protocol: "erc-20", tick: "none") { holders { totalCount edges { node { address } } } }
    }`);
    expect(data.avax.holders).toEqual({
      totalCount: 3,
      edges: [
        { node: { address: alice, balance: '150', available: '150', tick: { tick: 'avax' } } },
        { node: { address: bob, balance: '100', available: '100', tick: { tick: 'avax' } } },
        { node: { address: carol, balance: '50', available: '50', tick: { tick: 'avax' } } },
      ],
    });
    // equal balances: address_key breaks the tie (0xbbbb… > 0xaaaa…)
    expect(data.eths.d).toEqual({ totalCount: 2, edges: [{ node: { address: bob, balance: '50' } }, { node: { address: alice, balance: '50' } }] });
    expect(data.eths.a.edges.map((e: any) => e.node.address)).toEqual([alice, bob]);
    // the zero balance of alice on "none" is not a holder
    expect(data.none.holders).toEqual({ totalCount: 0, edges: [] });
  });

  it('Tick.transactions: the tick\'s transactions in chain order, totalCount = tx count', async () => {
    const data = await q(`{
      ticks(first: 20, orderBy: ID, direction: ASC) { edges { node { tick chainName protocol stats { txCount }
        d: transactions(first: 10) { totalCount edges { node { txHash tickName } } }
        a: transactions(first: 10, direction: ASC) { edges { node { txHash } } } } } } }`);
    expect(data.ticks.edges).toHaveLength(f.data.ticks.length);
    for (const { node } of data.ticks.edges) {
      const own = f.data.transactions
        .map((t, i) => ({ t, i }))
        .filter(({ t }) => t.chain === node.chainName && t.protocol === node.protocol && t.tick === node.tick)
        .sort((x, y) => x.t.block_height - y.t.block_height || x.t.position_in_block - y.t.position_in_block || x.i - y.i)
        .map(({ t }) => t.tx_hash);
      expect(node.a.edges.map((e: any) => e.node.txHash), node.tick).toEqual(own);
      expect(node.d.edges.map((e: any) => e.node.txHash), node.tick).toEqual([...own].reverse());
      expect(node.d.totalCount, node.tick).toBe(own.length);
      expect(node.stats.txCount, node.tick).toBe(own.length);
    }
    const bnbs = data.ticks.edges.find((e: any) => e.node.tick === 'bnbs').node;
    const bnbsAsc = bnbs.a.edges.map((e: any) => e.node.txHash);
    expect(bnbsAsc).toHaveLength(4);
    expect(bnbsAsc[0]).toBe(manualTx.early!.tx_hash);
    expect(bnbsAsc.at(-1)).toBe(manualTx.bscTie!.tx_hash);
  });

  it('Chain.ticks: each chain\'s ticks, every order, totalCount per chain', async () => {
    const data = await q(`{ chains {
      chain
      byId: ticks(first: 100) { totalCount edges { node { tick chainName } } }
      byHolders: ticks(first: 100, orderBy: HOLDERS, direction: ASC) { edges { node { id stats { holders } } } }
    } }`);
    const byChain = new Map<string, any>(data.chains.map((c: any) => [c.chain, c]));
    for (const c of data.chains) {
      const own = f.data.ticks.filter((t) => t.chain === c.chain).map((t) => t.tick);
      expect(c.byId.totalCount, c.chain).toBe(own.length);
      // ID DESC: the fixture created them in array order
      expect(c.byId.edges.map((e: any) => e.node.tick), c.chain).toEqual([...own].reverse());
      for (const e of c.byId.edges) expect(e.node.chainName).toBe(c.chain);
      const holders = c.byHolders.edges.map((e: any) => [e.node.stats.holders, Number(e.node.id)]);
      expect(holders).toEqual([...holders].sort((x: number[], y: number[]) => x[0]! - y[0]! || x[1]! - y[1]!));
    }
    expect(byChain.get('eth').byId.edges.map((e: any) => e.node.tick)).toEqual(['big', 'none', 'eths']);
    expect(byChain.get('fantom').byId).toEqual({ totalCount: 0, edges: [] });
    expect(byChain.get('eth').byHolders.edges.map((e: any) => e.node.stats.holders)).toEqual([0, 1, 2]);
  });

  it('Chain.ticks with a small page per chain', async () => {
    const data = await q(`{ chains(names: ["polygon", "eth"]) { chain ticks(first: 2, direction: ASC) {
      edges { node { tick } } pageInfo { hasNextPage hasPreviousPage } } } }`);
    expect(data.chains).toEqual([
      { chain: 'eth', ticks: { edges: [{ node: { tick: 'eths' } }, { node: { tick: 'none' } }], pageInfo: { hasNextPage: true, hasPreviousPage: false } } },
      { chain: 'polygon', ticks: { edges: [{ node: { tick: 'a%b' } }, { node: { tick: 'a_b' } }], pageInfo: { hasNextPage: true, hasPreviousPage: false } } },
    ]);
  });
});
