import { createCounter, createHistogram, usePrometheus, type FillLabelsFnParams as LabelParams } from '@graphql-yoga/plugin-prometheus';
import { getOperationAST, parse, type ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import type { Metrics } from '../../observability/metrics.js';
import { currentScope, type CacheOutcome } from '../../observability/request.js';
import { dataAgeSeconds, type DataSnapshot } from '../../db/version.js';

/**
 * yoga's Prometheus plugin on the gateway's registry, every label bounded (client-chosen operation names go
 * through the igw_* series' guard; no error `path` or URL label), since its defaults label series with raw
 * client text.
 */
export function graphqlPrometheus(metrics: Metrics): Plugin {
  const { registry } = metrics;
  const operationType = (p: LabelParams) => p.operationType ?? 'unknown';
  const operationName = (p: LabelParams) => metrics.operationLabel(p.operationName ?? 'anonymous');
  const byType = <Phase extends string>(name: string, help: string) => createHistogram<Phase, 'operationType'>({
    registry,
    histogram: { name, help, labelNames: ['operationType'] },
    fillLabelsFn: (p) => ({ operationType: operationType(p) }),
  });
  return usePrometheus({
    registry,
    endpoint: false,
    metrics: {
      graphql_envelop_phase_parse: byType<'parse'>('graphql_envelop_phase_parse', 'Time spent on running GraphQL "parse" function'),
      graphql_envelop_phase_validate: byType<'validate'>('graphql_envelop_phase_validate', 'Time spent on running GraphQL "validate" function'),
      graphql_envelop_phase_context: byType<'context'>('graphql_envelop_phase_context', 'Time spent on building the GraphQL context'),
      graphql_envelop_phase_execute: createHistogram<'execute', 'operationType' | 'operationName'>({
        registry,
        histogram: { name: 'graphql_envelop_phase_execute', help: 'Time spent on running the GraphQL "execute" function', labelNames: ['operationType', 'operationName'] },
        fillLabelsFn: (p) => ({ operationType: operationType(p), operationName: operationName(p) }),
      }),
      graphql_envelop_request: createCounter<'execute' | 'subscribe', 'operationType' | 'operationName'>({
        registry,
        counter: { name: 'graphql_envelop_request', help: 'Counts the amount of GraphQL requests executed through Envelop', labelNames: ['operationType', 'operationName'] },
        fillLabelsFn: (p) => ({ operationType: operationType(p), operationName: operationName(p) }),
      }),
      graphql_envelop_error_result: createCounter<'parse' | 'validate' | 'context' | 'execute' | 'subscribe', 'operationType' | 'operationName' | 'phase'>({
        registry,
        counter: { name: 'graphql_envelop_error_result', help: 'Counts the amount of errors reported from all phases', labelNames: ['operationType', 'operationName', 'phase'] },
        fillLabelsFn: (p) => ({ operationType: operationType(p), operationName: operationName(p), phase: p.errorPhase ?? 'unknown' }),
      }),
      graphql_yoga_http_duration: createHistogram<'request', 'operationType' | 'method' | 'statusCode', LabelParams & { request: Request; response: Response }>({
        registry,
        histogram: { name: 'graphql_yoga_http_duration', help: 'Time spent on HTTP connection', labelNames: ['operationType', 'method', 'statusCode'] },
        fillLabelsFn: (p) => ({ operationType: operationType(p), method: p.request.method, statusCode: p.response.status }),
      }),
      // the same figure as graphql_envelop_phase_execute (the plugin times the execute phase for both)
      graphql_envelop_request_duration: false,
      graphql_envelop_request_time_summary: false,
      graphql_envelop_phase_subscribe: false,
      // off: it walks every document with TypeInfo on every request, and the schema deprecates nothing
      graphql_envelop_deprecated_field: false,
      graphql_envelop_schema_change: false,
      graphql_envelop_execute_resolver: false,
    },
  });
}

export interface GraphqlObservabilityOptions {
  /** The data snapshot each request is answered from (src/cache/graphql.ts's createRequestSnapshots). */
  snapshots: {
    capture(request: Request): DataSnapshot | null;
    get(request: Request): DataSnapshot | null;
    bypassed(request: Request): boolean;
  };
  metrics: Metrics;
  /** Whether the response cache is installed (else every request is a 'bypass'). */
  caching: boolean;
  /** Whether a result was served from the response cache (src/cache/graphql.ts, passed in by src/app.ts). */
  fromCache: (result: object) => boolean;
}

/**
 * Per request: takes the data snapshot, names the operation for the request log, and on the way out adds
 * `extensions.freshness` (the data version, the indexed height per chain the answer comes from and the data's
 * age: seconds since the newest indexed block time),
 * records the cache outcome (metrics, log, `x-cache` header) and the error codes.
 */
export function graphqlObservability(options: GraphqlObservabilityOptions): Plugin {
  const outcomes = new WeakMap<Request, CacheOutcome>();
  const names = operationNames();
  return {
    onRequest({ request }) {
      options.snapshots.capture(request);
    },
    onParams({ params }) {
      const scope = currentScope();
      if (scope) scope.operation = names(params.query, params.operationName);
    },
    onResultProcess({ request, result, setResult }) {
      if (Array.isArray(result) || !isExecutionResult(result)) return;
      const snapshot = options.snapshots.get(request);
      let outcome: CacheOutcome = 'bypass';
      if (options.caching && snapshot) {
        outcome = options.fromCache(result) ? 'hit'
          : options.snapshots.bypassed(request) ? 'bypass' : 'miss';
        options.metrics.cacheLookups.inc({ surface: 'graphql', result: outcome });
      }
      outcomes.set(request, outcome);
      const scope = currentScope();
      if (scope) {
        scope.cache = outcome;
        for (const error of result.errors ?? []) scope.errorCodes.push(String(error.extensions?.code ?? 'INTERNAL_SERVER_ERROR'));
      }
      if (snapshot) {
        // a new object: the cached one (held by reference in memory) stays as it was stored
        setResult({
          ...result,
          extensions: { ...result.extensions, freshness: { dataVersion: snapshot.version, indexedHeights: snapshot.heights, dataAgeSeconds: dataAgeSeconds(snapshot) } },
        });
      }
    },
    onResponse({ request, response }) {
      const outcome = outcomes.get(request);
      if (outcome) response.headers.set('x-cache', outcome);
    },
  };
}

function isExecutionResult(value: unknown): value is ExecutionResult {
  return typeof value === 'object' && value !== null && !(Symbol.asyncIterator in value);
}

/** Operation name of a request (for logs): the one asked for, else the document's, memoised per document. */
function operationNames(max = 500) {
  const memo = new Map<string, string>();
  // a name is client text of any length: the log line keeps its first 128 characters
  const clip = (name: string) => (name.length > 128 ? `${name.slice(0, 128)}…` : name);
  return (query: unknown, operationName: unknown): string => {
    // both come straight from the client's JSON and may be any value (yoga rejects that later)
    if (typeof operationName === 'string' && operationName !== '') return clip(operationName);
    if (typeof query !== 'string' || query === '') return 'none';
    let name = memo.get(query);
    if (name === undefined) {
      // bounded work on untrusted text: the limits of src/graphql/plugins/use-guards.ts apply later, not here
      if (query.length > 20_000) return 'unknown';
      try {
        name = clip(getOperationAST(parse(query, { noLocation: true, maxTokens: 5_000 }))?.name?.value ?? 'anonymous');
      } catch {
        name = 'invalid';
      }
      if (memo.size >= max) memo.clear();
      memo.set(query, name);
    }
    return name;
  };
}
