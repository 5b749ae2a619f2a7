import { addressMethods } from './methods/addresses.js';
import { chainMethods } from './methods/chains.js';
import { tickMethods } from './methods/ticks.js';
import { transactionMethods } from './methods/transactions.js';
import { v1Methods } from './methods/v1.js';
import { discoverMethod, type RpcTables } from './openrpc.js';

/** The method tables served at /v2/rpc and /v1/rpc; rpc.discover on each answers its own document. */
export function createRpcTables(): RpcTables {
  return {
    v2: [...tickMethods, ...addressMethods, ...transactionMethods, ...chainMethods, discoverMethod('v2')],
    v1: [...v1Methods, discoverMethod('v1')],
  };
}
