import { limit, method, offset, text, type ExampleSpec, type MethodSpec, type ParamSpec, type Params } from '../declaration.js';
import { addressMethods } from './addresses.js';
import { chainMethods } from './chains.js';
import { avasHash, crazydogDeployer, lobbyHash, scripted, tomrayMint } from './demo-records.js';
import { tickMethods } from './ticks.js';
import { transactionMethods } from './transactions.js';

// The v1 interface (/v1/rpc): the existing service's dotted names, each the same operation as its v2
// twin with the v1 positional list. v1 lists lack the trailing sort params of their twins: those take
// the v2 default (descending). The existing service answered most of these with errors (its handlers
// type-asserted the wrong command structs); here every one of them works. Params (and which are
// required), the document, the reshape and the docs are the twin's; a v1 method declares only its name,
// its cut of the twin's layout and its examples.

const v2ByName = new Map<string, MethodSpec>(
  [...tickMethods, ...addressMethods, ...transactionMethods, ...chainMethods].flatMap((s) => s.names.map((n) => [n, s] as const)),
);

function v2(name: string): MethodSpec {
  const spec = v2ByName.get(name);
  if (!spec) throw new Error(`no v2 method ${name}`);
  return spec;
}

interface TwinOptions {
  /** Cut the twin's (first) layout to its first params. */
  keep?: number;
  /** The values of the params that v1 does not have. */
  fixed?: Record<string, unknown>;
  examples: readonly ExampleSpec[];
}

/** A v1 method running its v2 twin's document and reshape. */
function twin(name: string, of: string, options: TwinOptions): MethodSpec {
  const spec = v2(of);
  const layouts: (readonly ParamSpec[])[] = options.keep != null ? [spec.layouts[0]!.slice(0, options.keep)] : [...spec.layouts];
  const withFixed = (p: Params) => ({ ...options.fixed, ...p });
  return {
    names: [name],
    layouts,
    document: spec.document,
    variables: (p) => spec.variables(withFixed(p)),
    reshape: (d, p) => spec.reshape(d, withFixed(p)),
    doc: { ...spec.doc, summary: `v1 name of ${of}: ${spec.doc.summary}`, examples: options.examples },
    twinOf: of,
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
  const of = 'inds_getHoldersByTick';
  const spec = v2(of);
  // the twin's first five params, and the documented six
  const five = [limit, offset, text('chain'), text('protocol'), text('tick')];
  const six = [limit, offset, text('address', { description: 'Only this holder; "" = every holder.' }), text('chain'), text('protocol'), text('tick')];
  const withDefaults = <P extends object>(p: P) => ({ sort: 'DESC', address: '', ...p });
  return method({
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
    doc: {
      ...spec.doc,
      summary: `v1 name of ${of}: ${spec.doc.summary}`,
      examples: [{ name: 'tomray', params: [3, 0, 'avalanche', 'asc-20', 'tomray'] }],
    },
    twinOf: of,
  });
}

/**
 * The dotted name also answered in its identifier spelling (`tick.Holders` as `tick_Holders`), the one the
 * OpenRPC document lists: a client generator makes each listed name a class member, which no dotted name can be.
 */
function identifierSpelling(spec: MethodSpec): MethodSpec {
  const [dotted] = spec.names as [string];
  const identifier = dotted.replace('.', '_');
  return {
    ...spec,
    names: [dotted, identifier],
    aliases: { [identifier]: { summary: `${dotted}, spelled as an identifier. ${spec.doc.summary}`, examples: spec.doc.examples } },
  };
}

export const v1Methods: MethodSpec[] = [
  // limit, offset, chain, protocol, tick, deploy_by, sort (7)
  twin('inscription.All', 'inds_getTicks', {
    keep: 7, fixed: { sort_mode: 'DESC' }, examples: [{ name: 'most-holders', params: [2, 0, '', '', '', '', 3] }],
  }),
  // chain, protocol, tick (3)
  twin('inscription.Tick', 'index_getInscriptionByTick', { examples: [{ name: 'crazydog', params: ['avalanche', 'asc-20', 'crazydog'] }] }),
  // limit, offset, address, chain, protocol, tick, key, event (8); the 7-param form (event at index 6) too
  twin('address.Transactions', 'inds_getTransactionByAddress', {
    examples: [{ name: 'crazydog-deployer', params: [2, 0, crazydogDeployer, '', '', '', '', 0] }],
  }),
  // limit, offset, address, chain, protocol, tick, key (7)
  twin('address.Balances', 'inds_getBalancesByAddress', {
    keep: 7, fixed: { sort: 'DESC' }, examples: [{ name: 'scripted-address', params: [5, 0, scripted, '', '', '', ''] }],
  }),
  // address, chain, protocol, tick (4)
  twin('address.Balance', 'inds_getAddressBalance', { examples: [{ name: 'scripted-tomray', params: [scripted, 'avalanche', 'asc-20', 'tomray'] }] }),
  // limit, offset, chain, protocol, tick (5); limit, offset, address, chain, protocol, tick (6, as documented)
  tickHolders(),
  // [chains] (1)
  twin('block.LastNumber', 'inds_getLastBlockNumberIndexed', { examples: [{ name: 'avalanche', params: [['avalanche']] }] }),
  // chain, call data (2)
  twin('tool.InscriptionTxOperate', 'inds_getTickByCallData', { examples: [{ name: 'tomray-mint', params: ['avalanche', tomrayMint] }] }),
  // chain, tx hash (2)
  twin('transaction.Info', 'inds_getTransactionByHash', { examples: [{ name: 'lobby-deploy', params: ['avalanche', lobbyHash] }] }),
  // [selectors] (1)
  twin('tick.GetBriefs', 'inds_getTickBriefs', { examples: [{ name: 'avas', params: [[{ chain: 'avalanche', deploy_hash: avasHash }]] }] }),
].map(identifierSpelling);
