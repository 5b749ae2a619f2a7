import jayson from 'jayson/promise/index.js';
import type { RpcRequestCache } from '../cache/rpc.js';
import type { Context } from '../graphql/context.js';
import { prepareOperation } from '../graphql/prepared-operation.js';
import type { CacheOutcome } from '../request/scope.js';
import { fromGraphqlErrors, isRpcError, rpcErrors, type RpcError } from './errors.js';
import { decodeParams, type MethodSpec, type PagingLimits, type RequestInfo } from './declaration.js';

// Dispatch of one checked request to its method through jayson (method lookup, notification semantics):
// decode the positional params, answer from the cache or run the method's GraphQL document in-process,
// reshape. Errors are JSON-RPC errors; anything unexpected is -32604 and goes to `onError`.

/**
 * What a method handler gets: the request's GraphQL context and cache, and its own call's outcome: the
 * cache outcome and the method's name as the table spells it (v1 names match in any letter case; metrics
 * and logs use this name, never the one sent, so letter case cannot add series). Unset: no method ran.
 */
export interface CallContext {
  graphql: Context;
  cache: RpcRequestCache | null;
  request: RequestInfo;
  outcome: { cache?: CacheOutcome; method?: string };
}

export interface DispatchOptions {
  limits: PagingLimits;
  onError?: (error: unknown, method: string) => void;
}

/** Calls a method: the success or error response, or nothing for a notification. */
export type Dispatch = (method: string, params: unknown[], notification: boolean, context: CallContext) =>
  Promise<{ result?: unknown; error?: RpcError } | undefined>;

export function createDispatch(table: readonly MethodSpec[], options: DispatchOptions, naming: { anyCase?: boolean } = {}): Dispatch {
  const server = buildServer(table, options, naming);
  return async (method, params, notification, context) => {
    // the id jayson sees is a placeholder: the envelope keeps the real one
    const call = { jsonrpc: '2.0', method, params, ...(notification ? {} : { id: 0 }) };
    // callp resolves with a success response and rejects with an error response (or nothing, for notifications)
    return (await server.callp(call, context).catch((errorResponse: unknown) => errorResponse)) as
      | { result?: unknown; error?: RpcError }
      | undefined;
  };
}

/** One call of `spec` under the name it was called by: from the cache, or run and reshaped (and stored). */
async function callMethod(
  spec: MethodSpec, run: ReturnType<typeof prepareOperation>, name: string, params: unknown[], context: CallContext, options: DispatchOptions,
): Promise<unknown> {
  context.outcome.method = name;
  try {
    const p = decodeParams(spec.layouts, params, context.graphql.paging ?? options.limits);
    const cache = spec.uncached ? null : context.cache;
    const cached = cache ? await cache.get(name, params) : null;
    context.outcome.cache = cached ? (cached.hit ? 'hit' : 'miss') : 'bypass';
    if (cached?.hit) return cached.value;
    const result = await run(spec.variables(p), context.graphql);
    if (result.errors?.length) throw fromGraphqlErrors(result.errors);
    const value = spec.reshape(result.data, p, context.request);
    return cached && cache ? cache.set(cached.key, value) : value;
  } catch (error) {
    if (isRpcError(error)) throw error;
    options.onError?.(error, spec.names[0]!);
    throw rpcErrors.internal();
  }
}

function buildServer(table: readonly MethodSpec[], options: DispatchOptions, naming: { anyCase?: boolean }): jayson.Server {
  const handlers: Record<string, (params: unknown[], context: CallContext) => Promise<unknown>> = {};
  const reserved = new Map<string, jayson.Method>();
  for (const spec of table) {
    const run = prepareOperation(spec.document, (error) => options.onError?.(error, spec.names[0]!));
    // one handler per name: the cache key holds the method as called
    const handler = (name: string) => (params: unknown[], context: CallContext) => callMethod(spec, run, name, params, context, options);
    for (const name of spec.names) {
      // jayson refuses to register rpc.* names (reserved for extensions such as rpc.discover): route them here
      if (name.startsWith('rpc.')) reserved.set(name, new jayson.Method(handler(name) as never, { useContext: true } as never));
      else handlers[name] = handler(name);
    }
  }
  const byLowerCase = new Map(Object.keys(handlers).map((name) => [name.toLowerCase(), name]));
  const server = new jayson.Server(handlers as never, {
    useContext: true,
    // an unknown method answers with its name in `data`
    router(this: jayson.Server, method: string) {
      const exact = this.getMethod(method) ?? reserved.get(method);
      const named = !exact && naming.anyCase && typeof method === 'string' ? byLowerCase.get(method.toLowerCase()) : undefined;
      return exact ?? (named ? this.getMethod(named) : undefined) ??
        new jayson.Method(async () => { throw rpcErrors.methodNotFound(method); });
    },
  } as never);
  return server;
}
