import { usePrometheus } from '@graphql-yoga/plugin-prometheus';
import { getOperationAST, parse, type ExecutionResult } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { servedFromCache, type RequestSnapshots } from '../cache/graphql.js';
import type { Metrics } from './metrics.js';
import { currentScope, type CacheOutcome } from './scope.js';
import { dataAgeSeconds } from '../db/version.js';

/** yoga's Prometheus plugin on the gateway's registry; /metrics is served by the HTTP layer. */
export function graphqlPrometheus(metrics: Metrics): Plugin {
  return usePrometheus({
    registry: metrics.registry,
    endpoint: false,
    // the full URL would make a series per GET query string
    labels: { url: false },
    metrics: {
      graphql_envelop_request: true,
      graphql_envelop_request_duration: true,
      graphql_envelop_request_time_summary: false,
      graphql_envelop_phase_parse: true,
      graphql_envelop_phase_validate: true,
      graphql_envelop_phase_context: true,
      graphql_envelop_phase_execute: true,
      graphql_envelop_phase_subscribe: false,
      graphql_envelop_error_result: true,
      // off: it walks every document with TypeInfo on every request (~6 % of a small query's CPU, bench/results/),
      // and the schema deprecates nothing
      graphql_envelop_deprecated_field: false,
      graphql_envelop_schema_change: false,
      graphql_envelop_execute_resolver: false,
      graphql_yoga_http_duration: true,
    },
  });
}

export interface GraphqlObservabilityOptions {
  snapshots: RequestSnapshots;
  metrics: Metrics;
  /** Whether the response cache is installed (else every request is a 'bypass'). */
  caching: boolean;
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
        outcome = (result as unknown as Record<symbol, unknown>)[servedFromCache] ? 'hit' : 'miss';
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
  return (query: unknown, operationName: unknown): string => {
    // both come straight from the client's JSON and may be any value (yoga rejects that later)
    if (typeof operationName === 'string' && operationName !== '') return operationName;
    if (typeof query !== 'string' || query === '') return 'none';
    let name = memo.get(query);
    if (name === undefined) {
      // bounded work on untrusted text: the limits of src/graphql/guards.ts apply later, not here
      if (query.length > 20_000) return 'unknown';
      try {
        name = getOperationAST(parse(query, { noLocation: true, maxTokens: 5_000 }))?.name?.value ?? 'anonymous';
      } catch {
        name = 'invalid';
      }
      if (memo.size >= max) memo.clear();
      memo.set(query, name);
    }
    return name;
  };
}
