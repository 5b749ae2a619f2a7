import { methods } from './methods.js';
import { v1Methods } from './methods-v1.js';
import { moreMethods } from './methods-v2-more.js';
import { discoverMethod, type RpcTables } from './openrpc.js';

/** The method tables served at /v2/rpc and /v1/rpc; rpc.discover answers on both. */
export function createRpcTables(): RpcTables {
  const discover = discoverMethod();
  return {
    v2: [...methods, ...moreMethods, discover],
    v1: [...v1Methods, discover],
  };
}
