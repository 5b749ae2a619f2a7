import { rpcErrors } from '../errors.js';
import { direction, filter, limit, list, method, offset, paging, required, text, type MethodSpec } from '../declaration.js';
import { lobbyHash, scripted, tomrayMint } from './demo-records.js';
import { movementEntry, tickDetailEntry, tickDetailFields, tickListEntry, tickListFields, transactionEntry, transactionFields } from './entries.js';
import { array, int, object, page, ref, str } from './schemas.js';

// The transaction methods: raw transactions, one by hash, decoding call data, and the keyword search.

const callDataResult = object({ operate: str(), protocol: str(), tick: str(), deploy_hash: str() });

export const transactionMethods: MethodSpec[] = [
  method({
    names: ['inds_getTransactions'],
    layouts: [[limit, offset, text('address'), text('chain'), text('protocol'), text('tick'), direction('sortmode')]],
    document: `query Transactions($first: Int!, $offset: Int!, $address: String, $chain: String, $protocol: String,
        $tick: String, $direction: OrderDirection!) {
      transactions(first: $first, offset: $offset, address: $address, chain: $chain, protocol: $protocol, tick: $tick,
                   direction: $direction) {
        totalCount
        edges { node { ${transactionFields} } }
      }
    }`,
    variables: (p) => ({
      ...paging(p), address: filter(p.address), chain: filter(p.chain), protocol: filter(p.protocol), tick: filter(p.tick),
      direction: p.sortmode,
    }),
    reshape: (d, p) => ({
      data: list(d.transactions).map(transactionEntry),
      total: d.transactions.totalCount,
      limit: p.limit,
      offset: p.offset,
      code: 0,
      msg: 0,
    }),
    doc: {
      summary: 'Raw transactions in chain order (block height, position).',
      description: 'The address matches the sender or the recipient; total is the real count; code and msg are 0.',
      result: page('data', ref('Transaction'), { code: int({ const: 0 }), msg: int({ const: 0 }) }),
      examples: [{ name: 'avalanche-newest', params: [2, 0, '', 'avalanche', '', '', 2] }],
    },
  }),

  method({
    // the existing service's current shape, with its defects fixed: is_inscription is true only for an
    // inscription operation, `inscriptions` is the tick it touched (when indexed), `address` lists every
    // address leg (the existing service returned only the first), `data` is the decoded operation
    names: ['inds_getTransactionByHash'],
    layouts: [[required('chain'), required('tx_hash')]],
    document: `query TransactionByHash($chain: String!, $hash: String!) {
      transaction(chain: $chain, hash: $hash) {
        ${transactionFields}
        tick { ${tickDetailFields} }
        movements { address txHash amount event operate createdAt updatedAt tick { chainName protocol tick } }
      }
    }`,
    variables: (p) => ({ chain: p.chain, hash: p.tx_hash }),
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
    doc: {
      summary: 'A transaction by hash with the tick it touched, its address movements and the decoded operation.',
      description: 'is_inscription is true for an inscription operation; inscriptions (the tick detail with stats) is present ' +
        'when the transaction touched an indexed tick; address lists every address leg (possibly empty); data is ' +
        'the operation {p, op, tick, amt}. Hashes are hex strings as stored for the chain.',
      result: object({
        is_inscription: { type: 'boolean' },
        transaction: ref('Transaction'),
        inscriptions: ref('TickDetailWithStats'),
        address: array(ref('AddressTransaction')),
        data: object({ p: str(), op: str(), tick: str(), amt: ref('Decimal') }),
      }, ['inscriptions']),
      notFound: 'no such transaction on the chain',
      examples: [{ name: 'lobby-deploy', params: ['avalanche', lobbyHash] }],
    },
  }),

  method({
    names: ['inds_getTickByCallData', 'inds_getInscriptionTxOperate'],
    layouts: [[text('chain', { description: 'Chain whose tick the operation refers to (for deploy_hash).' }), required('call_data')]],
    document: `query TickByCallData($chain: String!, $data: String!) {
      decodeCallData(chain: $chain, data: $data) { protocol operation tickName tick { deployHash } }
    }`,
    variables: (p) => ({ chain: p.chain, data: p.call_data }),
    reshape: (d) => {
      const op = d.decodeCallData;
      if (!op) throw rpcErrors.notFound('the call data holds no inscription (expected hex of data:,{"p":…,"op":…,"tick":…})');
      return { operate: op.operation, protocol: op.protocol, tick: op.tickName, deploy_hash: op.tick?.deployHash ?? '' };
    },
    doc: {
      summary: 'Decode inscription call data into its operation, protocol and tick (and the deploy hash if deployed).',
      description: 'Accepts hex of data:,{json}, data:application/json,{json} and data:text/plain,{json} with string p, op and ' +
        'tick, with or without 0x, at most 1024 characters as a param. Not hex: -32602; hex but no inscription: -32603. ' +
        'deploy_hash is "" when the tick is not deployed on the chain.',
      result: callDataResult,
      notFound: 'the call data holds no inscription',
      examples: [{ name: 'tomray-mint', params: ['avalanche', `0x${tomrayMint}`] }],
    },
    aliases: {
      inds_getInscriptionTxOperate: {
        summary: 'Alias of inds_getTickByCallData.',
        examples: [{ name: 'tomray-mint-without-0x', summary: 'The documented form, without 0x.', params: ['avalanche', tomrayMint] }],
      },
    },
  }),

  method({
    // type by the keyword's shape; data as the existing service: the tick list object, per-chain sums,
    // or the transactions with that hash (2.7 entries)
    names: ['inds_search'],
    layouts: [[required('keyword'), text('chain', { description: 'Only this chain; "" = every chain.' })]],
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
          return { type: 'Address', data: s.chains.map((c) => ({ chain: c.chainName, address: c.address, balance: c.balance })) };
        default:
          return { type: 'TxHash', data: s.transactions.map(transactionEntry) };
      }
    },
    doc: {
      summary: 'Search by keyword: ticks by name prefix, an address, or a transaction hash.',
      description: 'Decided by the shape of the keyword: 64 hex digits (optionally after 0x) = TxHash (the transactions with that ' +
        'hash); 0x + 40 hex or a btc address = Address (positive balances summed per chain, largest first); anything ' +
        'else = Inscription (ticks whose name starts with the keyword, the exact name first, then by holders; at most 100, ' +
        'total counts all). Nothing found is an empty list, not an error.',
      result: {
        oneOf: [
          object({ type: { const: 'Inscription' }, data: ref('TickList') }),
          object({ type: { const: 'Address' }, data: array(object({ chain: str(), address: str(), balance: ref('Decimal') })) }),
          object({ type: { const: 'TxHash' }, data: array(ref('Transaction')) }),
        ],
      },
      examples: [
        { name: 'address', params: [scripted, ''] },
        { name: 'tick-prefix', params: ['sat', ''] },
        { name: 'tx-hash', params: [lobbyHash, 'avalanche'] },
      ],
    },
  }),
];
