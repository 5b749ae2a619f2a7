import { AsyncLocalStorage } from 'node:async_hooks';
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import type { DbStatementTrack, RequestScopeAccessor } from '../db/scope.js';
import type { Metrics, PoolMeter } from './metrics.js';

// One request's observability: a per-request scope the layers record into through the hooks the
// composition root hands them (statements, JSON-RPC calls and envelope errors, loader batches), so that
// nothing threads it through every signature; the HTTP wrapper (observeRequests) opens it and writes the
// request's log line and metrics when the response ends.

export type Surface = 'graphql' | 'rpc' | 'metrics' | 'probe' | 'other';
export type CacheOutcome = 'hit' | 'miss' | 'bypass';

export type { PoolMeter };

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
  /** Statements of the request holding a connection / waiting for one, and since when (interval unions). */
  clocks: { running: Clock; queued: Clock };
  /**
   * Read from the primary only: a subscription event was announced by the primary's NOTIFY, and a replica
   * may not have replayed its rows yet (src/db/sources.ts).
   */
  primaryOnly?: boolean;
  /** The API key's name (set by the access hook, src/access/http-hook.ts): never the key itself. */
  keyName?: string;
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
  if (parent) storage.enterWith({ ...newScope(parent.id, parent.surface, parent.pool), primaryOnly: true, keyName: parent.keyName });
}

/** Runs `fn` inside the scope (the listener binds the request's own events to the handler's context). */
export function runInScope(scope: RequestScope, fn: () => void): void {
  storage.run(scope, fn);
}

/**
 * Called by the statement runner when a statement asks for a connection. Outside a request (start-up,
 * tools) it costs nothing. Overlapping statements of one request are counted once: dbMs and queueMs are
 * the lengths of the unions of their intervals.
 */
export function trackDbStatement(): DbStatementTrack {
  const scope = storage.getStore();
  return scope ? new StatementTrack(scope) : untracked;
}

/** One statement's states (one object per statement, no closures: this runs for every statement). */
class StatementTrack implements DbStatementTrack {
  private state: 'new' | 'queued' | 'running' | 'done' = 'new';

  constructor(private readonly scope: RequestScope) {
    if (scope.pool) scope.pool.inflight++;
  }

  queued(): void {
    if (this.state !== 'new') return;
    this.state = 'queued';
    open(this.scope.clocks.queued);
  }

  running(): void {
    if (this.state === 'running' || this.state === 'done') return;
    this.leave();
    this.state = 'running';
    open(this.scope.clocks.running);
  }

  done(): void {
    if (this.state === 'done') return;
    this.leave();
    this.state = 'done';
    if (this.scope.pool) this.scope.pool.inflight--;
  }

  private leave(): void {
    const { scope } = this;
    if (this.state === 'queued') scope.queueMs += close(scope.clocks.queued);
    if (this.state === 'running') {
      scope.dbMs += close(scope.clocks.running);
      scope.dbStatements++;
    }
  }
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

export interface RpcCallInfo {
  /**
   * The method as its table spells it (a v1 name sent in another letter case is labelled by its canonical
   * name); undefined when no method ran (unknown, -32601, or an invalid request, -32600).
   */
  method: string | undefined;
  /** The method as sent (anything, for an invalid request): the log shows it, cut, when no method ran. */
  sent: unknown;
  iface: 'v1' | 'v2';
  /** JSON-RPC error code of the reply; undefined on success. */
  code?: number;
  cache?: CacheOutcome;
  ms: number;
}

/**
 * What the JSON-RPC layer reports: each answered call (metrics per method and the request log's entry) and
 * an error answered before any call was dispatched. A method the tables do not have (-32601) or a
 * malformed request (-32600) gets a fixed label, so clients cannot add series by inventing names.
 */
export function rpcObserver(metrics: Metrics) {
  return {
    call(call: RpcCallInfo): void {
      // one label per method of the tables, plus two: what the client sent is never a label
      const label = call.method ?? (call.code === -32601 ? '(unknown)' : '(invalid)');
      const operation = `${call.iface}:${label}`;
      metrics.requests.inc({ surface: 'rpc', operation, outcome: call.code === undefined ? 'ok' : 'error' });
      metrics.duration.observe({ surface: 'rpc', operation, cache: call.cache ?? 'bypass' }, call.ms / 1000);
      if (call.code !== undefined) metrics.errors.inc({ surface: 'rpc', code: String(call.code) });
      // the log: the canonical name; for an unknown method what was sent (cut: a typo is worth seeing)
      const sent = typeof call.sent === 'string' ? call.sent : '(invalid)';
      const logged = call.method ?? (sent.length > 64 ? `${sent.slice(0, 64)}…` : sent);
      currentScope()?.rpc.push({ method: logged, code: call.code, cache: call.cache ?? 'bypass' });
    },
    /** Parse error, empty or oversized batch, wrong HTTP method, body too large: the request's only error. */
    envelopeError(code: number): void {
      const scope = currentScope();
      if (scope && scope.rpc.length === 0) scope.envelopeCode = code;
    },
  };
}

export type RpcObserver = ReturnType<typeof rpcObserver>;

/**
 * Reports DataLoader batch sizes without touching the loaders: every batch function of the loaders calls
 * one store method with the batch's keys as first argument (an array), so the store's array-taking
 * methods are wrapped to observe that array's length, labelled `<sub-store>.<method>`. Other methods and
 * properties (sql, ping) pass through unchanged.
 */
export function instrumentStore<S extends object>(store: S, metrics: Metrics): S {
  const wrapped: Record<string, unknown> = { ...(store as Record<string, unknown>) };
  for (const [name, sub] of Object.entries(store)) {
    // plain sub-store objects only (their methods are own properties); anything else passes through as is
    if (typeof sub !== 'object' || sub === null || Object.getPrototypeOf(sub) !== Object.prototype) continue;
    const methods: Record<string, unknown> = { ...sub };
    for (const [method, fn] of Object.entries(sub)) {
      if (typeof fn !== 'function') continue;
      const batch = `${name}.${method}`;
      methods[method] = function observed(this: unknown, ...args: unknown[]) {
        if (Array.isArray(args[0])) metrics.batchSize.observe({ batch }, args[0].length);
        return (fn as (...a: unknown[]) => unknown).apply(sub, args);
      };
    }
    wrapped[name] = methods;
  }
  return wrapped as S;
}

// --- the HTTP wrapper: request id, scope, log line and request metrics ----------------------------------

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

// A request id may come from a proxy or the client (x-request-id); anything that is not a plain token is
// replaced, so log lines cannot be forged or bloated through it.
const acceptableId = /^[A-Za-z0-9._:@+=/-]{1,128}$/;

export function requestIdOf(req: IncomingMessage): string {
  const sent = req.headers['x-request-id'];
  const value = Array.isArray(sent) ? sent[0] : sent;
  return value && acceptableId.test(value) ? value : randomUUID();
}

export function surfaceOf(path: string): Surface {
  if (path === '/graphql' || path.startsWith('/graphql/')) return 'graphql';
  if (/^\/v[12](\/|$)/.test(path)) return 'rpc';
  if (path === '/metrics') return 'metrics';
  if (path === '/healthz' || path === '/readyz') return 'probe';
  return 'other';
}

const round = (ms: number) => Math.round(ms * 100) / 100;

/**
 * Wraps the gateway's HTTP handler: a request id (accepted or generated, echoed in `x-request-id`), the
 * per-request scope, and when the response is done one log line and the request metrics. Probes and
 * scrapes are logged at debug level.
 */
export function observeRequests(deps: { logger: Logger; metrics: Metrics; pool: PoolMeter }) {
  return (handler: Handler): Handler => (req, res) => {
    const id = requestIdOf(req);
    res.setHeader('x-request-id', id);
    const path = (req.url ?? '/').split('?')[0]!;
    const scope = newScope(id, surfaceOf(path), deps.pool);
    deps.metrics.inFlight.inc();
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      deps.metrics.inFlight.dec();
      // runs in a socket event: anything thrown here would be an uncaught exception and end the process
      try {
        record(deps, scope, req, res, path);
      } catch (error) {
        deps.logger.error({ err: error, reqId: id }, 'request log/metrics failed');
      }
    };
    res.once('finish', finish);
    res.once('close', finish);
    runInScope(scope, () => handler(req, res));
  };
}

function record(deps: { logger: Logger; metrics: Metrics }, scope: RequestScope, req: IncomingMessage, res: ServerResponse, path: string) {
  const { logger, metrics } = deps;
  const ms = performance.now() - scope.startedAt;
  const status = res.statusCode;
  metrics.responses.inc({ surface: scope.surface, status: String(status) });
  if (scope.surface === 'graphql') recordGraphql(metrics, scope, status, ms);
  else if (scope.surface === 'rpc' && scope.rpc.length === 0 && scope.envelopeCode !== undefined) {
    metrics.errors.inc({ surface: 'rpc', code: String(scope.envelopeCode) });
  }
  if (scope.surface === 'graphql' || scope.surface === 'rpc') {
    metrics.dbTime.observe({ surface: scope.surface }, scope.dbMs / 1000);
    metrics.queueTime.observe({ surface: scope.surface }, scope.queueMs / 1000);
  }
  // 503 is an expected outage (shutting down, database unavailable, server busy): warn; other 5xx are the gateway's fault
  const level = scope.surface === 'probe' || scope.surface === 'metrics' ? 'debug'
    : status === 503 ? 'warn' : status >= 500 ? 'error' : 'info';
  // the line is built only when its level is logged (at LOG_LEVEL=warn, most requests' lines are not)
  if (logger.isLevelEnabled(level)) logger[level](logLine(scope, req, res, path, ms), 'request');
}

/** A GraphQL request's metrics (not the GraphiQL page, not a CORS preflight: one that got as far as its parameters, or failed). */
function recordGraphql(metrics: Metrics, scope: RequestScope, status: number, ms: number) {
  const failed = scope.errorCodes.length > 0 || status >= 400;
  if (scope.operation === undefined && !failed) return;
  const label = metrics.operationLabel(scope.operation ?? 'none');
  metrics.requests.inc({ surface: 'graphql', operation: label, outcome: failed ? 'error' : 'ok' });
  metrics.duration.observe({ surface: 'graphql', operation: label, cache: scope.cache ?? 'bypass' }, ms / 1000);
  for (const code of scope.errorCodes) metrics.errors.inc({ surface: 'graphql', code });
  if (scope.errorCodes.length === 0 && status >= 400) metrics.errors.inc({ surface: 'graphql', code: `HTTP_${status}` });
}

/** The request's log line. */
function logLine(scope: RequestScope, req: IncomingMessage, res: ServerResponse, path: string, ms: number): Record<string, unknown> {
  const line: Record<string, unknown> = {
    reqId: scope.id,
    surface: scope.surface,
    method: req.method,
    path,
    status: res.statusCode,
    ms: round(ms),
    dbMs: round(scope.dbMs),
    queueMs: round(scope.queueMs),
    dbStatements: scope.dbStatements,
  };
  if (scope.keyName !== undefined) line.key = scope.keyName;
  if (!res.writableFinished) line.aborted = true;
  if (scope.limit !== undefined) {
    line.failure = 'client';
    line.limit = scope.limit;
  }
  if (scope.surface === 'graphql') {
    line.operation = scope.operation ?? 'none';
    if (scope.cache) line.cache = scope.cache;
    if (scope.errorCodes.length) line.errors = [...new Set(scope.errorCodes)];
  } else if (scope.surface === 'rpc') {
    if (scope.rpc.length === 1) {
      const [call] = scope.rpc;
      line.rpcMethod = call!.method;
      if (call!.code !== undefined) line.code = call!.code;
      if (call!.cache) line.cache = call!.cache;
    } else if (scope.rpc.length > 1) {
      line.batch = scope.rpc.length;
      line.rpcMethods = scope.rpc.map((c) => c.method);
      const codes = scope.rpc.filter((c) => c.code !== undefined).map((c) => c.code);
      if (codes.length) line.codes = codes;
      line.cacheHits = scope.rpc.filter((c) => c.cache === 'hit').length;
    } else if (scope.envelopeCode !== undefined) {
      line.code = scope.envelopeCode;
    }
  }
  return line;
}
