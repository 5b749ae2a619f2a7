import { AsyncLocalStorage, AsyncResource } from 'node:async_hooks';
import type { IncomingMessage } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { DbStatementTrack, RequestScopeAccessor } from '../db/scope.js';

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
  /** Statements of the request holding a connection / waiting for one, and since when (interval unions). */
  clocks: { running: Clock; queued: Clock };
  /**
   * Read from the primary only: a subscription event was announced by the primary's NOTIFY, and a replica
   * may not have replayed its rows yet (src/db/sources.ts).
   */
  primaryOnly?: boolean;
}

interface Clock { open: number; since: number }

const storage = new AsyncLocalStorage<RequestScope>();

export function currentScope(): RequestScope | undefined {
  return storage.getStore();
}

export function newScope(id: string, surface: Surface, pool?: PoolMeter): RequestScope {
  return {
    id, surface, startedAt: performance.now(), errorCodes: [], rpc: [], dbMs: 0, queueMs: 0, dbStatements: 0, pool,
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
  const parent = storage.getStore();
  if (parent) storage.enterWith({ ...newScope(parent.id, parent.surface, parent.pool), primaryOnly: true });
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
 * Called by the statement runner when a statement asks for a connection. Outside a request (start-up,
 * tools) it costs nothing. Overlapping statements of one request are counted once: dbMs and queueMs are
 * the lengths of the unions of their intervals.
 */
export function trackDbStatement(): DbStatementTrack {
  const scope = storage.getStore();
  if (!scope) return untracked;
  const { running, queued } = scope.clocks;
  let state: 'new' | 'queued' | 'running' | 'done' = 'new';
  if (scope.pool) scope.pool.inflight++;
  const leave = () => {
    if (state === 'queued') scope.queueMs += close(queued);
    if (state === 'running') {
      scope.dbMs += close(running);
      scope.dbStatements++;
    }
  };
  return {
    queued() {
      if (state !== 'new') return;
      state = 'queued';
      open(queued);
    },
    running() {
      if (state === 'running' || state === 'done') return;
      leave();
      state = 'running';
      open(running);
    },
    done() {
      if (state === 'done') return;
      leave();
      state = 'done';
      if (scope.pool) scope.pool.inflight--;
    },
  };
}

function open(clock: Clock): void {
  if (clock.open++ === 0) clock.since = performance.now();
}

/** Closes one interval; returns the time to add (the union's length grows only when the last one closes). */
function close(clock: Clock): number {
  return --clock.open === 0 ? performance.now() - clock.since : 0;
}

const untracked: DbStatementTrack = { queued() {}, running() {}, done() {} };

/** What src/db is given (src/app.ts) to see requests: their identity and their statements' time. */
export const dbRequestScope: RequestScopeAccessor = { current: currentScope, track: trackDbStatement };
