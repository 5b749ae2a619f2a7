import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RpcCache } from '../cache/rpc.js';
import type { Context } from '../graphql/context.js';
import type { Metrics } from '../observability/metrics.js';
import { currentScope, type CacheOutcome } from '../request/scope.js';
import { createDispatch, type CallContext, type Dispatch } from './dispatch.js';
import { checkRequest, parseBody, serialise, type Reply } from './envelope.js';
import { rpcErrors, type RpcError } from './errors.js';
import type { MethodSpec, PagingLimits, RequestInfo } from './declaration.js';

// JSON-RPC 2.0 over HTTP: POST only, body and batch size capped, every batch
// element answered, notifications get no reply. The envelope (parsing, request checks, reply text) is
// src/rpc/envelope.ts; calling a method is src/rpc/dispatch.ts; this file is the transport and the batch.

export interface RpcOptions {
  /** Method tables per interface version. */
  tables: { v1: readonly MethodSpec[]; v2: readonly MethodSpec[] };
  newContext: () => Context;
  limits: PagingLimits;
  maxBodyBytes: number;
  maxBatch: number;
  /** Elements of one batch answered at once (they share the request's row budget and statement cap). */
  batchConcurrency: number;
  /** CORS response headers for a request (src/server/http.ts: one policy for both surfaces). */
  cors: (req: IncomingMessage) => Readonly<Record<string, string>>;
  onError?: (error: unknown, method: string) => void;
  /** Cache of successful results (key: method, exact params, interface version, data version). */
  cache?: RpcCache | null;
  /** The request metrics each answered call is counted in (the request log reads the request scope). */
  metrics?: Pick<Metrics, 'requests' | 'duration' | 'errors'>;
  /** The gateway's public base URL (`PUBLIC_URL`), which rpc.discover advertises instead of the Host header. */
  publicUrl?: string;
}

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

/**
 * The /v1 and /v2 handler. The flow, top to bottom: handleRpcRequest (HTTP method, body under its cap) →
 * replyToBody (parse, one call or a batch) → callOne (check, dispatch, report) → writeResponse.
 */
export function createRpcHandler(options: RpcOptions) {
  // each method's document is parsed and validated here, once, not per request
  const dispatchers = {
    // the v1 documentation spells some names in another case (address.transactions): v1 names match either way
    v1: createDispatch(options.tables.v1, options, { anyCase: true }),
    v2: createDispatch(options.tables.v2, options),
  };

  function writeResponse(res: ServerResponse, status: number, text: string | null, extra: Record<string, string> = {}) {
    const cors = options.cors(res.req);
    if (text === null) {
      res.writeHead(status, { ...cors, ...extra });
      res.end();
      return;
    }
    res.writeHead(status, {
      ...cors, ...extra, 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(text)),
    });
    res.end(text);
  }

  /** The reply text of an error answered before any call is dispatched, the request's only error in its log line. */
  function envelopeError(error: RpcError): string {
    const scope = currentScope();
    if (scope && scope.rpc.length === 0) scope.envelopeCode = error.code;
    return serialise({ id: null, error });
  }

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

  /** The calls of one request share a GraphQL context; a raised page-size clamp keeps them out of the shared cache. */
  function requestCalls(iface: Iface, request: RequestInfo, raised: PagingLimits | null): RequestCalls {
    const graphql = options.newContext();
    if (raised) graphql.paging = raised;
    return { graphql, cache: raised ? null : options.cache?.forRequest(iface) ?? null, request };
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
      return answered(reply ? serialise(reply) : null);
    }
    if (parsed.length === 0) return answered(envelopeError(rpcErrors.invalidRequest('empty batch')));
    if (parsed.length > options.maxBatch) return answered(envelopeError(rpcErrors.invalidRequest(`batch exceeds ${options.maxBatch} requests`)));
    // a few elements at a time, in order: a batch is one request's share of the pool, not a hundred
    // requests' (and its DataLoaders batch at most that many elements' pages into one statement)
    const shared = calls();
    const replies = (await mapBounded(parsed, options.batchConcurrency, (element) => callOne(element, shared, iface, outcomes)))
      .filter((r): r is Reply => r !== null);
    return answered(replies.length === 0 ? null : `[${replies.map(serialise).join(',')}]`);
  }

  return function handleRpcRequest(req: IncomingMessage, res: ServerResponse, iface: Iface) {
    if (req.method === 'OPTIONS') return writeResponse(res, 204, null);
    if (req.method !== 'POST') {
      req.resume();
      return writeResponse(res, 405, envelopeError(rpcErrors.invalidRequest('use POST')), { allow: 'POST, OPTIONS' });
    }
    readBody(req, options.maxBodyBytes, {
      tooLarge: () => writeResponse(res, 413, envelopeError(rpcErrors.invalidRequest(`body exceeds ${options.maxBodyBytes} bytes`)), { connection: 'close' }),
      failed: () => res.destroy(),
      read: (body) => {
        const calls = () => requestCalls(iface, requestInfo(req, options.publicUrl), keyPaging(options.limits));
        replyToBody(body, iface, calls).then(
          ({ status, text, cache }) => writeResponse(res, status, text, { 'x-cache': cache }),
          (error: unknown) => {
            options.onError?.(error, '(transport)');
            writeResponse(res, 200, envelopeError(rpcErrors.internal()));
          },
        );
      },
    });
  };
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
  const response = await dispatch(method, params, notification, context);
  if (notification || !response) return null;
  return response.error ? { id, error: response.error } : { id, result: response.result };
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
