import { rpcErrors, type RpcError } from './errors.js';
import { eventCode, integer, isoTime, transferTypeCode, unixTime } from './format.js';
import { movementEntry, tickEntry, tickListEntry, tickListFields, transactionEntry, transactionFields, type MethodSpec } from './methods.js';
import { filter, type ParamSpec } from './params.js';

// The v2 methods beyond the eight of the spec (reference notes §6), in the same declarative form as
// src/rpc/methods.ts: names, positional params, one GraphQL document, reshape into the wire format.
// Shapes follow the existing service where it is known; where it is silent or defective the choice is
// documented on the entry (and in README.md and schema/openrpc.json).

const str = (name: string): ParamSpec => ({ name, type: 'string' });
const chains: ParamSpec = { name: 'chains', type: 'strings' };

/** Params that must not be empty: a -32602 naming the 1-based position and the name. */
export function requireParams(p: Record<string, any>, layout: readonly ParamSpec[], names: readonly string[]): void {
  for (const name of names) {
    if (p[name] !== '') continue;
    const position = layout.findIndex((s) => s.name === name) + 1;
    throw rpcErrors.invalidParams(`parameter #${position} '${name}' must not be empty`, { position, name });
  }
}

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
export const goTime = (iso: string | null): string =>
  iso == null ? zeroGoTime : `${iso.slice(0, 10)} ${iso.slice(11, 19)} +0000 UTC`;

// Selections and entries shared by several methods.
export const tickDetailFields = `chainName protocol tick name limitPerMint deployBy totalSupply deployHash deployTime
  transferType createdAt updatedAt decimals stats { minted holders txCount progress }`;

/** Spec 2.2 plus the live stats (the existing service's InscriptionInfo, in its key order). */
export const tickDetailEntry = (t: any) => ({
  ...tickEntry(t),
  minted: t.stats.minted,
  holders: t.stats.holders,
  tx_cnt: t.stats.txCount,
  progress: t.stats.progress,
});

const windowFields = 'transactions addresses ticks';

const getTickLayout = [str('chain'), str('protocol'), str('tick'), str('deploy_hash')];
const addressBalanceLayout = [str('address'), str('chain'), str('protocol'), str('tick')];
const chainLayout = [str('chain')];
const callDataLayout = [str('chain'), str('call_data')];
const txByHashLayout = [str('chain'), str('tx_hash')];

export const moreMethods: MethodSpec[] = [
  {
    // any identifier may be empty; the ones given must pick exactly one tick
    names: ['inds_getTick'],
    layouts: [getTickLayout],
    document: `query Tick($chain: String, $protocol: String, $tick: String, $deployHash: String) {
      findTick(chain: $chain, protocol: $protocol, tick: $tick, deployHash: $deployHash) { ${tickDetailFields} }
    }`,
    variables: (p) => ({ chain: filter(p.chain), protocol: filter(p.protocol), tick: filter(p.tick), deployHash: filter(p.deploy_hash) }),
    reshape: (d, p) => {
      if (!d.findTick) {
        const given = getTickLayout.filter((s) => p[s.name] !== '').map((s) => `${s.name} ${p[s.name]}`);
        throw rpcErrors.notFound(`no tick with ${given.join(', ')}`);
      }
      return tickDetailEntry(d.findTick);
    },
  },

  {
    // an empty list means every chain; a chain with no indexed block yet answers "0" and the zero time
    names: ['inds_getLastBlockNumberIndexed'],
    layouts: [[chains]],
    document: `query LastBlockNumbers($names: [String!]) { chains(names: $names) { chain latestBlock { number time } } }`,
    variables: (p) => ({ names: p.chains }),
    reshape: (d, p) => {
      const missing = missingChains(p.chains, d.chains);
      if (missing.length > 0) throw unknownChains(missing);
      return d.chains.map((c: any) => ({
        chain: c.chain,
        block_number: c.latestBlock?.number ?? '0',
        block_time: goTime(c.latestBlock?.time ?? null),
        timestamp: unixTime(c.latestBlock?.time ?? null),
      }));
    },
  },

  {
    names: ['inds_getTickByCallData', 'inds_getInscriptionTxOperate'],
    layouts: [callDataLayout],
    document: `query TickByCallData($chain: String!, $data: String!) {
      decodeCallData(chain: $chain, data: $data) { protocol operation tickName tick { deployHash } }
    }`,
    variables: (p) => {
      requireParams(p, callDataLayout, ['call_data']);
      return { chain: p.chain, data: p.call_data };
    },
    reshape: (d) => {
      const op = d.decodeCallData;
      if (!op) throw rpcErrors.notFound('the call data holds no inscription (expected hex of data:,{"p":…,"op":…,"tick":…})');
      return { operate: op.operation, protocol: op.protocol, tick: op.tickName, deploy_hash: op.tick?.deployHash ?? '' };
    },
  },

  {
    // the existing service's current shape, with its defects fixed: is_inscription is true only for an
    // inscription operation, `inscriptions` is the tick it touched (when indexed), `address` lists every
    // address leg (the existing service returned only the first), `data` is the decoded operation
    names: ['inds_getTransactionByHash'],
    layouts: [txByHashLayout],
    document: `query TransactionByHash($chain: String!, $hash: String!) {
      transaction(chain: $chain, hash: $hash) {
        ${transactionFields}
        tick { ${tickDetailFields} }
        movements { address txHash amount event operate createdAt updatedAt tick { chainName protocol tick } }
      }
    }`,
    variables: (p) => {
      requireParams(p, txByHashLayout, ['chain', 'tx_hash']);
      return { chain: p.chain, hash: p.tx_hash };
    },
    reshape: (d, p) => {
      const x = d.transaction;
      if (!x) throw rpcErrors.notFound(`no transaction ${p.tx_hash} on ${p.chain}`);
      return {
        is_inscription: x.protocol !== '' && x.op !== '',
        transaction: transactionEntry(x),
        ...(x.tick ? { inscriptions: tickDetailEntry(x.tick) } : {}),
        address: x.movements.map(movementEntry),
        data: { p: x.protocol, op: x.op, tick: x.tickName, amt: x.amount },
      };
    },
  },

  {
    // an address that never held the tick has balance "0"; utxos only for ticks transferred by UTXO hash
    // that have unspent outputs (as the existing service's omitempty)
    names: ['inds_getAddressBalance'],
    layouts: [addressBalanceLayout],
    document: `query AddressBalance($address: String!, $chain: String!, $protocol: String!, $tick: String!) {
      tick(chain: $chain, protocol: $protocol, tick: $tick) {
        tick deployHash transferType
        balanceOf(address: $address) { balance available }
        utxos(address: $address, first: 1000) { amount rootHash }
      }
    }`,
    variables: (p) => {
      requireParams(p, addressBalanceLayout, ['address', 'chain', 'protocol', 'tick']);
      return { address: p.address, chain: p.chain, protocol: p.protocol, tick: p.tick };
    },
    reshape: (d, p) => {
      const t = d.tick;
      if (!t) throw rpcErrors.notFound(`no tick ${p.tick} of ${p.protocol} on ${p.chain}`);
      const utxos = t.transferType === 'UTXO_HASH' ? t.utxos : [];
      return {
        tick: t.tick,
        balance: t.balanceOf?.balance ?? '0',
        transfer_type: transferTypeCode(t.transferType),
        ...(utxos.length > 0 ? { utxos: utxos.map((u: any) => ({ tick: t.tick, amount: u.amount, root_hash: u.rootHash })) } : {}),
        deploy_hash: t.deployHash,
        available: t.balanceOf?.available ?? '0',
      };
    },
  },

  {
    // type by the keyword's shape; data as the existing service: the tick list object, per-chain sums,
    // or the transactions with that hash (2.7 entries)
    names: ['inds_search'],
    layouts: [[str('keyword'), str('chain')]],
    document: `query Search($keyword: String!, $chain: String) {
      search(keyword: $keyword, chain: $chain) {
        __typename
        ... on TickSearchResult { totalCount ticks { ${tickListFields} } }
        ... on AddressSearchResult { chains { chainName address balance } }
        ... on TransactionSearchResult { transactions { ${transactionFields} } }
      }
    }`,
    variables: (p) => ({ keyword: p.keyword, chain: filter(p.chain) }),
    reshape: (d) => {
      const s = d.search;
      switch (s.__typename) {
        case 'TickSearchResult':
          return {
            type: 'Inscription',
            data: { inscriptions: s.ticks.map(tickListEntry), total: s.totalCount, limit: 100, offset: 0 },
          };
        case 'AddressSearchResult':
          return { type: 'Address', data: s.chains.map((c: any) => ({ chain: c.chainName, address: c.address, balance: c.balance })) };
        default:
          return { type: 'TxHash', data: s.transactions.map(transactionEntry) };
      }
    },
  },

  {
    // spec 2.8 of the chain, then its totals
    names: ['inds_chainInfo'],
    layouts: [chainLayout],
    document: `query ChainInfo($name: String!) {
      chain(name: $name) {
        chainId chain outerChain name logo networkId ext latestBlock { number time indexedAt }
        figures { tickCount addressCount deployCount mintCount transferCount transactionCount }
      }
    }`,
    variables: (p) => {
      requireParams(p, chainLayout, ['chain']);
      return { name: p.chain };
    },
    reshape: (d, p) => {
      const c = d.chain;
      if (!c) throw unknownChains([p.chain]);
      return {
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
        tick_count: c.figures.tickCount,
        address_count: c.figures.addressCount,
        deploy_count: c.figures.deployCount,
        mint_count: c.figures.mintCount,
        transfer_count: c.figures.transferCount,
        transaction_count: c.figures.transactionCount,
      };
    },
  },

  {
    // the last 24 h of each chain's indexed activity against the 24 h before; *_change is the percent
    // change as a string with two decimals, null when the previous window is empty
    names: ['inds_chainStat'],
    layouts: [[chains]],
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
      return d.chains.map((c: any) => {
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
  },

  {
    // the newest 10 blocks of the chain that hold indexed transactions, newest first
    names: ['inds_chainBlockStat'],
    layouts: [chainLayout],
    document: `query ChainBlockStat($name: String!) {
      chain(name: $name) { chain recentBlocks(last: 10) { height time tickCount transactionCount addressCount } }
    }`,
    variables: (p) => {
      requireParams(p, chainLayout, ['chain']);
      return { name: p.chain };
    },
    reshape: (d, p) => {
      if (!d.chain) throw unknownChains([p.chain]);
      return d.chain.recentBlocks.map((b: any) => ({
        block_height: integer(b.height),
        block_time: isoTime(b.time),
        tick_count: b.tickCount,
        transaction_count: b.transactionCount,
        address_count: b.addressCount,
      }));
    },
  },
];
