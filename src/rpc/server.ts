import type { IncomingMessage, ServerResponse } from 'node:http';
import { TextDecoder } from 'node:util';
import jayson from 'jayson/promise/index.js';
import { isLosslessNumber, LosslessNumber, parse as parseLossless } from 'lossless-json';
import { SerialisedResult, type RpcCache, type RpcRequestCache } from '../cache/rpc.js';
import type { RpcCallInfo } from '../observability/rpc.js';
import type { CacheOutcome } from '../observability/scope.js';
import type { Context } from '../graphql/context.js';
import { prepareOperation } from '../graphql/operation.js';
import { fromGraphqlErrors, isRpcError, rpcErrors, type RpcError } from './errors.js';
import type { MethodSpec } from './methods/shared.js';
import { decodeParams, type PagingLimits } from './params.js';

// JSON-RPC 2.0 over HTTP (reference notes §1): POST only, body and batch size capped, every batch
// element answered, notifications get no reply, ids echoed exactly as sent (a big integer id is kept as
// its source text), never `result` and `error` together, never internals in an error.

export interface RpcOptions {
  /** Method tables per interface version. */
  tables: { v1: readonly MethodSpec[]; v2: readonly MethodSpec[] };
  newContext: () => Context;
  limits: PagingLimits;
  maxBodyBytes: number;
  maxBatch: number;
  /** Elements of one batch answered at once (they share the request's row budget and statement cap). */
  batchConcurrency: number;
  /** CORS response headers for a request (src/server/cors.ts: one policy for both surfaces). */
  cors: (req: IncomingMessage) => Record<string, string>;
  onError?: (error: unknown, method: string) => void;
  /** Cache of successful results (key: method, exact params, interface version, data version). */
  cache?: RpcCache | null;
  /** Called once per answered call (metrics and the request log). */
  onCall?: (call: RpcCallInfo) => void;
}

/** What a method handler gets: the request's GraphQL context and cache, and its own call's outcome. */
interface CallContext { graphql: Context; cache: RpcRequestCache | null; outcome: { cache?: CacheOutcome } }

type Id = string | number | LosslessNumber | null;
interface Reply { id: Id; result?: unknown; error?: RpcError }

const decoder = new TextDecoder('utf-8', { fatal: true });
// Safe integers become numbers; anything else (fractions, exponents, big integers) keeps its exact text.
const parseNumber = (text: string) => {
  if (/^-?\d+$/.test(text)) {
    const n = Number(text);
    if (Number.isSafeInteger(n)) return n;
  }
  return new LosslessNumber(text);
};

function idText(id: Id): string {
  if (id === null) return 'null';
  if (isLosslessNumber(id)) return id.value;
  return JSON.stringify(id);
}

/** Envelope in the interface's member order: jsonrpc, result | error, id. */
function serialise(reply: Reply): string {
  // a result from the cache (or just stored in it) is JSON text already
  const body = reply.error ? `"error":${JSON.stringify(reply.error)}`
    : `"result":${reply.result instanceof SerialisedResult ? reply.result.text : JSON.stringify(reply.result ?? null)}`;
  return `{"jsonrpc":"2.0",${body},"id":${idText(reply.id)}}`;
}

export function createRpcHandler(options: RpcOptions) {
  // each method's document is parsed and validated here, once, not per request
  const servers = {
    // the v1 documentation spells some names in another case (address.transactions): v1 names match either way
    v1: buildServer(options.tables.v1, options, { anyCase: true }),
    v2: buildServer(options.tables.v2, options),
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

  async function answer(server: jayson.Server, element: unknown, context: Omit<CallContext, 'outcome'>, iface: 'v1' | 'v2', outcomes: CacheOutcome[]) {
    const started = performance.now();
    const call: CallContext = { ...context, outcome: {} };
    const reply = await answerOne(server, element, call);
    outcomes.push(call.outcome.cache ?? 'bypass');
    const method = typeof element === 'object' && element !== null ? (element as { method?: unknown }).method : undefined;
    options.onCall?.({ method, iface, code: reply?.error?.code, cache: call.outcome.cache, ms: performance.now() - started });
    return reply;
  }

  async function answerOne(server: jayson.Server, element: unknown, context: CallContext): Promise<Reply | null> {
    if (typeof element !== 'object' || element === null || Array.isArray(element)) {
      return { id: null, error: rpcErrors.invalidRequest('a request must be an object') };
    }
    const request = element as Record<string, unknown>;
    const hasId = 'id' in request;
    const rawId = request.id;
    const validId = rawId === null || typeof rawId === 'string' || typeof rawId === 'number' || isLosslessNumber(rawId);
    if (hasId && !validId) return { id: null, error: rpcErrors.invalidRequest('id must be a string, a number or null') };
    const id = (hasId ? rawId : null) as Id;
    if (request.jsonrpc !== '2.0') return { id, error: rpcErrors.invalidRequest('jsonrpc must be "2.0"') };
    if (typeof request.method !== 'string') return { id, error: rpcErrors.invalidRequest('method must be a string') };
    const params = request.params;
    if (params !== undefined && typeof params !== 'object') return { id, error: rpcErrors.invalidRequest('params must be an array') };
    if (params !== null && params !== undefined && !Array.isArray(params)) {
      return hasId ? { id, error: rpcErrors.invalidParams('params must be an array (they are positional)') } : null;
    }
    // jayson dispatches (method lookup, notification semantics); the id it sees is a placeholder
    const call = { jsonrpc: '2.0', method: request.method, params: params ?? [], ...(hasId ? { id: 0 } : {}) };
    // callp resolves with a success response and rejects with an error response (or nothing, for notifications)
    const response = (await server.callp(call, context).catch((errorResponse: unknown) => errorResponse)) as
      | { result?: unknown; error?: RpcError }
      | undefined;
    if (!hasId || !response) return null;
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
      respond(Buffer.concat(chunks), version).then(
        ({ status, text, cache }) => send(res, status, text, { 'x-cache': cache }),
        (error: unknown) => {
          options.onError?.(error, '(transport)');
          send(res, 200, serialise({ id: null, error: rpcErrors.internal() }));
        },
      );
    });
  };

  async function respond(body: Buffer, version: 'v1' | 'v2'): Promise<{ status: number; text: string | null; cache: CacheOutcome }> {
    const outcomes: CacheOutcome[] = [];
    const reply = await respondTo(body, version, outcomes);
    return { ...reply, cache: replyCacheOutcome(outcomes) };
  }

  async function respondTo(body: Buffer, version: 'v1' | 'v2', outcomes: CacheOutcome[]): Promise<{ status: number; text: string | null }> {
    let parsed: unknown;
    try {
      const text = decoder.decode(body);
      if (text.trim() === '') throw new SyntaxError('empty body');
      parsed = parseLossless(text, null, parseNumber);
    } catch {
      return { status: 200, text: serialise({ id: null, error: rpcErrors.parse() }) };
    }
    const server = servers[version];
    const context = { graphql: options.newContext(), cache: options.cache?.forRequest(version) ?? null };
    if (Array.isArray(parsed)) {
      if (parsed.length === 0) return { status: 200, text: serialise({ id: null, error: rpcErrors.invalidRequest('empty batch') }) };
      if (parsed.length > options.maxBatch) {
        return { status: 200, text: serialise({ id: null, error: rpcErrors.invalidRequest(`batch exceeds ${options.maxBatch} requests`) }) };
      }
      // a few elements at a time, in order: a batch is one request's share of the pool, not a hundred
      // requests' (and its DataLoaders batch at most that many elements' pages into one statement)
      const answered = await mapBounded(parsed, options.batchConcurrency, (element) => answer(server, element, context, version, outcomes));
      const replies = answered.filter((r): r is Reply => r !== null);
      return replies.length === 0 ? { status: 204, text: null } : { status: 200, text: `[${replies.map(serialise).join(',')}]` };
    }
    const reply = await answer(server, parsed, context, version, outcomes);
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

function buildServer(table: readonly MethodSpec[], options: RpcOptions, naming: { anyCase?: boolean } = {}): jayson.Server {
  const handlers: Record<string, (params: unknown[], context: CallContext) => Promise<unknown>> = {};
  const reserved = new Map<string, jayson.Method>();
  for (const spec of table) {
    const run = prepareOperation(spec.document, (error) => options.onError?.(error, spec.names[0]!));
    // one handler per name: the cache key holds the method as called
    const handler = (name: string) => async (params: unknown[], context: CallContext) => {
      try {
        const p = decodeParams(spec.layouts, params, options.limits);
        const cached = context.cache ? await context.cache.get(name, params) : null;
        context.outcome.cache = cached ? (cached.hit ? 'hit' : 'miss') : 'bypass';
        if (cached?.hit) return cached.value;
        const result = await run(spec.variables(p), context.graphql);
        if (result.errors?.length) throw fromGraphqlErrors(result.errors);
        const value = spec.reshape(result.data, p);
        return cached ? context.cache!.set(cached.key, value) : value;
      } catch (error) {
        if (isRpcError(error)) throw error;
        options.onError?.(error, spec.names[0]!);
        throw rpcErrors.internal();
      }
    };
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
