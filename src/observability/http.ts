import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { performance } from 'node:perf_hooks';
import type { Logger } from './logger.js';
import type { Metrics } from './metrics.js';
import { newScope, runInScope, type PoolMeter, type RequestScope, type Surface } from './scope.js';

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
    if (scope.surface === 'rpc') sniffEnvelopeError(res, scope);
    runInScope(scope, req, () => handler(req, res));
  };
}

/**
 * Errors the JSON-RPC layer answers before any call is dispatched (parse error, empty or oversized
 * batch, wrong HTTP method, body too large) carry no method: their code is read from the reply itself,
 * a short envelope whose bytes are not changed.
 */
function sniffEnvelopeError(res: ServerResponse, scope: RequestScope) {
  const end = res.end;
  res.end = function sniffingEnd(this: ServerResponse, ...args: unknown[]) {
    const chunk = args[0];
    if (scope.rpc.length === 0 && (typeof chunk === 'string' || Buffer.isBuffer(chunk)) && chunk.length < 4_096) {
      const match = /^\{"jsonrpc":"2\.0","error":\{"code":(-?\d+)/.exec(chunk.toString());
      if (match) scope.envelopeCode = Number(match[1]);
    }
    return (end as (...a: unknown[]) => ServerResponse).apply(this, args);
  } as typeof res.end;
}

function record(deps: { logger: Logger; metrics: Metrics }, scope: RequestScope, req: IncomingMessage, res: ServerResponse, path: string) {
  const { logger, metrics } = deps;
  const ms = performance.now() - scope.startedAt;
  const status = res.statusCode;
  const aborted = !res.writableFinished;
  metrics.responses.inc({ surface: scope.surface, status: String(status) });
  const line: Record<string, unknown> = {
    reqId: scope.id,
    surface: scope.surface,
    method: req.method,
    path,
    status,
    ms: round(ms),
    dbMs: round(scope.dbMs),
    queueMs: round(scope.queueMs),
    dbStatements: scope.dbStatements,
  };
  if (aborted) line.aborted = true;
  if (scope.surface === 'graphql') {
    const operation = scope.operation ?? 'none';
    line.operation = operation;
    if (scope.cache) line.cache = scope.cache;
    if (scope.errorCodes.length) line.errors = [...new Set(scope.errorCodes)];
    // a GraphQL request (not the GraphiQL page, not a CORS preflight): it got as far as its parameters, or failed
    if (scope.operation !== undefined || scope.errorCodes.length > 0 || status >= 400) {
      const label = metrics.operationLabel(operation);
      const failed = scope.errorCodes.length > 0 || status >= 400;
      metrics.requests.inc({ surface: 'graphql', operation: label, outcome: failed ? 'error' : 'ok' });
      metrics.duration.observe({ surface: 'graphql', operation: label, cache: scope.cache ?? 'bypass' }, ms / 1000);
      for (const code of scope.errorCodes) metrics.errors.inc({ surface: 'graphql', code });
      if (scope.errorCodes.length === 0 && status >= 400) metrics.errors.inc({ surface: 'graphql', code: `HTTP_${status}` });
    }
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
      metrics.errors.inc({ surface: 'rpc', code: String(scope.envelopeCode) });
    }
  }
  if (scope.surface === 'graphql' || scope.surface === 'rpc') {
    metrics.dbTime.observe({ surface: scope.surface }, scope.dbMs / 1000);
    metrics.queueTime.observe({ surface: scope.surface }, scope.queueMs / 1000);
  }
  // 503 is an expected outage (shutting down, database unavailable, server busy): warn; other 5xx are the gateway's fault
  const level = scope.surface === 'probe' || scope.surface === 'metrics' ? 'debug'
    : status === 503 ? 'warn' : status >= 500 ? 'error' : 'info';
  logger[level](line, 'request');
}
