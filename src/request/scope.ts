import { AsyncLocalStorage } from 'node:async_hooks';
import { performance } from 'node:perf_hooks';

// One request's scope: a plain object every layer of the request writes into directly (the statement
// runner its database time, the JSON-RPC layer its calls, the access hook the key's name), opened for the
// listener by src/observability/request.ts, which writes the request's log line and metrics from it when
// the response ends. It lives below every layer that reads it, so none calls back up to record.

export type Surface = 'graphql' | 'rpc' | 'metrics' | 'probe' | 'other';
export type CacheOutcome = 'hit' | 'miss' | 'bypass';

/** Statements in flight over the gateway's pools (the pool gauges read it). */
export interface PoolMeter {
  inflight: number;
}

export interface RpcCallRecord {
  method: string;
  /** JSON-RPC error code; absent on success. */
  code?: number;
  cache?: CacheOutcome;
}

/** Wall time during which at least one of the request's statements was in a state: the union of their intervals. */
export interface Clock { open: number; since: number }

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
  /** The first limit of its own the request ran into (src/db/errors.ts ClientLimitError): its line says `failure: "client"`. */
  limit?: string;
  /**
   * Database time (ms): wall time during which at least one of the request's statements held a pool
   * connection (from acquiring it to the result). Never counts queueing, and never exceeds the request's
   * duration however many statements overlap.
   */
  dbMs: number;
  /** Queue time (ms): wall time during which at least one statement waited for a pool connection. */
  queueMs: number;
  dbStatements: number;
  pool?: PoolMeter;
  /** Statements of the request holding a connection / waiting for one, and since when (src/db/statement-runner.ts). */
  clocks: { running: Clock; queued: Clock };
  /**
   * Read from the primary only: a subscription event was announced by the primary's NOTIFY, and a replica
   * may not have replayed its rows yet (src/db/source-routing.ts).
   */
  primaryOnly?: boolean;
  /** The API key's name (set by the access hook, src/access/http-hook.ts): never the key itself. */
  keyName?: string;
  /** The API key's page-size clamp (api_keys.max_page_size), set by the access hook; absent: none. */
  keyMaxPageSize?: number;
  /** Rows its statements fetched, counted in `liveRows` until it ends; absent: not counted (a subscription event's scope). */
  rowsHeld?: number;
  /** Bytes of JSON-RPC replies it has built, counted in `liveAnswerBytes` until it ends. */
  answerBytesHeld?: number;
}

/** Rows held by the HTTP requests in progress: the statement runner adds a request's rows, its end takes them back. */
export const liveRows = { rows: 0 };

/** Bytes of the JSON-RPC replies built by the HTTP requests in progress (text held until it is written). */
export const liveAnswerBytes = { bytes: 0 };

/** Counts `bytes` of reply text the request holds, for it and for all requests together, until it ends. */
export function holdAnswerBytes(scope: RequestScope | undefined, bytes: number): void {
  if (!scope) return;
  scope.answerBytesHeld = (scope.answerBytesHeld ?? 0) + bytes;
  liveAnswerBytes.bytes += bytes;
}

/** Takes a finished request's rows and reply bytes back (src/observability/request.ts, when its response ends). */
export function releaseHeld(scope: RequestScope): void {
  if (scope.rowsHeld) {
    liveRows.rows -= scope.rowsHeld;
    scope.rowsHeld = 0;
  }
  if (scope.answerBytesHeld) {
    liveAnswerBytes.bytes -= scope.answerBytesHeld;
    scope.answerBytesHeld = 0;
  }
}

/**
 * The scope of the request in progress (async context): the listener runs each request in its own with
 * `requestScopes.run(scope, handler)`, so its work and the events of its request carry it.
 */
export const requestScopes = new AsyncLocalStorage<RequestScope>();

/** The request in progress; undefined outside one (start-up, tools, timers). */
export function currentScope(): RequestScope | undefined {
  return requestScopes.getStore();
}

export function newScope(id: string, surface: Surface, pool?: PoolMeter): RequestScope {
  return {
    id, surface, startedAt: performance.now(), errorCodes: [], rpc: [], dbMs: 0, queueMs: 0, dbStatements: 0, pool, rowsHeld: 0,
    clocks: { running: { open: 0, since: 0 }, queued: { open: 0, since: 0 } },
  };
}

/**
 * A subscription event (src/graphql/types/live.ts): the rest of its execution runs in a scope of its own, so
 * the per-request limits of the statement runner (REQUEST_MAX_ROWS, concurrent statements) hold per event
 * rather than accumulating over a stream's lifetime, and it reads from the primary (whose NOTIFY announced
 * the event; a lagging replica could answer without its rows). Called at the start of the event's execution.
 */
export function enterEventScope(): void {
  const parent = requestScopes.getStore();
  // an event's scope never ends with a response: its rows are not counted in liveRows (streams have bounds of their own)
  if (parent) requestScopes.enterWith({ ...newScope(parent.id, parent.surface, parent.pool), primaryOnly: true, keyName: parent.keyName, rowsHeld: undefined });
}
