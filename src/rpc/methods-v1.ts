import { methods } from './methods.js';
import { moreMethods } from './methods-v2-more.js';
import type { MethodSpec } from './methods.js';
import type { ParamSpec } from './params.js';

// The v1 interface (/v1/rpc): the existing service's dotted names, each the same operation as its v2
// twin with the v1 positional list. v1 lists lack the trailing sort params of their twins: those take
// the v2 default (descending). The existing service answered most of these with errors (its handlers
// type-asserted the wrong command structs); here every one of them works.

const v2ByName = new Map<string, MethodSpec>([...methods, ...moreMethods].flatMap((s) => s.names.map((n) => [n, s] as const)));

function v2(name: string): MethodSpec {
  const spec = v2ByName.get(name);
  if (!spec) throw new Error(`no v2 method ${name}`);
  return spec;
}

/**
 * A v1 method running its v2 twin's document and reshape. `keep` cuts the twin's (first) layout to its
 * first params; `fixed` gives the values of the params that v1 does not have.
 */
function twin(name: string, of: string, options: { keep?: number; fixed?: Record<string, unknown> } = {}): MethodSpec {
  const spec = v2(of);
  const layouts: (readonly ParamSpec[])[] = options.keep != null ? [spec.layouts[0]!.slice(0, options.keep)] : [...spec.layouts];
  const withFixed = (p: Record<string, any>) => ({ ...options.fixed, ...p });
  return {
    names: [name],
    layouts,
    document: spec.document,
    variables: (p) => spec.variables(withFixed(p)),
    reshape: (d, p) => spec.reshape(d, withFixed(p)),
  };
}

/** A positive exact decimal ("0", "0.000" and negatives are not holdings). */
const positive = (amount: string) => !amount.startsWith('-') && /[1-9]/.test(amount);

/**
 * tick.Holders: the twin's first 5 params (limit, offset, chain, protocol, tick), or the 6 of the v1
 * documentation, with an address before the chain: then the list is that address's holding of the tick
 * (one holder, or none when it holds none; `""` lists every holder). The existing service answered
 * neither form (its handler type-asserted the wrong command).
 */
function tickHolders(): MethodSpec {
  const spec = v2('inds_getHoldersByTick');
  const five = spec.layouts[0]!.slice(0, 5);
  const six: ParamSpec[] = [five[0]!, five[1]!, { name: 'address', type: 'string' }, ...five.slice(2)];
  const withDefaults = (p: Record<string, any>): Record<string, any> => ({ sort: 'DESC', address: '', ...p });
  return {
    names: ['tick.Holders'],
    layouts: [five, six],
    document: `query TickHoldersV1($first: Int!, $offset: Int!, $chain: String!, $protocol: String!, $tick: String!,
        $direction: OrderDirection!, $address: String!, $byAddress: Boolean!) {
      tick(chain: $chain, protocol: $protocol, tick: $tick) {
        chainName protocol tick deployHash totalSupply
        holders(first: $first, offset: $offset, direction: $direction) @skip(if: $byAddress) {
          totalCount
          edges { node { address balance } }
        }
        balanceOf(address: $address) @include(if: $byAddress) { address balance }
      }
    }`,
    variables: (p) => {
      const q = withDefaults(p);
      return { ...spec.variables(q), address: q.address, byAddress: q.address !== '' };
    },
    reshape: (d, p) => {
      const q = withDefaults(p);
      if (q.address === '' || !d.tick) return spec.reshape(d, q);
      const held = d.tick.balanceOf && positive(d.tick.balanceOf.balance) ? [d.tick.balanceOf] : [];
      const page = held.slice(q.offset, q.offset + q.limit);
      return spec.reshape({ tick: { ...d.tick, holders: { totalCount: held.length, edges: page.map((node) => ({ node })) } } }, q);
    },
  };
}

/** v1 name → canonical name of its v2 twin. */
export const v1Twins: Record<string, string> = {
  'inscription.All': 'inds_getTicks',
  'inscription.Tick': 'index_getInscriptionByTick',
  'address.Transactions': 'inds_getTransactionByAddress',
  'address.Balances': 'inds_getBalancesByAddress',
  'address.Balance': 'inds_getAddressBalance',
  'tick.Holders': 'inds_getHoldersByTick',
  'block.LastNumber': 'inds_getLastBlockNumberIndexed',
  'tool.InscriptionTxOperate': 'inds_getTickByCallData',
  'transaction.Info': 'inds_getTransactionByHash',
  'tick.GetBriefs': 'inds_getTickBriefs',
};

export const v1Methods: MethodSpec[] = [
  // limit, offset, chain, protocol, tick, deploy_by, sort (7)
  twin('inscription.All', 'inds_getTicks', { keep: 7, fixed: { sort_mode: 'DESC' } }),
  // chain, protocol, tick (3)
  twin('inscription.Tick', 'index_getInscriptionByTick'),
  // limit, offset, address, chain, protocol, tick, key, event (8); the 7-param form (event at index 6) too
  twin('address.Transactions', 'inds_getTransactionByAddress'),
  // limit, offset, address, chain, protocol, tick, key (7)
  twin('address.Balances', 'inds_getBalancesByAddress', { keep: 7, fixed: { sort: 'DESC' } }),
  // address, chain, protocol, tick (4)
  twin('address.Balance', 'inds_getAddressBalance'),
  // limit, offset, chain, protocol, tick (5); limit, offset, address, chain, protocol, tick (6, as documented)
  tickHolders(),
  // [chains] (1)
  twin('block.LastNumber', 'inds_getLastBlockNumberIndexed'),
  // chain, call data (2)
  twin('tool.InscriptionTxOperate', 'inds_getTickByCallData'),
  // chain, tx hash (2)
  twin('transaction.Info', 'inds_getTransactionByHash'),
  // [selectors] (1)
  twin('tick.GetBriefs', 'inds_getTickBriefs'),
];
