import type { IncomingMessage } from 'node:http';
import { TextDecoder } from 'node:util';
import jayson from 'jayson/promise/index.js';
import { isLosslessNumber, LosslessNumber, parse as parseLossless } from 'lossless-json';
import type { RpcCache, RpcRequestCache } from '../cache/rpc.js';
import { isJsonText } from '../domain/json-text.js';
import type { Context } from '../graphql/context.js';
import { prepareOperation } from '../graphql/prepared-operation.js';
import type { Metrics } from '../observability/metrics.js';
import { currentScope, holdAnswerBytes, liveAnswerBytes, type CacheOutcome, type RequestScope } from '../request/scope.js';
import { decodeParams, type MethodSpec, type PagingLimits, type RequestInfo } from './declaration.js';
import { fromGraphqlErrors, isRpcError, rpcErrors, type RpcError } from './errors.js';

// One JSON-RPC 2.0 request over HTTP, from its body to its reply: the transport (POST only, body and batch
// size capped, every batch element answered, notifications get no reply), the envelope (parsing, request
// checks, reply text; it knows neither HTTP nor the methods) and the dispatch of each call to its method.
// The methods themselves are declared in src/rpc/methods/.

export interface RpcOptions {
  /** Method tables per interface version. */
  tables: { v1: readonly MethodSpec[]; v2: readonly MethodSpec[] };
  newContext: () => Context;
  limits: PagingLimits;
  maxBodyBytes: number;
  maxBatch: number;
  /** Elements of one batch answered at once (they share the request's row budget and statement cap). */
  batchConcurrency: number;
  onError?: (error: unknown, method: string) => void;
  /** Cache of successful results (key: method, exact params, interface version, data version). */
  cache?: RpcCache | null;
  /** The request metrics each answered call is counted in (the request log reads the request scope). */
  metrics?: Pick<Metrics, 'requests' | 'duration' | 'errors'>;
  /** The gateway's public base URL (`PUBLIC_URL`), which rpc.discover advertises instead of the Host header. */
  publicUrl?: string;
  /** Reply bytes all requests in progress may hold (REQUESTS_MAX_ANSWER_BYTES_HELD) before heavy batches are cut short; default unbounded. */
  maxAnswerBytesHeld?: number;
}

/** The request holds heavy reply bytes while all requests together hold more than their bound (`max`). */
function answersBusy(max: number | undefined, scope: RequestScope | undefined): boolean {
  return max !== undefined && scope !== undefined && (scope.answerBytesHeld ?? 0) >= heavyAnswerBytes && liveAnswerBytes.bytes > max;
}

/** Reply bytes from which a batch counts as heavy for `maxAnswerBytesHeld` (as 1,000 rows are for the rows held). */
const heavyAnswerBytes = 256 * 1024;
const answersBusyReason = 'server overloaded: answer bytes held by all requests past REQUESTS_MAX_ANSWER_BYTES_HELD; retry with smaller requests or later';

// a Host header that is a plain host[:port] (a name, IPv4 or [IPv6]); anything else is not advertised
const plainHost = /^(?:[a-z0-9-]+(?:\.[a-z0-9-]+)*\.?|\[[0-9a-f:.]+\])(?::[0-9]{1,5})?$/i;

/** Where this request reached the gateway, as rpc.discover advertises it. */
export function requestInfo(req: IncomingMessage, publicUrl: string | undefined): RequestInfo {
  if (publicUrl) return { baseUrl: publicUrl };
  const host = req.headers.host;
  return { baseUrl: host && host.length <= 255 && plainHost.test(host) ? `http://${host}` : null };
}

type Iface = 'v1' | 'v2';

/** What every call of one HTTP request shares: its GraphQL context, its cache, where it was asked. */
type RequestCalls = Omit<CallContext, 'outcome'>;

/** What the listener writes for a JSON-RPC request: the status, the reply text (null: no body) and headers of its own. */
export interface RpcAnswer {
  status: number;
  text: string | null;
  headers?: Record<string, string>;
}

/**
 * The /v1 and /v2 handler. The flow, top to bottom: handleRpcRequest (HTTP method, body under its cap) →
 * replyToBody (parse, one call or a batch) → callOne (check, dispatch, report) → the answer the listener writes.
 */
export function createRpcHandler(options: RpcOptions) {
  // each method's document is parsed and validated here, once, not per request
  const dispatchers = {
    // the v1 documentation spells some names in another case (address.transactions): v1 names match either way
    v1: createDispatch(options.tables.v1, options, { anyCase: true }),
    v2: createDispatch(options.tables.v2, options),
  };

  /** One element of a body: checked, dispatched and reported; its reply, or null (a notification). */
  async function callOne(element: unknown, shared: RequestCalls, iface: Iface, outcomes: CacheOutcome[]): Promise<Reply | null> {
    const started = performance.now();
    const context: CallContext = { ...shared, outcome: {} };
    const reply = await dispatchChecked(dispatchers[iface], element, context);
    outcomes.push(context.outcome.cache ?? 'bypass');
    if (reply && (context.outcome.cache === 'hit' || context.outcome.cache === 'miss')) reply.cached = true;
    const sent = typeof element === 'object' && element !== null ? (element as { method?: unknown }).method : undefined;
    reportCall(options.metrics, {
      method: context.outcome.method, sent, iface, code: reply?.error?.code, cache: context.outcome.cache, ms: performance.now() - started,
    });
    return reply;
  }

  /** The HTTP status and text answering a whole body, and its `x-cache`. */
  async function replyToBody(body: Buffer, iface: Iface, calls: () => RequestCalls): Promise<{ status: number; text: string | null; cache: CacheOutcome }> {
    const outcomes: CacheOutcome[] = [];
    const answered = (text: string | null) => ({ status: text === null ? 204 : 200, text, cache: replyCacheOutcome(outcomes) });
    const read = parseBody(body);
    if ('reply' in read) return answered(envelopeError(read.reply.error!));
    const parsed = read.value;
    if (!Array.isArray(parsed)) {
      const reply = await callOne(parsed, calls(), iface, outcomes);
      if (reply === null) return answered(null);
      const text = serialise(reply);
      holdAnswerBytes(currentScope(), text.length);
      return answered(text);
    }
    if (parsed.length === 0) return answered(envelopeError(rpcErrors.invalidRequest('empty batch')));
    if (parsed.length > options.maxBatch) return answered(envelopeError(rpcErrors.invalidRequest(`batch exceeds ${options.maxBatch} requests`)));
    // a few elements at a time, in order: a batch is one request's share of the pool, not a hundred
    // requests' (and its DataLoaders batch at most that many elements' pages into one statement)
    const shared = calls();
    const scope = currentScope();
    // each reply becomes text as soon as it is answered (its objects freed), and its bytes are held until
    // the response ends: past the summed bound, a heavy batch's later elements are refused unrun
    const texts = await mapBounded(parsed, options.batchConcurrency, async (element) => {
      if (!shared.spent.error && answersBusy(options.maxAnswerBytesHeld, scope)) {
        shared.spent.error = rpcErrors.limitExceeded(answersBusyReason);
        scope!.limit ??= answersBusyReason; // the client's limit, on its request's line
      }
      const reply = await callOne(element, shared, iface, outcomes);
      if (reply === null) return null;
      const text = serialise(reply);
      holdAnswerBytes(scope, text.length);
      return text;
    });
    const replies = texts.filter((t): t is string => t !== null);
    return answered(replies.length === 0 ? null : `[${replies.join(',')}]`);
  }

  /**
   * The answer to a request on /v1 or /v2, for the listener to write (with its CORS headers): at once when
   * no body needs reading, else once the body is read and answered; null: the request failed (the listener
   * drops its connection).
   */
  return function handleRpcRequest(req: IncomingMessage, iface: Iface): RpcAnswer | Promise<RpcAnswer | null> {
    if (req.method === 'OPTIONS') return { status: 204, text: null };
    if (req.method !== 'POST') {
      req.resume();
      return { status: 405, text: envelopeError(rpcErrors.invalidRequest('use POST')), headers: { allow: 'POST, OPTIONS' } };
    }
    return new Promise((resolve) => readBody(req, options.maxBodyBytes, {
      tooLarge: () => resolve({
        status: 413, text: envelopeError(rpcErrors.invalidRequest(`body exceeds ${options.maxBodyBytes} bytes`)), headers: { connection: 'close' },
      }),
      failed: () => resolve(null),
      read: (body) => {
        const calls = () => requestCalls(options, iface, requestInfo(req, options.publicUrl), keyPaging(options.limits));
        resolve(replyToBody(body, iface, calls).then(
          ({ status, text, cache }): RpcAnswer => ({ status, text, headers: { 'x-cache': cache } }),
          (error: unknown): RpcAnswer => {
            options.onError?.(error, '(transport)');
            return { status: 200, text: envelopeError(rpcErrors.internal()) };
          },
        ));
      },
    }));
  };
}

/** The reply text of an error answered before any call is dispatched, the request's only error in its log line. */
function envelopeError(error: RpcError): string {
  const scope = currentScope();
  if (scope && scope.rpc.length === 0) scope.envelopeCode = error.code;
  return serialise({ id: null, error });
}

/** The calls of one request share a GraphQL context; a raised page-size clamp keeps them out of the shared cache. */
function requestCalls(options: RpcOptions, iface: Iface, request: RequestInfo, raised: PagingLimits | null): RequestCalls {
  const graphql = options.newContext();
  if (raised) graphql.paging = raised;
  return { graphql, cache: raised ? null : options.cache?.forRequest(iface) ?? null, request, spent: { error: null } };
}

/** A key's raised page-size clamp (api_keys.max_page_size above the default, set in the request scope by the access hook), or null. */
function keyPaging(limits: PagingLimits): PagingLimits | null {
  const max = currentScope()?.keyMaxPageSize;
  return max !== undefined && max > limits.maxPageSize ? { ...limits, maxPageSize: max } : null;
}

interface RpcCallInfo {
  /**
   * The method as its table spells it (a v1 name sent in another letter case is labelled by its canonical
   * name); undefined when no method ran (unknown, -32601, or an invalid request, -32600).
   */
  method: string | undefined;
  /** The method as sent (anything, for an invalid request): the log shows it, cut, when no method ran. */
  sent: unknown;
  iface: Iface;
  /** JSON-RPC error code of the reply; undefined on success. */
  code?: number;
  cache?: CacheOutcome;
  ms: number;
}

/**
 * An answered call in the metrics (per method) and in the request scope (the request log's entry). A method
 * the tables do not have (-32601) or a malformed request (-32600) gets a fixed label, so clients cannot add
 * series by inventing names.
 */
function reportCall(metrics: RpcOptions['metrics'], call: RpcCallInfo): void {
  // one label per method of the tables, plus two: what the client sent is never a label
  const label = call.method ?? (call.code === -32601 ? '(unknown)' : '(invalid)');
  const operation = `${call.iface}:${label}`;
  metrics?.requests.inc({ surface: 'rpc', operation, outcome: call.code === undefined ? 'ok' : 'error' });
  metrics?.duration.observe({ surface: 'rpc', operation, cache: call.cache ?? 'bypass' }, call.ms / 1000);
  if (call.code !== undefined) metrics?.errors.inc({ surface: 'rpc', code: String(call.code) });
  // the log: the canonical name; for an unknown method what was sent (cut: a typo is worth seeing)
  const sent = typeof call.sent === 'string' ? call.sent : '(invalid)';
  const logged = call.method ?? (sent.length > 64 ? `${sent.slice(0, 64)}…` : sent);
  currentScope()?.rpc.push({ method: logged, code: call.code, cache: call.cache ?? 'bypass' });
}

/** A checked element dispatched: the reply to a valid request, the refusal of an invalid one, or null. */
async function dispatchChecked(dispatch: Dispatch, element: unknown, context: CallContext): Promise<Reply | null> {
  const checked = checkRequest(element);
  if ('reply' in checked) return checked.reply;
  const { id, notification, method, params } = checked.request;
  // the request's row or database time budget, once spent, refuses every later element: answered here
  // without running them, each at the cost of a copy of the error rather than a refused statement
  if (context.spent.error) return notification ? null : { id, error: context.spent.error };
  const response = await dispatch(method, params, notification, context);
  if (response?.error && spendsRequest(response.error)) context.spent.error = response.error;
  if (notification || !response) return null;
  return response.error ? { id, error: response.error } : { id, result: response.result };
}

/** A -32005 of the request's own budgets or of the rows all requests hold (src/db/errors.ts): the later elements would meet it too. */
function spendsRequest(error: RpcError): boolean {
  const reason = (error.data as { reason?: unknown } | undefined)?.reason;
  return error.code === -32005 && typeof reason === 'string' &&
    (reason === 'request row budget exceeded' || reason === 'request database time budget exceeded' || reason.startsWith('server overloaded: rows held') ||
      reason === answersBusyReason);
}

/** Reads a request's body, up to `limit` bytes: past it, `tooLarge` once and the rest is drained unread. */
function readBody(req: IncomingMessage, limit: number, on: { tooLarge: () => void; failed: () => void; read: (body: Buffer) => void }) {
  const chunks: Buffer[] = [];
  let size = 0;
  let tooLarge = false;
  req.on('data', (chunk: Buffer) => {
    if (tooLarge) return;
    size += chunk.length;
    if (size > limit) {
      tooLarge = true;
      chunks.length = 0;
      on.tooLarge();
      req.resume();
      return;
    }
    chunks.push(chunk);
  });
  req.on('error', on.failed);
  req.on('end', () => {
    if (!tooLarge) on.read(Buffer.concat(chunks));
  });
}

/**
 * The `x-cache` header of a reply, as GraphQL's: one call's outcome; for a batch `hit` when every call was
 * answered from the cache, `bypass` when none looked it up, else `miss`. Nothing answered: `bypass`.
 */
function replyCacheOutcome(outcomes: readonly CacheOutcome[]): CacheOutcome {
  if (outcomes.length === 0) return 'bypass';
  if (outcomes.every((o) => o === 'hit')) return 'hit';
  if (outcomes.every((o) => o === 'bypass')) return 'bypass';
  return 'miss';
}

/** `fn` over `items` with at most `limit` calls pending at once; results in the items' order. */
async function mapBounded<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return results;
}

// --- the envelope: parsing a body (big integers kept as their source text), checking one request object,
// and writing one reply in the interface's member order

type Id = string | number | LosslessNumber | null;
interface Reply {
  id: Id;
  result?: unknown;
  error?: RpcError;
  /** The result went through the response cache (a hit, or just stored): it may be JSON text already. */
  cached?: boolean;
}

const decoder = new TextDecoder('utf-8', { fatal: true });
// Safe integers become numbers; anything else (fractions, exponents, big integers) keeps its exact text.
const parseNumber = (text: string) => {
  if (/^-?\d+$/.test(text)) {
    const n = Number(text);
    if (Number.isSafeInteger(n)) return n;
  }
  return new LosslessNumber(text);
};

/** The parsed body, or the -32700 reply for one that is not UTF-8 JSON. */
function parseBody(body: Buffer): { value: unknown } | { reply: Reply } {
  try {
    const text = decoder.decode(body);
    if (text.trim() === '') throw new SyntaxError('empty body');
    return { value: parseLossless(text, null, parseNumber) };
  } catch {
    return { reply: { id: null, error: rpcErrors.parse() } };
  }
}

function idText(id: Id): string {
  if (id === null) return 'null';
  if (isLosslessNumber(id)) return id.value;
  return JSON.stringify(id);
}

/** Envelope in the interface's member order: jsonrpc, result | error, id. */
function serialise(reply: Reply): string {
  // a result from the cache (or just stored in it) is JSON text already; any other is a plain value
  const body = reply.error ? `"error":${JSON.stringify(reply.error)}`
    : `"result":${reply.cached && isJsonText(reply.result) ? reply.result.text : JSON.stringify(reply.result ?? null)}`;
  return `{"jsonrpc":"2.0",${body},"id":${idText(reply.id)}}`;
}

/** A request that passed the envelope checks. */
interface Request { id: Id; notification: boolean; method: string; params: unknown[] }

/**
 * Checks one element of a body: a request to dispatch, or the reply that refuses it (null: a
 * notification that is refused gets no reply).
 */
function checkRequest(element: unknown): { request: Request } | { reply: Reply | null } {
  if (typeof element !== 'object' || element === null || Array.isArray(element)) {
    return { reply: { id: null, error: rpcErrors.invalidRequest('a request must be an object') } };
  }
  const request = element as Record<string, unknown>;
  const hasId = 'id' in request;
  const rawId = request.id;
  const validId = rawId === null || typeof rawId === 'string' || typeof rawId === 'number' || isLosslessNumber(rawId);
  if (hasId && !validId) return { reply: { id: null, error: rpcErrors.invalidRequest('id must be a string, a number or null') } };
  const id = (hasId ? rawId : null) as Id;
  if (request.jsonrpc !== '2.0') return { reply: { id, error: rpcErrors.invalidRequest('jsonrpc must be "2.0"') } };
  if (typeof request.method !== 'string') return { reply: { id, error: rpcErrors.invalidRequest('method must be a string') } };
  const params = request.params;
  if (params !== undefined && typeof params !== 'object') return { reply: { id, error: rpcErrors.invalidRequest('params must be an array') } };
  if (params !== null && params !== undefined && !Array.isArray(params)) {
    return { reply: hasId ? { id, error: rpcErrors.invalidParams('params must be an array (they are positional)') } : null };
  }
  return { request: { id, notification: !hasId, method: request.method, params: (params ?? []) as unknown[] } };
}

// --- dispatch of one checked request to its method through jayson (method lookup, notification semantics):
// decode the positional params, answer from the cache or run the method's GraphQL document in-process,
// reshape. Errors are JSON-RPC errors; anything unexpected is -32604 and goes to `onError`.

/**
 * What a method handler gets: the request's GraphQL context and cache, and its own call's outcome: the
 * cache outcome and the method's name as the table spells it (v1 names match in any letter case; metrics
 * and logs use this name, never the one sent, so letter case cannot add series). Unset: no method ran.
 */
interface CallContext {
  graphql: Context;
  cache: RpcRequestCache | null;
  request: RequestInfo;
  outcome: { cache?: CacheOutcome; method?: string };
  /** Shared by the calls of one request: the error of its spent budget, once an element met it. */
  spent: { error: RpcError | null };
}

interface DispatchOptions {
  limits: PagingLimits;
  onError?: (error: unknown, method: string) => void;
}

/** Calls a method: the success or error response, or nothing for a notification. */
type Dispatch = (method: string, params: unknown[], notification: boolean, context: CallContext) =>
  Promise<{ result?: unknown; error?: RpcError } | undefined>;

function createDispatch(table: readonly MethodSpec[], options: DispatchOptions, naming: { anyCase?: boolean } = {}): Dispatch {
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
