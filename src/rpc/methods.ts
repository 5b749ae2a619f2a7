import { tickOrders } from '../domain/codes.js';
import { rpcErrors } from './errors.js';
import { eventCode, integer, isoTime, percent4, tickStatusCode, transferTypeCode, unixTime } from './format.js';
import { filter, type ParamSpec } from './params.js';

// The RPC method table: one declarative entry per method — its names, its positional params, the one
// GraphQL document it runs and how the result is reshaped into the exact v2 format (key order as in the
// spec). No SQL and no data access here: anything a method needs comes from the GraphQL schema.

export interface MethodSpec {
  /** Canonical name first, then aliases (renamed or older names). */
  names: readonly string[];
  /** Accepted positional layouts; the one whose length equals the params sent wins. */
  layouts: readonly (readonly ParamSpec[])[];
  document: string;
  variables(p: Record<string, any>): Record<string, unknown>;
  reshape(data: any, p: Record<string, any>): unknown;
}

const limit: ParamSpec = { name: 'limit', type: 'limit' };
const offset: ParamSpec = { name: 'offset', type: 'offset' };
const str = (name: string): ParamSpec => ({ name, type: 'string' });
const page = (p: Record<string, any>) => ({ first: p.limit, offset: p.offset });
const list = <T>(connection: { edges: { node: T }[] }) => connection.edges.map((e) => e.node);

// Selections shared by several methods.
export const tickListFields = `chainName protocol tick deployBy deployHash totalSupply limitPerMint transferType createdAt
  stats { minted holders txCount progress status }`;

/** Spec 2.1 */
export const tickListEntry = (t: any) => ({
  chain: t.chainName,
  protocol: t.protocol,
  tick: t.tick,
  deploy_by: t.deployBy,
  deploy_hash: t.deployHash,
  total_supply: t.totalSupply,
  minted_percent: percent4(t.stats.progress),
  limit_per_mint: t.limitPerMint,
  holders: t.stats.holders,
  transfer_type: transferTypeCode(t.transferType),
  status: tickStatusCode(t.stats.status),
  minted: t.stats.minted,
  tx_cnt: t.stats.txCount,
  created_at: unixTime(t.createdAt),
});

/** Spec 2.2 */
export const tickEntry = (t: any) => ({
  chain: t.chainName,
  protocol: t.protocol,
  tick: t.tick,
  name: t.name,
  limit_per_mint: t.limitPerMint,
  deploy_by: t.deployBy,
  total_supply: t.totalSupply,
  deploy_hash: t.deployHash,
  deploy_time: unixTime(t.deployTime),
  transfer_type: transferTypeCode(t.transferType),
  created_at: unixTime(t.createdAt),
  updated_at: unixTime(t.updatedAt),
  decimals: t.decimals,
});

export const transactionFields = `id: recordId chainName protocol blockHeight positionInBlock blockTime txHash from to op tickName amount
  gas gasPrice status createdAt updatedAt`;

/** Spec 2.7 */
export const transactionEntry = (x: any) => ({
  id: integer(x.id),
  chain: x.chainName,
  protocol: x.protocol,
  block_height: integer(x.blockHeight),
  position_in_block: x.positionInBlock,
  block_time: isoTime(x.blockTime),
  tx_hash: x.txHash,
  from: x.from,
  to: x.to,
  op: x.op,
  tick: x.tickName,
  amt: x.amount,
  gas: integer(x.gas),
  gas_price: integer(x.gasPrice),
  status: x.status,
  created_at: isoTime(x.createdAt),
  updated_at: isoTime(x.updatedAt),
});

/** Spec 2.6 */
export const movementEntry = (m: any) => ({
  chain: m.tick.chainName,
  protocol: m.tick.protocol,
  tick: m.tick.tick,
  address: m.address,
  tx_hash: m.txHash,
  amount: m.amount,
  event: eventCode(m.event),
  operate: m.operate,
  created_at: unixTime(m.createdAt),
  updated_at: unixTime(m.updatedAt),
});

const getTicksLayout: ParamSpec[] = [
  limit, offset, str('chain'), str('protocol'), str('tick'), str('deploy_by'),
  { name: 'sort', type: 'int', default: 0, oneOf: [0, 1, 2, 3, 4] },
  { name: 'sort_mode', type: 'direction' },
];

export const methods: MethodSpec[] = [
  {
    names: ['inds_getTicks', 'inds_getInscriptions'],
    layouts: [getTicksLayout],
    document: `query InscriptionTicks($first: Int!, $offset: Int!, $chain: String, $protocol: String, $tick: String,
        $deployBy: String, $orderBy: TickOrderField!, $direction: OrderDirection!) {
      ticks(first: $first, offset: $offset, chain: $chain, protocol: $protocol, tick: $tick, deployBy: $deployBy,
            orderBy: $orderBy, direction: $direction) {
        totalCount
        edges { node { ${tickListFields} } }
      }
    }`,
    variables: (p) => ({
      ...page(p), chain: filter(p.chain), protocol: filter(p.protocol), tick: filter(p.tick), deployBy: filter(p.deploy_by),
      orderBy: tickOrders[p.sort], direction: p.sort_mode,
    }),
    reshape: (d, p) => ({ inscriptions: list(d.ticks).map(tickListEntry), total: d.ticks.totalCount, limit: p.limit, offset: p.offset }),
  },

  {
    names: ['inds_getTransactionByAddress'],
    layouts: [
      [limit, offset, str('address'), str('chain'), str('protocol'), str('tick'), { name: 'event', type: 'int', oneOf: [0, 1, 2, 3] }],
      // clients in the field also send a search key before the event type
      [limit, offset, str('address'), str('chain'), str('protocol'), str('tick'), str('key'), { name: 'event', type: 'int', oneOf: [0, 1, 2, 3] }],
    ],
    document: `query AddressTransactions($first: Int!, $offset: Int!, $address: String!, $chain: String, $protocol: String,
        $tick: String, $search: String, $event: MovementEventFilter!) {
      addressTransactions(first: $first, offset: $offset, address: $address, chain: $chain, protocol: $protocol,
                          tick: $tick, search: $search, event: $event) {
        totalCount
        edges { node { address txHash amount event operate createdAt updatedAt tick { chainName protocol tick } } }
      }
    }`,
    variables: (p) => ({
      ...page(p), address: p.address, chain: filter(p.chain), protocol: filter(p.protocol), tick: filter(p.tick),
      search: filter(p.key ?? ''), event: ['ALL', 'DEPLOY', 'MINT', 'TRANSFER'][p.event],
    }),
    reshape: (d, p) => ({
      transactions: list<any>(d.addressTransactions).map(movementEntry),
      total: d.addressTransactions.totalCount,
      limit: p.limit,
      offset: p.offset,
    }),
  },

  {
    names: ['inds_getBalancesByAddress', 'inds_getBalanceByAddress'],
    layouts: [[limit, offset, str('address'), str('chain'), str('protocol'), str('tick'), str('key'), { name: 'sort', type: 'direction' }]],
    document: `query AddressBalances($first: Int!, $offset: Int!, $address: String!, $chain: String, $protocol: String,
        $tick: String, $search: String, $direction: OrderDirection!) {
      balances(first: $first, offset: $offset, address: $address, chain: $chain, protocol: $protocol, tick: $tick,
               search: $search, direction: $direction) {
        totalCount
        edges { node { address balance tick { chainName protocol tick deployHash transferType } } }
      }
    }`,
    variables: (p) => ({
      ...page(p), address: p.address, chain: filter(p.chain), protocol: filter(p.protocol), tick: filter(p.tick),
      search: filter(p.key), direction: p.sort,
    }),
    reshape: (d, p) => ({
      inscriptions: list<any>(d.balances).map((b) => ({
        chain: b.tick.chainName,
        protocol: b.tick.protocol,
        tick: b.tick.tick,
        address: b.address,
        balance: b.balance,
        deploy_hash: b.tick.deployHash,
        transfer_type: transferTypeCode(b.tick.transferType),
      })),
      total: d.balances.totalCount,
      limit: p.limit,
      offset: p.offset,
    }),
  },

  {
    names: ['inds_getHoldersByTick'],
    layouts: [[limit, offset, str('chain'), str('protocol'), str('tick'), { name: 'sort', type: 'direction' }]],
    document: `query TickHolders($first: Int!, $offset: Int!, $chain: String!, $protocol: String!, $tick: String!,
        $direction: OrderDirection!) {
      tick(chain: $chain, protocol: $protocol, tick: $tick) {
        chainName protocol tick deployHash totalSupply
        holders(first: $first, offset: $offset, direction: $direction) {
          totalCount
          edges { node { address balance } }
        }
      }
    }`,
    variables: (p) => ({ ...page(p), chain: p.chain, protocol: p.protocol, tick: p.tick, direction: p.sort }),
    reshape: (d, p) => {
      const t = d.tick;
      if (!t) throw rpcErrors.notFound(`no tick ${p.tick} of ${p.protocol} on ${p.chain}`);
      return {
        holders: list<any>(t.holders).map((h) => ({
          chain: t.chainName,
          protocol: t.protocol,
          tick: t.tick,
          deploy_hash: t.deployHash,
          address: h.address,
          balance: h.balance,
          total_supply: t.totalSupply,
        })),
        total: t.holders.totalCount,
        limit: p.limit,
        offset: p.offset,
      };
    },
  },

  {
    names: ['index_getInscriptionByTick'],
    layouts: [[str('chain'), str('protocol'), str('tick')]],
    document: `query InscriptionByTick($chain: String!, $protocol: String!, $tick: String!) {
      tick(chain: $chain, protocol: $protocol, tick: $tick) {
        chainName protocol tick name limitPerMint deployBy totalSupply deployHash deployTime transferType
        createdAt updatedAt decimals
      }
    }`,
    variables: (p) => ({ chain: p.chain, protocol: p.protocol, tick: p.tick }),
    reshape: (d, p) => {
      const t = d.tick;
      if (!t) throw rpcErrors.notFound(`no tick ${p.tick} of ${p.protocol} on ${p.chain}`);
      return tickEntry(t);
    },
  },

  {
    names: ['inds_getTransactions'],
    layouts: [[limit, offset, str('address'), str('chain'), str('protocol'), str('tick'), { name: 'sortmode', type: 'direction' }]],
    document: `query Transactions($first: Int!, $offset: Int!, $address: String, $chain: String, $protocol: String,
        $tick: String, $direction: OrderDirection!) {
      transactions(first: $first, offset: $offset, address: $address, chain: $chain, protocol: $protocol, tick: $tick,
                   direction: $direction) {
        totalCount
        edges { node { ${transactionFields} } }
      }
    }`,
    variables: (p) => ({
      ...page(p), address: filter(p.address), chain: filter(p.chain), protocol: filter(p.protocol), tick: filter(p.tick),
      direction: p.sortmode,
    }),
    reshape: (d, p) => ({
      data: list<any>(d.transactions).map(transactionEntry),
      total: d.transactions.totalCount,
      limit: p.limit,
      offset: p.offset,
      code: 0,
      msg: 0,
    }),
  },

  {
    names: ['inds_getTickBriefs'],
    layouts: [[{ name: 'selectors', type: 'selectors' }]],
    document: `query TickBriefs($selectors: [TickSelector!]!) {
      ticksByDeployHash(selectors: $selectors) {
        id: recordId chainName protocol tick name limitPerMint deployBy totalSupply deployHash deployTime transferType
        createdAt updatedAt decimals stats { holders minted txCount progress }
      }
    }`,
    variables: (p) => ({ selectors: p.selectors }),
    reshape: (d) => ({
      inscriptions: d.ticksByDeployHash.map((t: any) => ({
        id: integer(t.id),
        chain: t.chainName,
        protocol: t.protocol,
        tick: t.tick,
        name: t.name,
        limit_per_mint: t.limitPerMint,
        deploy_by: t.deployBy,
        total_supply: t.totalSupply,
        deploy_hash: t.deployHash,
        deploy_time: isoTime(t.deployTime),
        transfer_type: transferTypeCode(t.transferType),
        created_at: isoTime(t.createdAt),
        updated_at: isoTime(t.updatedAt),
        decimals: t.decimals,
        holders: t.stats.holders,
        minted: t.stats.minted,
        tx_cnt: t.stats.txCount,
        progress: t.stats.progress,
      })),
    }),
  },

  {
    names: ['inds_getAllChains', 'inds_getAllChain'],
    layouts: [[{ name: 'chains', type: 'strings' }]],
    document: `query AllChains($names: [String!]) {
      chains(names: $names) { chainId chain outerChain name logo networkId ext latestBlock { number time indexedAt } }
    }`,
    variables: (p) => ({ names: p.chains }),
    reshape: (d) =>
      d.chains.map((c: any) => ({
        chain_id: c.chainId,
        chain: c.chain,
        outer_chain: c.outerChain,
        name: c.name,
        logo: c.logo,
        network_id: c.networkId,
        ext: c.ext,
        block_number: c.latestBlock?.number ?? '0',
        block_time: isoTime(c.latestBlock?.time ?? null),
        timestamp: isoTime(c.latestBlock?.indexedAt ?? null),
      })),
  },
];
