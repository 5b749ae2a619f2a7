import { chainList, method, required, type MethodSpec } from '../declaration.js';
import { rpcErrors, type RpcError } from '../errors.js';
import { integer, isoTime, unixTime } from '../format.js';
import { array, count, listOf, object, ref, str } from './schemas.js';

// The chain methods: the indexed chains, their latest blocks, totals and recent activity.

/** "Record not found" naming the chains that do not exist. */
function unknownChains(names: readonly string[]): RpcError {
  const reason = `unknown chain${names.length > 1 ? 's' : ''}: ${names.join(', ')}`;
  return { ...rpcErrors.notFound(reason), data: { reason, chains: [...names] } };
}

/** The requested chain names (case-insensitive) that the reply does not contain. */
function missingChains(requested: readonly string[], found: readonly { chain: string }[]): string[] {
  const have = new Set(found.map((c) => c.chain));
  return [...new Set(requested.filter((n) => !have.has(n.toLowerCase())))];
}

const zeroGoTime = '0001-01-01 00:00:00 +0000 UTC';
/** Go's time.Time String() of a UTC instant, second precision: `2024-01-16 10:18:46 +0000 UTC`. */
const goTime = (iso: string | null): string =>
  iso == null ? zeroGoTime : `${iso.slice(0, 10)} ${iso.slice(11, 19)} +0000 UTC`;

const windowFields = 'transactions addresses ticks';

/** A chain and its latest indexed block, in the v2 key order; inds_getChain adds its totals after. */
interface ChainNode {
  chainId: number; chain: string; outerChain: string; name: string; logo: string; networkId: number; ext: string;
  latestBlock: { number: string; time: string | null; indexedAt: string | null } | null;
}
const chainEntry = (c: ChainNode) => ({
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
});

export const chainMethods: MethodSpec[] = [
  method({
    names: ['inds_getAllChains', 'inds_getAllChain'],
    layouts: [[chainList]],
    document: `query AllChains($names: [String!]) {
      chains(names: $names) { chainId chain outerChain name logo networkId ext latestBlock { number time indexedAt } }
    }`,
    variables: (p) => ({ names: p.chains }),
    reshape: (d) =>
      d.chains.map(chainEntry),
    doc: {
      summary: 'Indexed chains with their latest indexed block, in display order.',
      result: listOf('Chain'),
      examples: [{ name: 'all', params: [[]] }],
    },
    aliases: { inds_getAllChain: { summary: 'Alias of inds_getAllChains (its name before a rename).' } },
  }),

  method({
    // an empty list means every chain; a chain with no indexed block yet answers "0" and the zero time
    names: ['inds_getLastBlockNumberIndexed'],
    layouts: [[chainList]],
    document: `query LastBlockNumbers($names: [String!]) { chains(names: $names) { chain latestBlock { number time } } }`,
    variables: (p) => ({ names: p.chains }),
    reshape: (d, p) => {
      const missing = missingChains(p.chains, d.chains);
      if (missing.length > 0) throw unknownChains(missing);
      return d.chains.map((c) => ({
        chain: c.chain,
        block_number: c.latestBlock?.number ?? '0',
        block_time: goTime(c.latestBlock?.time ?? null),
        timestamp: unixTime(c.latestBlock?.time ?? null),
      }));
    },
    doc: {
      summary: 'Latest indexed block per chain.',
      description: 'An empty list means every chain (display order). A chain that has indexed nothing yet answers block_number ' +
        '"0", the zero time and timestamp 0. An unknown chain is -32603 naming it (data.chains).',
      result: array(object({ chain: str(), block_number: str({ pattern: '^[0-9]+$' }), block_time: ref('GoTime'), timestamp: ref('UnixTime') })),
      notFound: 'a chain does not exist',
      examples: [{ name: 'avalanche', params: [['avalanche']] }],
    },
  }),

  method({
    // spec 2.8 of the chain, then its totals
    names: ['inds_chainInfo'],
    layouts: [[required('chain')]],
    document: `query ChainInfo($name: String!) {
      chain(name: $name) {
        chainId chain outerChain name logo networkId ext latestBlock { number time indexedAt }
        figures { tickCount addressCount deployCount mintCount transferCount transactionCount }
      }
    }`,
    variables: (p) => ({ name: p.chain }),
    reshape: (d, p) => {
      const c = d.chain;
      if (!c) throw unknownChains([p.chain]);
      return {
        ...chainEntry(c),
        tick_count: c.figures.tickCount,
        address_count: c.figures.addressCount,
        deploy_count: c.figures.deployCount,
        mint_count: c.figures.mintCount,
        transfer_count: c.figures.transferCount,
        transaction_count: c.figures.transactionCount,
      };
    },
    doc: {
      summary: 'A chain with its totals.',
      description: 'tick_count = ticks deployed; address_count = distinct addresses holding a positive balance; deploy/mint/' +
        'transfer_count = transactions by operation; transaction_count = all indexed transactions of the chain. Computed from ' +
        'the read model on each call. An unknown chain is -32603.',
      result: object({
        chain_id: count, chain: str(), outer_chain: str(), name: str(), logo: str(), network_id: count, ext: str(),
        block_number: str({ pattern: '^[0-9]+$' }), block_time: ref('IsoTime'), timestamp: ref('IsoTime'), tick_count: count,
        address_count: count, deploy_count: count, mint_count: count, transfer_count: count, transaction_count: count,
      }),
      notFound: 'the chain does not exist',
      examples: [{ name: 'avalanche', params: ['avalanche'] }],
    },
  }),

  method({
    // the last 24 h of each chain's indexed activity against the 24 h before; *_change is the percent
    // change as a string with two decimals, null when the previous window is empty
    names: ['inds_chainStat'],
    layouts: [[chainList]],
    document: `query ChainStat($names: [String!]) {
      chains(names: $names) {
        chainId chain name logo
        activity { windowEnd current { ${windowFields} } previous { ${windowFields} } change { ${windowFields} } }
      }
    }`,
    variables: (p) => ({ names: p.chains }),
    reshape: (d, p) => {
      const missing = missingChains(p.chains, d.chains);
      if (missing.length > 0) throw unknownChains(missing);
      return d.chains.map((c) => {
        const a = c.activity;
        return {
          chain_id: c.chainId,
          chain: c.chain,
          name: c.name,
          logo: c.logo,
          window_end: isoTime(a.windowEnd),
          address_24h: a.current.addresses,
          address_24h_previous: a.previous.addresses,
          address_24h_change: a.change.addresses,
          tick_24h: a.current.ticks,
          tick_24h_previous: a.previous.ticks,
          tick_24h_change: a.change.ticks,
          transaction_24h: a.current.transactions,
          transaction_24h_previous: a.previous.transactions,
          transaction_24h_change: a.change.transactions,
        };
      });
    },
    doc: {
      summary: "The last 24 h of each chain's indexed activity compared with the 24 h before.",
      description: "Windows end at window_end, the block time of the chain's newest indexed transaction (not the wall clock): " +
        'current = (end - 24 h, end], previous = (end - 48 h, end - 24 h]. address = distinct senders and recipients, tick = ' +
        'distinct ticks touched, transaction = transactions; *_change = percent change (string, two decimals, null when the ' +
        'previous window is empty). An empty list means every chain; an unknown chain is -32603 naming it.',
      result: array(object({
        chain_id: count, chain: str(), name: str(), logo: str(), window_end: ref('IsoTime'),
        address_24h: count, address_24h_previous: count, address_24h_change: ref('PercentChange'),
        tick_24h: count, tick_24h_previous: count, tick_24h_change: ref('PercentChange'),
        transaction_24h: count, transaction_24h_previous: count, transaction_24h_change: ref('PercentChange'),
      })),
      notFound: 'a chain does not exist',
      examples: [{ name: 'avalanche-and-btc', params: [['avalanche', 'btc']] }],
    },
  }),

  method({
    // the newest 10 blocks of the chain that hold indexed transactions, newest first
    names: ['inds_chainBlockStat'],
    layouts: [[required('chain')]],
    document: `query ChainBlockStat($name: String!) {
      chain(name: $name) { chain recentBlocks(last: 10) { height time tickCount transactionCount addressCount } }
    }`,
    variables: (p) => ({ name: p.chain }),
    reshape: (d, p) => {
      if (!d.chain) throw unknownChains([p.chain]);
      return d.chain.recentBlocks.map((b) => ({
        block_height: integer(b.height),
        block_time: isoTime(b.time),
        tick_count: b.tickCount,
        transaction_count: b.transactionCount,
        address_count: b.addressCount,
      }));
    },
    doc: {
      summary: 'Activity of the newest 10 blocks of a chain that hold indexed transactions, newest first.',
      result: array(object({
        block_height: count, block_time: ref('IsoTime'), tick_count: count, transaction_count: count, address_count: count,
      })),
      notFound: 'the chain does not exist',
      examples: [{ name: 'avalanche', params: ['avalanche'] }],
    },
  }),
];
