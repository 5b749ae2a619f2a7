import { AsyncLocalStorage, AsyncResource } from 'node:async_hooks';
import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';

// Per-request bookkeeping shared by the layers a request crosses (HTTP, GraphQL, JSON-RPC, the store's
// statement runner) without threading it through every signature: what the request was, what it cost
// and how it ended. One log line and the request metrics are written from it when the response ends.

export type Surface = 'graphql' | 'rpc' | 'metrics' | 'probe' | 'other';
export type CacheOutcome = 'hit' | 'miss' | 'bypass';

/** In-flight statements of one gateway's pool (the driver keeps its pool state private). */
export interface PoolMeter {
  inflight: number;
}

export interface RpcCallRecord {
  method: string;
  /** JSON-RPC error code; absent on success. */
  code?: number;
  cache?: CacheOutcome;
}

export interface RequestScope {
  id: string;
  surface: Surface;
  startedAt: number;
  /** GraphQL operation name ('anonymous' when the document has none). */
  operation?: string;
  /** GraphQL error codes of the response (extensions.code). */
  errorCodes: string[];
  /** One entry per answered JSON-RPC call (a batch has several). */
  rpc: RpcCallRecord[];
  /** Code of a JSON-RPC error answered before any call was dispatched (parse error, bad batch, …). */
  envelopeCode?: number;
  cache?: CacheOutcome;
  /** Time spent waiting on the database, summed over statements (ms). */
  dbMs: number;
  dbStatements: number;
  pool?: PoolMeter;
}

const storage = new AsyncLocalStorage<RequestScope>();

export function currentScope(): RequestScope | undefined {
  return storage.getStore();
}

export function newScope(id: string, surface: Surface, pool?: PoolMeter): RequestScope {
  return { id, surface, startedAt: performance.now(), errorCodes: [], rpc: [], dbMs: 0, dbStatements: 0, pool };
}

/**
 * Runs a node:http handler inside the scope. The request's own events ('data', 'end') are emitted from
 * the socket's context, not from the handler's, so they are re-bound to the scope: otherwise work that
 * starts on 'end' (the JSON-RPC layer, yoga's body reader) would run without it.
 */
export function runInScope(scope: RequestScope, req: IncomingMessage, fn: () => void): void {
  storage.run(scope, () => {
    const resource = new AsyncResource('igw.request');
    const emit = req.emit;
    req.emit = function scopedEmit(this: IncomingMessage, ...args: Parameters<typeof emit>) {
      return resource.runInAsyncScope(emit, this, ...args);
    } as typeof emit;
    fn();
  });
}

/**
 * Called by the statement runner when a statement starts; the returned function when it settles. Outside
 * a request (start-up, the data-version watcher) it costs nothing.
 */
export function trackDbStatement(): () => void {
  const scope = storage.getStore();
  if (!scope) return noop;
  const started = performance.now();
  if (scope.pool) scope.pool.inflight++;
  return () => {
    scope.dbMs += performance.now() - started;
    scope.dbStatements++;
    if (scope.pool) scope.pool.inflight--;
  };
}

const noop = () => {};
