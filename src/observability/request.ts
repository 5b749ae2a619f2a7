import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Logger } from 'pino';
import { newScope, releaseHeld, type PoolMeter, type RequestScope, type Surface } from '../request/scope.js';
import type { Metrics } from './metrics.js';

// One request's observability: observeRequests, called by the listener for each request, opens the
// request's scope (src/request/scope.ts), which the layers write into as the request runs, and writes the
// request's log line and metrics from it when the response ends.

// the GraphQL metrics plugin reads the scope under these names
export { currentScope, type CacheOutcome } from '../request/scope.js';

// --- request id, scope, log line and request metrics ----------------------------------

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
 * Opens a request's observability as the listener takes the request: a request id (accepted or generated,
 * echoed in `x-request-id`), the per-request scope (the listener runs the request in it), and when the
 * response is done one log line and the request metrics. Probes and scrapes are logged at debug level.
 */
export function observeRequests(deps: { logger: Logger; metrics: Metrics; pool: PoolMeter }) {
  return (req: IncomingMessage, res: ServerResponse): RequestScope => {
    const id = requestIdOf(req);
    res.setHeader('x-request-id', id);
    const path = (req.url ?? '/').split('?')[0]!;
    const scope = newScope(id, surfaceOf(path), deps.pool);
    deps.metrics.inFlight.inc();
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      releaseHeld(scope);
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
    return scope;
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
