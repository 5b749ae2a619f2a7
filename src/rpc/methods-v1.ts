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
  // limit, offset, chain, protocol, tick (5)
  twin('tick.Holders', 'inds_getHoldersByTick', { keep: 5, fixed: { sort: 'DESC' } }),
  // [chains] (1)
  twin('block.LastNumber', 'inds_getLastBlockNumberIndexed'),
  // chain, call data (2)
  twin('tool.InscriptionTxOperate', 'inds_getTickByCallData'),
  // chain, tx hash (2)
  twin('transaction.Info', 'inds_getTransactionByHash'),
  // [selectors] (1)
  twin('tick.GetBriefs', 'inds_getTickBriefs'),
];
