import { getOperationAST, type DocumentNode, type ExecutionResult, parse } from 'graphql';
import type { Plugin } from 'graphql-yoga';
import { Counter, Histogram } from 'prom-client';
import type { Metrics } from '../../observability/metrics.js';
import { currentScope, type CacheOutcome } from '../../observability/request.js';
import { dataAgeSeconds, type DataSnapshot } from '../../db/version.js';

/** What the series say of one operation: its type and its bounded name, with their label objects made once. */
interface Operation {
  byType: { operationType: string };
  byOperation: { operationType: string; operationName: string };
}

/** The series of yoga's Prometheus plugin (same names, help and labels), registered on the gateway's registry. */
function yogaSeries(metrics: Metrics) {
  const registers = [metrics.registry];
  const byType = (name: string, help: string) => new Histogram({ name, help, labelNames: ['operationType'] as const, registers });
  return {
    parse: byType('graphql_envelop_phase_parse', 'Time spent on running GraphQL "parse" function'),
    validate: byType('graphql_envelop_phase_validate', 'Time spent on running GraphQL "validate" function'),
    context: byType('graphql_envelop_phase_context', 'Time spent on building the GraphQL context'),
    execute: new Histogram({
      name: 'graphql_envelop_phase_execute', help: 'Time spent on running the GraphQL "execute" function', labelNames: ['operationType', 'operationName'] as const, registers,
    }),
    requests: new Counter({
      name: 'graphql_envelop_request', help: 'Counts the amount of GraphQL requests executed through Envelop', labelNames: ['operationType', 'operationName'] as const, registers,
    }),
    errors: new Counter({
      name: 'graphql_envelop_error_result', help: 'Counts the amount of errors reported from all phases', labelNames: ['operationType', 'operationName', 'phase'] as const, registers,
    }),
    http: new Histogram({
      name: 'graphql_yoga_http_duration', help: 'Time spent on HTTP connection', labelNames: ['operationType', 'method', 'statusCode'] as const, registers,
    }),
  };
}

/** The operation a document runs under a request's operationName, memoised per document (a few names each). */
function operationsOf(metrics: Metrics) {
  const memo = new WeakMap<DocumentNode, Map<string, Operation>>();
  return (document: DocumentNode, requested: unknown): Operation => {
    const key = typeof requested === 'string' ? requested : '';
    let byName = memo.get(document);
    let op = byName?.get(key);
    if (op) return op;
    const ast = getOperationAST(document, key || undefined) ??
      document.definitions.find((d) => d.kind === 'OperationDefinition');
    const operationType = ast?.kind === 'OperationDefinition' ? ast.operation : 'unknown';
    const name = key || (ast?.kind === 'OperationDefinition' ? ast.name?.value : undefined) || 'Anonymous';
    op = { byType: { operationType }, byOperation: { operationType, operationName: metrics.operationLabel(name) } };
    if (!byName) memo.set(document, (byName = new Map()));
    else if (byName.size >= 16) byName.clear(); // operationName is client text: a few per document are kept
    byName.set(key, op);
    return op;
  };
}

const unparsed: Operation = { byType: { operationType: 'unknown' }, byOperation: { operationType: 'unknown', operationName: 'Anonymous' } };
const seconds = (since: number) => (Date.now() - since) / 1000;

/** One request's way through the phases: when each began, its operation once known, its cache outcome. */
interface RequestState {
  start: number;
  parsing?: number;
  validating?: number;
  building?: number;
  op?: Operation;
  outcome?: CacheOutcome;
}

/** The yoga series' part of the plugin: each phase is timed from the start of the next one (no hook after a phase). */
function yogaPhases(metrics: Metrics) {
  const series = yogaSeries(metrics);
  const operationOf = operationsOf(metrics);
  const stateOf = (context: unknown, states: WeakMap<Request, RequestState>) => {
    const request = (context as { request?: Request } | null)?.request;
    return request ? states.get(request) : undefined;
  };
  const countErrors = (op: Operation, result: ExecutionResult, phase: string) => {
    const n = result.errors?.length ?? 0;
    for (let i = 0; i < n; i++) series.errors.inc({ ...op.byOperation, phase });
  };
  return { series, operationOf, stateOf, countErrors };
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
 * records the cache outcome (metrics, log, `x-cache` header) and the error codes; and keeps the series of yoga's
 * Prometheus plugin (same names, help and labels, every label bounded: client-chosen operation names go through
 * the igw_* series' guard, no error `path` or URL label) with as few hooks as they need, each hook costing every
 * request its share of yoga's and envelop's plumbing.
 */
export function graphqlObservability(options: GraphqlObservabilityOptions): Plugin {
  const states = new WeakMap<Request, RequestState>();
  const names = operationNames();
  const phases = yogaPhases(options.metrics);
  const { series, stateOf } = phases;
  return {
    onPluginInit({ registerContextErrorHandler }) {
      registerContextErrorHandler(({ context }) => {
        series.errors.inc({ ...(stateOf(context, states)?.op ?? unparsed).byOperation, phase: 'context' });
      });
    },
    onRequest({ request }) {
      options.snapshots.capture(request);
      states.set(request, { start: Date.now() });
    },
    onParams({ params }) {
      const scope = currentScope();
      if (scope) scope.operation = names(params.query, params.operationName);
    },
    ...phaseHooks(states, phases),
    onResultProcess({ request, result, setResult }) {
      if (Array.isArray(result) || !isExecutionResult(result)) return;
      const state = states.get(request);
      if (state) phaseFailure(state, series);
      const snapshot = options.snapshots.get(request);
      const outcome = cacheOutcome(options, request, result, snapshot);
      if (state) state.outcome = outcome;
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
      const state = states.get(request);
      if (!state) return;
      if (state.outcome) response.headers.set('x-cache', state.outcome);
      if (state.op) series.http.observe({ operationType: state.op.byType.operationType, method: request.method, statusCode: response.status }, seconds(state.start));
    },
  };
}

/** The hooks that time parse, validation, context building and execution, and count their results and errors. */
function phaseHooks(states: WeakMap<Request, RequestState>, phases: ReturnType<typeof yogaPhases>): Plugin {
  const { series, operationOf, stateOf, countErrors } = phases;
  return {
    onParse({ context }) {
      const state = stateOf(context, states);
      if (state) state.parsing = Date.now();
    },
    onValidate({ context, params }) {
      const state = stateOf(context, states);
      if (!state || state.parsing === undefined) return;
      const op = operationOf(params.documentAST, (context as { params?: { operationName?: unknown } }).params?.operationName);
      state.op = op;
      state.validating = Date.now();
      series.parse.observe(op.byType, (state.validating - state.parsing) / 1000);
    },
    onContextBuilding({ context }) {
      const state = stateOf(context, states);
      if (!state?.op || state.validating === undefined) return;
      state.building = Date.now();
      series.validate.observe(state.op.byType, (state.building - state.validating) / 1000);
    },
    onExecute({ args }) {
      const state = stateOf(args.contextValue, states);
      const op = state?.op;
      if (!op || state.building === undefined) return;
      const start = Date.now();
      series.context.observe(op.byType, (start - state.building) / 1000);
      const end = () => {
        series.execute.observe(op.byOperation, seconds(start));
        series.requests.inc(op.byOperation);
      };
      return {
        onExecuteDone({ result }) {
          if (!isExecutionResult(result)) return { onNext: ({ result: r }) => countErrors(op, r, 'execute'), onEnd: end };
          countErrors(op, result, 'execute');
          end();
          return undefined;
        },
      };
    },
    onSubscribe({ args }) {
      const op = stateOf(args.contextValue, states)?.op;
      if (!op) return;
      return {
        onSubscribeResult({ result }) {
          if (!isExecutionResult(result)) return { onNext: ({ result: r }) => countErrors(op, r, 'execute'), onEnd: () => series.requests.inc(op.byOperation) };
          countErrors(op, result, 'execute');
          series.requests.inc(op.byOperation);
          return undefined;
        },
        onSubscribeError() {
          series.errors.inc({ ...op.byOperation, phase: 'subscribe' });
        },
      };
    },
  };
}

/** Whether the answer came from the response cache (counted), was kept out of it, or is a miss. */
function cacheOutcome(options: GraphqlObservabilityOptions, request: Request, result: ExecutionResult, snapshot: DataSnapshot | null): CacheOutcome {
  if (!options.caching || !snapshot) return 'bypass';
  const outcome = options.fromCache(result) ? 'hit' : options.snapshots.bypassed(request) ? 'bypass' : 'miss';
  options.metrics.cacheLookups.inc({ surface: 'graphql', result: outcome });
  return outcome;
}

/** A request that began parsing and never built its context failed to parse (no operation) or to validate. */
function phaseFailure(state: RequestState, series: ReturnType<typeof yogaSeries>): void {
  if (state.parsing === undefined || state.building !== undefined) return;
  if (!state.op) series.errors.inc({ ...unparsed.byOperation, phase: 'parse' });
  else series.errors.inc({ ...state.op.byOperation, phase: 'validate' });
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
