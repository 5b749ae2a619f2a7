import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RpcCache } from '../cache/rpc.js';
import type { Context } from '../graphql/context.js';
import type { CacheOutcome, RpcCallInfo } from '../observability/request.js';
import { createDispatch, type CallContext, type Dispatch } from './dispatch.js';
import { checkRequest, parseBody, serialise, type Reply } from './envelope.js';
import { rpcErrors } from './errors.js';
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
  /** Called once per answered call (metrics and the request log). */
  onCall?: (call: RpcCallInfo) => void;
  /** The gateway's public base URL (`PUBLIC_URL`), which rpc.discover advertises instead of the Host header. */
  publicUrl?: string;
  /** A request's raised page-size clamp (an API key's override), or null for the default `limits`. */
  pagingFor?: (req: IncomingMessage) => PagingLimits | null;
}

// a Host header that is a plain host[:port] (a name, IPv4 or [IPv6]); anything else is not advertised
const plainHost = /^(?:[a-z0-9-]+(?:\.[a-z0-9-]+)*\.?|\[[0-9a-f:.]+\])(?::[0-9]{1,5})?$/i;

/** Where this request reached the gateway, as rpc.discover advertises it. */
export function requestInfo(req: IncomingMessage, publicUrl: string | undefined): RequestInfo {
  if (publicUrl) return { baseUrl: publicUrl };
  const host = req.headers.host;
  return { baseUrl: host && host.length <= 255 && plainHost.test(host) ? `http://${host}` : null };
}

export function createRpcHandler(options: RpcOptions) {
  // each method's document is parsed and validated here, once, not per request
  const dispatchers = {
    // the v1 documentation spells some names in another case (address.transactions): v1 names match either way
    v1: createDispatch(options.tables.v1, options, { anyCase: true }),
    v2: createDispatch(options.tables.v2, options),
  };
  function send(res: ServerResponse, status: number, text: string | null, extra: Record<string, string> = {}) {
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

  async function answer(dispatch: Dispatch, element: unknown, context: Omit<CallContext, 'outcome'>, iface: 'v1' | 'v2', outcomes: CacheOutcome[]) {
    const started = performance.now();
    const call: CallContext = { ...context, outcome: {} };
    const reply = await answerOne(dispatch, element, call);
    outcomes.push(call.outcome.cache ?? 'bypass');
    const sent = typeof element === 'object' && element !== null ? (element as { method?: unknown }).method : undefined;
    options.onCall?.({ method: call.outcome.method, sent, iface, code: reply?.error?.code, cache: call.outcome.cache, ms: performance.now() - started });
    return reply;
  }

  async function answerOne(dispatch: Dispatch, element: unknown, context: CallContext): Promise<Reply | null> {
    const checked = checkRequest(element);
    if ('reply' in checked) return checked.reply;
    const { id, notification, method, params } = checked.request;
    const response = await dispatch(method, params, notification, context);
    if (notification || !response) return null;
    return response.error ? { id, error: response.error } : { id, result: response.result };
  }

  return function handle(req: IncomingMessage, res: ServerResponse, version: 'v1' | 'v2') {
    if (req.method === 'OPTIONS') return send(res, 204, null);
    if (req.method !== 'POST') {
      req.resume();
      return send(res, 405, serialise({ id: null, error: rpcErrors.invalidRequest('use POST') }), { allow: 'POST, OPTIONS' });
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on('data', (chunk: Buffer) => {
      if (tooLarge) return;
      size += chunk.length;
      if (size > options.maxBodyBytes) {
        tooLarge = true;
        chunks.length = 0;
        send(res, 413, serialise({ id: null, error: rpcErrors.invalidRequest(`body exceeds ${options.maxBodyBytes} bytes`) }), { connection: 'close' });
        req.resume();
        return;
      }
      chunks.push(chunk);
    });
    req.on('error', () => res.destroy());
    req.on('end', () => {
      if (tooLarge) return;
      respond(Buffer.concat(chunks), version, requestInfo(req, options.publicUrl), options.pagingFor?.(req) ?? null).then(
        ({ status, text, cache }) => send(res, status, text, { 'x-cache': cache }),
        (error: unknown) => {
          options.onError?.(error, '(transport)');
          send(res, 200, serialise({ id: null, error: rpcErrors.internal() }));
        },
      );
    });
  };

  async function respond(body: Buffer, version: 'v1' | 'v2', request: RequestInfo, raised: PagingLimits | null): Promise<{ status: number; text: string | null; cache: CacheOutcome }> {
    const outcomes: CacheOutcome[] = [];
    const reply = await respondTo(body, version, { request, raised }, outcomes);
    return { ...reply, cache: replyCacheOutcome(outcomes) };
  }

  async function respondTo(body: Buffer, version: 'v1' | 'v2', call: { request: RequestInfo; raised: PagingLimits | null }, outcomes: CacheOutcome[]): Promise<{ status: number; text: string | null }> {
    const read = parseBody(body);
    if ('reply' in read) return { status: 200, text: serialise(read.reply) };
    const parsed = read.value;
    const dispatch = dispatchers[version];
    const graphql = options.newContext();
    // a raised clamp answers pages the shared cache must neither serve nor keep
    if (call.raised) graphql.paging = call.raised;
    const context = { graphql, cache: call.raised ? null : options.cache?.forRequest(version) ?? null, request: call.request };
    if (Array.isArray(parsed)) {
      if (parsed.length === 0) return { status: 200, text: serialise({ id: null, error: rpcErrors.invalidRequest('empty batch') }) };
      if (parsed.length > options.maxBatch) {
        return { status: 200, text: serialise({ id: null, error: rpcErrors.invalidRequest(`batch exceeds ${options.maxBatch} requests`) }) };
      }
      // a few elements at a time, in order: a batch is one request's share of the pool, not a hundred
      // requests' (and its DataLoaders batch at most that many elements' pages into one statement)
      const answered = await mapBounded(parsed, options.batchConcurrency, (element) => answer(dispatch, element, context, version, outcomes));
      const replies = answered.filter((r): r is Reply => r !== null);
      return replies.length === 0 ? { status: 204, text: null } : { status: 200, text: `[${replies.map(serialise).join(',')}]` };
    }
    const reply = await answer(dispatch, parsed, context, version, outcomes);
    return reply ? { status: 200, text: serialise(reply) } : { status: 204, text: null };
  }
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
