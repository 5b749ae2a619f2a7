// The side-by-side mix of `npm run bench:peer`: page-1 GraphQL scenarios of bench/lib/scenarios.ts, each with the
// same request expressed in PostGraphile v5's schema of the same database (bench/peer/server.ts), and, for each
// side, what its answer says in common terms — the keys, counters, amounts and totals both carry — so that the
// two answers can be compared (numbers as exact decimals without trailing zeros, times as ISO instants).
// Scenarios without a natural PostGraphile twin are left out: the transactions of an address (from OR to: not a
// condition PostGraphile offers without the filter plugin), deep pages and cursors (a benchmark of offsets and
// of cursors that differ between the two).
import { isDeepStrictEqual } from 'node:util';
import type { Fixture, Scenario } from './scenarios.js';

export interface PeerScenario {
  /** Our scenario's name in bench/lib/scenarios.ts (its request is sent to our /graphql as is). */
  name: string;
  /** What a reader of the table calls it. */
  label: string;
  /**
   * A cheap query: little database work on either side, so the servers' own cost decides (issue 28's target,
   * ours ≥ 1.0× theirs on each and a median ≥ 1.3×, is for these). Not cheap: a totalCount PostGraphile counts over 10⁵–10⁶ rows where we read a
   * counter.
   */
  cheap: boolean;
  ours: Scenario;
  /** The request posted to PostGraphile's /graphql. */
  theirsBody: string;
  /** The common content of each side's `data`. */
  oursData(data: any): unknown;
  theirsData(data: any): unknown;
}

/** An exact decimal as text without trailing zeros ("1.500" → "1.5", "2.0" → "2"); null stays null. */
export function decimal(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  const s = String(v);
  if (!s.includes('.')) return s;
  return s.replace(/0+$/, '').replace(/\.$/, '');
}

/** An instant as ISO 8601 UTC ("2024-02-05T13:32:15+00:00" and "2024-02-05T13:32:15Z" are the same). */
export function instant(v: unknown): string | null {
  if (v === null || v === undefined) return null;
  return new Date(String(v)).toISOString();
}

const tickRow = (t: { chain: string; protocol: string; tick: string }) => `${t.chain}/${t.protocol}/${t.tick}`;

// -- ticks ------------------------------------------------------------------------------------------------

const theirTicks = `query Ticks($first: Int!, $offset: Int!, $orderBy: [TickOrderBy!], $condition: TickCondition) {
  allTicks(first: $first, offset: $offset, orderBy: $orderBy, condition: $condition) {
    totalCount
    nodes { chain protocol tick deployBy deployHash totalSupply limitPerMint transferType createdAt minted holders txCnt progress }
  }
}`;

const tickStats = (t: any, s: { minted: unknown; holders: unknown; txCount: unknown; progress: unknown }) => ({
  tick: tickRow(t),
  deployBy: t.deployBy,
  deployHash: t.deployHash,
  totalSupply: decimal(t.totalSupply),
  limitPerMint: decimal(t.limitPerMint),
  createdAt: instant(t.createdAt),
  minted: decimal(s.minted),
  holders: String(s.holders),
  txCount: String(s.txCount),
  progress: decimal(s.progress),
});

const ourTickList = (d: any) => ({
  total: d.ticks.totalCount,
  rows: d.ticks.edges.map(({ node: t }: any) => tickStats({ ...t, chain: t.chainName }, t.stats)),
});
const theirTickList = (d: any) => ({
  total: d.allTicks.totalCount,
  rows: d.allTicks.nodes.map((t: any) => tickStats(t, { ...t, txCount: t.txCnt })),
});

const tickDetail = (t: any) =>
  t && {
    tick: tickRow(t),
    name: t.name,
    deployBy: t.deployBy,
    deployHash: t.deployHash,
    totalSupply: decimal(t.totalSupply),
    limitPerMint: decimal(t.limitPerMint),
    deployTime: instant(t.deployTime),
    createdAt: instant(t.createdAt),
    updatedAt: instant(t.updatedAt),
    decimals: t.decimals,
  };

const theirTick = `query Tick($chain: String!, $protocol: String!, $tick: String!) {
  tickByChainAndProtocolAndTick(chain: $chain, protocol: $protocol, tick: $tick) {
    chain protocol tick name limitPerMint deployBy totalSupply deployHash deployTime transferType createdAt updatedAt decimals
  }
}`;

// -- holders and balances ----------------------------------------------------------------------------------

const theirHolders = `query TickHolders($first: Int!, $offset: Int!, $chain: String!, $protocol: String!, $tick: String!) {
  tickByChainAndProtocolAndTick(chain: $chain, protocol: $protocol, tick: $tick) {
    chain protocol tick deployHash totalSupply
    balancesByTickId(first: $first, offset: $offset, condition: { holding: true }, orderBy: [BALANCE_DESC, ADDRESS_KEY_DESC]) {
      totalCount
      nodes { address balance }
    }
  }
}`;

const holders = (t: any, page: any, nodes: any[]) => ({
  tick: tickRow(t),
  deployHash: t.deployHash,
  totalSupply: decimal(t.totalSupply),
  total: page.totalCount,
  rows: nodes.map((h) => [h.address, decimal(h.balance)]),
});

const theirBalances = `query AddressBalances($first: Int!, $offset: Int!, $addressKey: String!) {
  allBalances(first: $first, offset: $offset, condition: { addressKey: $addressKey, holding: true }, orderBy: [BALANCE_DESC, TICK_ID_DESC]) {
    totalCount
    nodes { address balance tickByTickId { chain protocol tick deployHash transferType } }
  }
}`;

const theirMovements = `query AddressTransactions($first: Int!, $offset: Int!, $addressKey: String!) {
  allAddressTxes(first: $first, offset: $offset, condition: { addressKey: $addressKey }, orderBy: [ROW_ID_DESC]) {
    totalCount
    nodes { address txHash amount event operate createdAt updatedAt tickByTickId { chain protocol tick } }
  }
}`;

const movement = (m: any, tick: any) => ({
  address: m.address,
  txHash: m.txHash,
  amount: decimal(m.amount),
  operate: m.operate,
  createdAt: instant(m.createdAt),
  updatedAt: instant(m.updatedAt),
  tick: tickRow(tick),
});

// -- transactions and chains -------------------------------------------------------------------------------

const theirTransactions = `query Transactions($first: Int!, $offset: Int!) {
  allTransactions(first: $first, offset: $offset, orderBy: [BLOCK_HEIGHT_DESC, POSITION_IN_BLOCK_DESC, ROW_ID_DESC]) {
    totalCount
    nodes { rowId chain protocol blockHeight positionInBlock blockTime txHash fromAddress toAddress op tick amt gas gasPrice status createdAt updatedAt }
  }
}`;

const transaction = (x: any) => ({
  id: String(x.id),
  chain: x.chain,
  protocol: x.protocol,
  blockHeight: String(x.blockHeight),
  positionInBlock: String(x.positionInBlock),
  blockTime: instant(x.blockTime),
  txHash: x.txHash,
  from: x.from,
  to: x.to,
  op: x.op,
  tick: x.tick,
  amount: decimal(x.amount),
  gas: String(x.gas),
  gasPrice: String(x.gasPrice),
  status: x.status,
  createdAt: instant(x.createdAt),
});

const theirChains = `query AllChains {
  allChains(orderBy: [DISPLAY_ORDER_ASC]) {
    nodes { chainId chain outerChain name logo networkId ext indexedBlockByChain { blockNumber blockTime indexedAt } }
  }
}`;

const chain = (c: any, b: any) => ({
  chain: c.chain,
  chainId: String(c.chainId),
  outerChain: c.outerChain,
  name: c.name,
  networkId: String(c.networkId),
  latest: b && { number: String(b.number), time: instant(b.time), indexedAt: instant(b.indexedAt) },
});

/** inds_getTickBriefs's ten (chain, deploy hash) look-ups: one aliased field each (the `@unique` smart tag's look-up). */
function theirBriefs(f: Fixture): string {
  const fields = f.briefs.map((_, i) =>
    `t${i}: tickByChainAndDeployHashKey(chain: $c${i}, deployHashKey: $h${i}) {
    rowId chain protocol tick name limitPerMint deployBy totalSupply deployHash deployTime transferType createdAt updatedAt decimals
    holders minted txCnt progress
  }`);
  const params = f.briefs.map((_, i) => `$c${i}: String!, $h${i}: String!`).join(', ');
  return `query TickBriefs(${params}) {\n  ${fields.join('\n  ')}\n}`;
}

const brief = (t: any, s: { holders: unknown; minted: unknown; txCount: unknown; progress: unknown }) =>
  t && { id: String(t.id), ...tickDetail(t), holders: String(s.holders), minted: decimal(s.minted), txCount: String(s.txCount), progress: decimal(s.progress) };

/**
 * bench:peer's answers-equal step: the common content of our reply and of PostGraphile's (each the text of a
 * successful reply) must be the same; null when it is, else a message showing both.
 */
export function answersDiffer(s: PeerScenario, ours: string, theirs: string): string | null {
  const a = s.oursData((JSON.parse(ours) as { data: unknown }).data);
  const b = s.theirsData((JSON.parse(theirs) as { data: unknown }).data);
  if (isDeepStrictEqual(a, b)) return null;
  return `${s.name}: the two answers differ\nours:   ${JSON.stringify(a)}\ntheirs: ${JSON.stringify(b)}`;
}

const body = (query: string, variables: Record<string, unknown>) => JSON.stringify({ query, variables });

/** The peer mix for a fixture; `ours` are the scenarios of buildScenarios(fixture). */
export function buildPeerScenarios(f: Fixture, ours: readonly Scenario[]): PeerScenario[] {
  const find = (name: string) => {
    const s = ours.find((o) => o.name === name);
    if (!s) throw new Error(`bench/lib/scenarios.ts has no scenario ${name}`);
    return s;
  };
  const t = f.biggestTick;
  const addressKey = f.busiestAddress.toLowerCase();
  const page = { first: 10, offset: 0 };
  const out: PeerScenario[] = [];
  out.push({
    name: 'gql getInscriptionByTick', label: 'one tick by key', cheap: true, ours: find('gql getInscriptionByTick'),
    theirsBody: body(theirTick, { chain: t.chain, protocol: t.protocol, tick: t.tick }),
    oursData: (d) => tickDetail({ ...d.tick, chain: d.tick?.chainName }),
    theirsData: (d) => tickDetail(d.tickByChainAndProtocolAndTick),
  });
  const sorts: [string, string, string][] = [
    ['holders', 'HOLDERS_DESC', '10 ticks by holders + totalCount'],
    ['id', 'ROW_ID_DESC', '10 ticks by id + totalCount'],
    ['deploy_time', 'DEPLOY_TIME_DESC', '10 ticks by deploy time + totalCount'],
    ['progress', 'PROGRESS_DESC', '10 ticks by progress + totalCount'],
    ['tx_count', 'TX_CNT_DESC', '10 ticks by tx count + totalCount'],
  ];
  for (const [sort, orderBy, label] of sorts) {
    out.push({
      name: `gql getTicks/${sort}`, label, cheap: true, ours: find(`gql getTicks/${sort}`),
      theirsBody: body(theirTicks, { ...page, orderBy: orderBy === 'ROW_ID_DESC' ? [orderBy] : [orderBy, 'ROW_ID_DESC'] }),
      oursData: ourTickList, theirsData: theirTickList,
    });
  }
  out.push({
    name: `gql getInscriptions/${f.busiestChain}`, label: `10 ${f.busiestChain} ticks by holders + totalCount`, cheap: true,
    ours: find(`gql getInscriptions/${f.busiestChain}`),
    theirsBody: body(theirTicks, { ...page, orderBy: ['HOLDERS_DESC', 'ROW_ID_DESC'], condition: { chain: f.busiestChain } }),
    oursData: ourTickList, theirsData: theirTickList,
  });
  out.push({
    name: 'gql getHoldersByTick', label: `10 holders of the biggest tick + totalCount (${t.holders.toLocaleString('en-US')})`, cheap: false,
    ours: find('gql getHoldersByTick'),
    theirsBody: body(theirHolders, { ...page, chain: t.chain, protocol: t.protocol, tick: t.tick }),
    oursData: (d) => holders({ ...d.tick, chain: d.tick.chainName }, d.tick.holders, d.tick.holders.edges.map((e: any) => e.node)),
    theirsData: (d) => {
      const x = d.tickByChainAndProtocolAndTick;
      return holders(x, x.balancesByTickId, x.balancesByTickId.nodes);
    },
  });
  out.push({
    name: 'gql getBalancesByAddress', label: "10 balances of the busiest address + totalCount", cheap: true,
    ours: find('gql getBalancesByAddress'),
    theirsBody: body(theirBalances, { ...page, addressKey }),
    oursData: (d) => ({
      total: d.balances.totalCount,
      rows: d.balances.edges.map(({ node: b }: any) => [b.address, decimal(b.balance), tickRow({ ...b.tick, chain: b.tick.chainName }), b.tick.deployHash]),
    }),
    theirsData: (d) => ({
      total: d.allBalances.totalCount,
      rows: d.allBalances.nodes.map((b: any) => [b.address, decimal(b.balance), tickRow(b.tickByTickId), b.tickByTickId.deployHash]),
    }),
  });
  out.push({
    name: 'gql getTransactionByAddress', label: '10 movements of the busiest address + totalCount', cheap: true,
    ours: find('gql getTransactionByAddress'),
    theirsBody: body(theirMovements, { ...page, addressKey }),
    oursData: (d) => ({
      total: d.addressTransactions.totalCount,
      rows: d.addressTransactions.edges.map(({ node: m }: any) => movement(m, { ...m.tick, chain: m.tick.chainName })),
    }),
    theirsData: (d) => ({
      total: d.allAddressTxes.totalCount,
      rows: d.allAddressTxes.nodes.map((m: any) => movement(m, m.tickByTickId)),
    }),
  });
  out.push({
    name: 'gql getTransactions', label: '10 newest transactions + totalCount (2 M at scale 0.1)', cheap: false,
    ours: find('gql getTransactions'),
    theirsBody: body(theirTransactions, page),
    oursData: (d) => ({
      total: d.transactions.totalCount,
      rows: d.transactions.edges.map(({ node: x }: any) => transaction({ ...x, chain: x.chainName, tick: x.tickName })),
    }),
    theirsData: (d) => ({
      total: d.allTransactions.totalCount,
      rows: d.allTransactions.nodes.map((x: any) =>
        transaction({ ...x, id: x.rowId, from: x.fromAddress, to: x.toAddress, amount: x.amt })),
    }),
  });
  out.push({
    name: 'gql getTickBriefs', label: '10 ticks by (chain, deploy hash)', cheap: true,
    ours: find('gql getTickBriefs'),
    theirsBody: body(theirBriefs(f), Object.fromEntries(f.briefs.flatMap((b, i) => [[`c${i}`, b.chain], [`h${i}`, b.deploy_hash.toLowerCase()]]))),
    oursData: (d) => d.ticksByDeployHash.map((x: any) => brief({ ...x, chain: x.chainName }, x.stats)),
    theirsData: (d) => f.briefs.map((_, i) => {
      const x = d[`t${i}`];
      return brief(x && { ...x, id: x.rowId }, x && { ...x, txCount: x.txCnt });
    }),
  });
  out.push({
    name: 'gql getAllChains', label: 'all chains with their latest block', cheap: true,
    ours: find('gql getAllChains'),
    theirsBody: body(theirChains, {}),
    oursData: (d) => d.chains.map((c: any) => chain(c, c.latestBlock)),
    theirsData: (d) =>
      d.allChains.nodes.map((c: any) =>
        chain(c, c.indexedBlockByChain && { number: c.indexedBlockByChain.blockNumber, time: c.indexedBlockByChain.blockTime, indexedAt: c.indexedBlockByChain.indexedAt })),
  });
  return out;
}
