import { rpcErrors } from '../errors.js';
import { transferTypeCode } from '../format.js';
import {
  direction, filter, limit, list, method, offset, paging, required, text, type MethodSpec, type ParamSpec,
} from '../declaration.js';
import { crazydogDeployer, notFoundTick, scripted } from './demo-records.js';
import { movementEntry } from './entries.js';
import { array, object, page, ref, str } from './schemas.js';

// The address methods: an address's movement log, its balances, its balance of one tick. The address is
// required in each: an empty one is -32602 naming it (not an empty page: it is what the method is about,
// not a filter; the spec's examples all send one).

const event: ParamSpec<'event', 'int'> = { name: 'event', type: 'int', oneOf: [0, 1, 2, 3], description: '0 = all, 1 = deploy, 2 = mint, 3 = transfer (in and out).' };
const addressBalanceLayout = [required('address'), required('chain'), required('protocol'), required('tick')];

export const addressMethods: MethodSpec[] = [
  method({
    names: ['inds_getTransactionByAddress'],
    layouts: [
      [limit, offset, required('address'), text('chain'), text('protocol'), text('tick'), event],
      // clients in the field also send a search key before the event type
      [limit, offset, required('address'), text('chain'), text('protocol'), text('tick'), text('key'), event],
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
      ...paging(p), address: p.address, chain: filter(p.chain), protocol: filter(p.protocol), tick: filter(p.tick),
      search: filter(p.key ?? ''), event: ['ALL', 'DEPLOY', 'MINT', 'TRANSFER'][p.event],
    }),
    reshape: (d, p) => ({
      transactions: list(d.addressTransactions).map(movementEntry),
      total: d.addressTransactions.totalCount,
      limit: p.limit,
      offset: p.offset,
    }),
    doc: {
      summary: "An address's movement log, newest first.",
      description: 'One row per address per transaction leg. Sent with 7 params (event at index 6) or 8 (a key at index 6, event at index 7).',
      result: page('transactions', ref('AddressTransaction')),
      examples: [{ name: 'crazydog-deployer', params: [2, 0, crazydogDeployer, '', '', '', 0] }],
    },
  }),

  method({
    names: ['inds_getBalancesByAddress', 'inds_getBalanceByAddress'],
    layouts: [[limit, offset, required('address'), text('chain'), text('protocol'), text('tick'), text('key'), direction('sort')]],
    document: `query AddressBalances($first: Int!, $offset: Int!, $address: String!, $chain: String, $protocol: String,
        $tick: String, $search: String, $direction: OrderDirection!) {
      balances(first: $first, offset: $offset, address: $address, chain: $chain, protocol: $protocol, tick: $tick,
               search: $search, direction: $direction) {
        totalCount
        edges { node { address balance tick { chainName protocol tick deployHash transferType } } }
      }
    }`,
    variables: (p) => ({
      ...paging(p), address: p.address, chain: filter(p.chain), protocol: filter(p.protocol), tick: filter(p.tick),
      search: filter(p.key), direction: p.sort,
    }),
    reshape: (d, p) => ({
      inscriptions: list(d.balances).map((b) => ({
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
    doc: {
      summary: 'Positive balances of an address, by balance; the tick breaks ties.',
      result: page('inscriptions', ref('BalanceEntry')),
      examples: [{ name: 'scripted-address', params: [5, 0, scripted, '', '', '', '', 2] }],
    },
    aliases: { inds_getBalanceByAddress: { summary: 'Alias of inds_getBalancesByAddress (its name before a rename).' } },
  }),

  method({
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
    variables: (p) => ({ address: p.address, chain: p.chain, protocol: p.protocol, tick: p.tick }),
    reshape: (d, p) => {
      const t = d.tick;
      if (!t) throw rpcErrors.notFound(`no tick ${p.tick} of ${p.protocol} on ${p.chain}`);
      const utxos = t.transferType === 'UTXO_HASH' ? t.utxos : [];
      return {
        tick: t.tick,
        balance: t.balanceOf?.balance ?? '0',
        transfer_type: transferTypeCode(t.transferType),
        ...(utxos.length > 0 ? { utxos: utxos.map((u) => ({ tick: t.tick, amount: u.amount, root_hash: u.rootHash })) } : {}),
        deploy_hash: t.deployHash,
        available: t.balanceOf?.available ?? '0',
      };
    },
    doc: {
      summary: "An address's balance of one tick.",
      description: 'Key order as the existing service: tick, balance, transfer_type, [utxos], deploy_hash, available. An address ' +
        'that never held the tick has balance and available "0". utxos (unspent transfer outputs, newest first, at most 1000) ' +
        'is present only for ticks transferred by UTXO hash (transfer_type 1) that have some.',
      result: object({
        tick: str(),
        balance: ref('Decimal'),
        transfer_type: ref('TransferType'),
        utxos: array(object({ tick: str(), amount: ref('Decimal'), root_hash: str() }), { minItems: 1 }),
        deploy_hash: str(),
        available: ref('Decimal'),
      }, ['utxos']),
      notFound: notFoundTick,
      examples: [{ name: 'scripted-tomray', params: [scripted, 'avalanche', 'asc-20', 'tomray'] }],
    },
  }),
];
