import { AsyncResource } from 'node:async_hooks';
import {
  createServer, IncomingMessage, ServerResponse, STATUS_CODES, type IncomingHttpHeaders, type OutgoingHttpHeader, type OutgoingHttpHeaders,
  type Server,
} from 'node:http';
import { Server as NetServer, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { constants } from 'node:zlib';
import compression from 'compression';
import vary from 'vary';
import type { AccessHook } from '../access/http-hook.js';
import { ServiceUnavailableError } from '../db/errors.js';
import type { Store } from '../db/store.js';
import type { GraphqlServer } from '../graphql/yoga.js';
import type { RpcAnswer } from '../rpc/handler.js';
import { requestScopes, type RequestScope } from '../request/scope.js';
import { checkInterval, clientBudget, holdSettings, trackConnections, type ClientBudget, type ConnectionTracker, type HttpSettings } from './connections.js';
import { assetPrefix, graphiqlPage, wantsGraphiql } from './graphiql.js';
import { heldConnections, type HeldConnections } from './held.js';
import { createShedder } from './shedding.js';

/**
 * Why the listener refuses a request before any surface has it (shutdown, limits, malformed HTTP). Each
 * surface words it in its own shape (src/rpc/errors.ts, src/graphql/errors.ts): the listener imports none.
 */
export interface Refusal {
  kind: 'unavailable' | 'bad-request' | 'too-many-requests' | 'unauthenticated';
  reason: string;
  /** Seconds to wait, said in the body too (an API key's quota: JSON-RPC -32005 data.retryAfter). */
  retryAfterS?: number;
  /** A per-client limit of the listener (byte budget, load shedding): JSON-RPC -32005 "limit exceeded", GraphQL LIMIT_EXCEEDED. */
  limit?: boolean;
}

/** A surface's error body for a refusal. */
export type RefusalBody = (refusal: Refusal) => unknown;

export interface HttpDeps {
  store: Store;
  yoga: GraphqlServer;
  /** JSON-RPC handler for /v2/rpc… (and /v1/rpc…), when mounted: the answer the listener writes. */
  rpc?: (req: IncomingMessage, version: 'v1' | 'v2') => RpcAnswer | Promise<RpcAnswer | null>;
  /** Prometheus exposition for GET /metrics, when mounted. */
  metrics?: () => Promise<{ contentType: string; body: string }>;
  /** The data version and age (seconds since the newest indexed block time) for the /readyz body. */
  freshness?: () => { dataVersion: string; dataAgeSeconds: number | null } | null;
  /**
   * Opens a request's scope, in which the listener then runs it (request id, request log, request metrics:
   * src/observability/request.ts); none: requests run without one.
   */
  observe?: (req: IncomingMessage, res: ServerResponse) => RequestScope;
  /** CORS for both surfaces; default `*` without credentials. */
  cors?: CorsPolicy;
  /** Whether GraphiQL is served (GRAPHQL_INTROSPECTION): its page and assets are then kept, compressed, in memory. */
  graphiql?: boolean;
  /** Prepare GraphiQL at start rather than on its first load (the server does; tests that never load it do not). */
  warmGraphiql?: boolean;
  /** Response compression (HTTP_COMPRESSION): compressor below; none when absent. */
  compression?: CompressionSettings;
  /** Error bodies of the surfaces, for refusals on their paths (elsewhere, and without one: a plain body). */
  errorBodies?: { rpc?: RefusalBody; graphql?: RefusalBody };
  /** API keys and quotas: called once per GraphQL or JSON-RPC request (not preflights, not the GraphiQL page). */
  access?: AccessHook;
  /** The per-client byte budget, when shared with event streams (they charge it as they write); else one of its own. */
  budget?: ClientBudget;
  /**
   * The answer to an event-stream request on /graphql when no stream may open now (the gateway's stream count
   * is full, or streams are opening faster than their pace), written before the request is read, its
   * connection then held (held.ts); null: let it through.
   */
  streamRefusal?: (req: IncomingMessage) => { status: number; headers: Record<string, string>; body: unknown } | null;
  /** Given what reads the connections' counts (for /metrics), once the listener is built. */
  connectionStats?: (read: () => { open: number; waiting: number; held: number; cut: number }) => void;
}

/** The CORS headers of the GraphQL surface (yoga's own CORS is off: one policy for both surfaces). */
const graphqlCors = { methods: 'GET, POST, OPTIONS', allowHeaders: 'reflect' } as const;
const rpcCors = { methods: 'POST, OPTIONS', allowHeaders: 'content-type, x-request-id, authorization, x-api-key' } as const;

function sendJson(res: ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const isRpcPath = (path: string) => /^\/v[12](\/|$)/.test(path);

/** An error body in the shape of the surface that `path` belongs to (JSON-RPC, GraphQL or plain). */
type SurfaceError = (path: string, refusal: Refusal) => unknown;

function surfaceErrors(bodies: HttpDeps['errorBodies'] = {}): SurfaceError {
  return (path, refusal) => {
    const body = isRpcPath(path) ? bodies.rpc : path.startsWith('/graphql') ? bodies.graphql : undefined;
    return body ? body(refusal) : { status: 'error', reason: refusal.reason };
  };
}

/**
 * An answer written on the socket itself, with `connection: close`; the socket is then ended, at once or,
 * given `held`, when its hold is over (held.ts: it is no longer read meanwhile).
 */
function rawReply(socket: Duplex, status: number, body: unknown, extra = '', held?: HeldConnections) {
  const text = JSON.stringify(body);
  const answer = `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nconnection: close\r\n${extra}content-type: application/json; charset=utf-8\r\n` +
    `content-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`;
  if (!held) return void socket.end(answer);
  socket.write(answer);
  // what it still sends stays in the kernel: never parsed, never answered
  if (held.endLater(socket as Socket, () => socket.end())) socket.pause();
}

/**
 * HTTP that never becomes a request (headers over Node's 16 KB, a malformed request line, headers or a
 * request not received in time): Node would answer with an empty 400/431/408; the client gets the same
 * status with an error body of its surface. A request timeout while its body is still arriving is
 * answered through that request's own response.
 */
function answerClientError(tracker: ConnectionTracker, surfaceError: SurfaceError, held: HeldConnections) {
  return (error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) return socket.destroy();
    const timedOut = error.code === 'ERR_HTTP_REQUEST_TIMEOUT';
    if (timedOut && tracker.cutReceiving(socket as Socket, 'request not received in time')) return;
    const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : timedOut ? 408 : 400;
    const path = /^[A-Z]+ (\/[^\s?]*)/.exec(error.rawPacket?.toString('latin1') ?? '')?.[1] ?? '';
    const reason = status === 431 ? 'request line and headers exceed 16 KB' : status === 408 ? 'request not received in time' : 'malformed HTTP request';
    // bytes after a complete request that cannot start another (one stray byte after a JSON-RPC body): the
    // requests before them are answered first, then this error, then the connection closes. (Destroying the
    // socket at once lost the complete request's reply: the client saw silence.) A timeout stays a cut.
    if (tracker.busy(socket as Socket)) {
      if (timedOut) return socket.destroy();
      return tracker.afterResponses(socket as Socket, () => {
        if (socket.writable) rawReply(socket, status, surfaceError(path, { kind: 'bad-request', reason }));
        else socket.destroy();
      });
    }
    // too slow: held before it closes, as a cut request is (a malformed one is closed at once)
    rawReply(socket, status, surfaceError(path, { kind: 'bad-request', reason }), '', timedOut ? held : undefined);
  };
}

/**
 * A body too slow or too late: 408 with a body of its surface and `connection: close`, written at once; the
 * connection is then held (src/server/held.ts) or closed.
 */
function cutRequest(surfaceError: SurfaceError, held: HeldConnections) {
  return (req: IncomingMessage, res: ServerResponse, path: string, reason: string) => {
    if (res.headersSent || res.writableEnded) return void req.socket.destroy();
    answerAndHold(req, res, held, 408, {}, surfaceError(path, { kind: 'bad-request', reason }));
  };
}

/**
 * A refusal answered whole but ended later: the body is written with its content-length (a client has all of
 * it) and `connection: close`; the response ends, and Node closes the connection, when the hold is over, at
 * once if nothing can be held (held.ts).
 */
function answerAndHold(req: IncomingMessage, res: ServerResponse, held: HeldConnections, status: number, headers: OutgoingHttpHeaders, body: unknown) {
  const text = JSON.stringify(body);
  req.resume(); // what it still sends is dropped
  res.writeHead(status, {
    ...headers, connection: 'close', 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text),
  });
  res.write(text);
  held.endLater(req.socket, () => res.end());
}

/**
 * A connection over the per-client cap or shed on accept, answered at once without reading its request (its
 * surface is not known yet): 429 with a plain error body and `connection: close`, then held (held.ts) or closed.
 */
function refuseConnection(held: HeldConnections) {
  return (socket: Socket, reason: string, retryAfterS: number) => {
    socket.on('error', () => socket.destroy());
    rawReply(socket, 429, { status: 'error', reason }, `retry-after: ${retryAfterS}\r\n`, held);
  };
}

/** What the listener's handlers share. */
interface Listener {
  deps: HttpDeps;
  surfaceError: SurfaceError;
  cors: CorsPolicy;
  /** The JSON-RPC surface's CORS headers for a request (computed once when no request can change them). */
  rpcCors: (req: IncomingMessage) => Readonly<Record<string, string>>;
  compress: (req: IncomingMessage, res: ServerResponse, next: () => void) => void;
  graphiql: ReturnType<typeof graphiqlPage> | undefined;
  /** Requests pipelined past HTTP_MAX_REQUESTS_PER_SOCKET (the response before them closed the connection). */
  overLimit: WeakSet<IncomingMessage>;
}

/** One listener for every surface: /graphql, /v2/rpc…, /v1/rpc…, /healthz, /readyz, /metrics. */
export function createHttpServer(deps: HttpDeps, limits: HttpSettings): Server {
  const cors = deps.cors ?? corsPolicy('*', false);
  const listener: Listener = {
    deps,
    surfaceError: surfaceErrors(deps.errorBodies),
    cors,
    rpcCors: cors.forSurface(rpcCors),
    compress: deps.compression ? compressor(deps.compression) : (_req, _res, next) => next(),
    graphiql: deps.graphiql ? graphiqlOf(deps) : undefined,
    overLimit: new WeakSet(),
  };
  // rendered, split and compressed at start (in the background), not on the first load
  if (deps.warmGraphiql) listener.graphiql?.warm().catch(() => {}); // (a failure is tried again 30 s later)
  const budget = deps.budget ?? clientBudget({ bytesPerS: limits.HTTP_CLIENT_BYTES_PER_S, burstBytes: limits.HTTP_CLIENT_BURST_BYTES });
  const shedder = createShedder({
    lagMs: limits.SHED_EVENT_LOOP_LAG_MS ?? 0,
    minBytes: limits.SHED_CLIENT_MIN_BYTES ?? 8_388_608,
    totalBytesPerS: limits.SHED_TOTAL_BYTES_PER_S ?? 0,
    // behind a proxy (no per-address cap) one address carries everyone: its connections are never shed
    newConnectionsPerS: limits.HTTP_MAX_CONNECTIONS_PER_CLIENT === 0 ? 0 : limits.SHED_NEW_CONNECTIONS_PER_S ?? 0,
    minConnections: limits.SHED_CLIENT_MIN_CONNECTIONS ?? 128,
  });
  const held = heldConnections({ ...holdSettings(limits), release: (socket) => tracker.table.release(socket) });
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    const scope = deps.observe?.(req, res);
    if (!scope) return handleRequest(listener, server, req, res);
    requestScopes.run(scope, handleRequest, listener, server, req, res);
  };
  const server = createServer({
    headersTimeout: limits.HTTP_HEADERS_TIMEOUT_MS,
    requestTimeout: limits.HTTP_REQUEST_TIMEOUT_MS,
    connectionsCheckingInterval: checkInterval(limits),
    requireHostHeader: false, // checked in handleRequest, to answer with a body
    IncomingMessage: GatewayRequest,
    ServerResponse: GatewayResponse,
  }, (req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const admission = tracker.admit(req, res, path);
    if (admission === 'ignore') return;
    if (admission === 'over-limit') listener.overLimit.add(req);
    if (refusedStream(deps, req, res, path, held)) return;
    // refused before the request log and metrics: a client hammering in debt costs a parse and a short write
    if (path !== '/healthz' && path !== '/readyz' && path !== '/metrics') {
      if (refusedForLoad(listener, req, res, path, budget, shedder)) return;
      budget.charge(req, res);
      shedder.charge(req, res);
    }
    handle(req, res);
  });
  server.once('close', () => shedder.stop());
  const tracker = trackConnections(server, limits, {
    refuse: refuseConnection(held), cut: cutRequest(listener.surfaceError, held), shed: (socket) => shedder.connectionRetryAfterS(socket),
  });
  server.on('clientError', answerClientError(tracker, listener.surfaceError, held));
  deps.connectionStats?.(() => ({ ...tracker.table.stats(), held: held.count() }));
  heldOf.set(server, held);
  trackForDrain(server);
  return server;
}

/** GraphiQL's page, rendered by yoga and compressed once (src/server/graphiql.ts). */
function graphiqlOf(deps: HttpDeps) {
  return graphiqlPage(async () => {
    const page = await deps.yoga.fetch('http://gateway/graphql', { headers: { accept: 'text/html' } });
    const headers: Record<string, string> = {};
    for (const name of ['content-type', 'cache-control']) {
      const value = page.headers.get(name);
      if (value !== null) headers[name] = value;
    }
    if (page.status !== 200) throw new Error(`GraphiQL answered ${page.status}`);
    return { body: Buffer.from(await page.arrayBuffer()), headers };
  }, { compress: deps.compression !== undefined });
}

/**
 * A client answered more than its byte budget allows, or among the most expensive while the event loop is
 * late (src/server/shedding.ts): 429 with Retry-After; true when refused.
 */
function refusedForLoad(
  listener: Listener, req: IncomingMessage, res: ServerResponse, path: string, budget: ClientBudget, shedder: ReturnType<typeof createShedder>,
): boolean {
  const retryAfter = budget.retryAfterS(req);
  const shedFor = retryAfter > 0 ? 0 : shedder.retryAfterS(req);
  if (retryAfter <= 0 && shedFor <= 0) return false;
  const reason = retryAfter > 0 ? `too much data answered to this client address: retry after ${retryAfter} s`
    : `server overloaded and this client's recent answers are among the most expensive: retry after ${shedFor} s`;
  const wait = retryAfter > 0 ? retryAfter : shedFor;
  req.resume();
  res.setHeader('retry-after', String(wait));
  sendJson(res, 429, listener.surfaceError(path, { kind: 'too-many-requests', reason, retryAfterS: wait, limit: true }));
  return true;
}

/** An event stream asked for while none may open (HttpDeps.streamRefusal): answered, held; true when refused. */
function refusedStream(deps: HttpDeps, req: IncomingMessage, res: ServerResponse, path: string, held: HeldConnections): boolean {
  if (!deps.streamRefusal || (path !== '/graphql' && path !== '/graphql/') || !req.headers.accept?.includes('text/event-stream')) return false;
  const answer = deps.streamRefusal(req);
  if (!answer) return false;
  answerAndHold(req, res, held, answer.status, answer.headers, answer.body);
  return true;
}

/** Requests the listener answers itself before any surface: over the connection's limit, while draining, without Host. */
function refusedUnfit(listener: Listener, server: Server, req: IncomingMessage, res: ServerResponse, path: string): boolean {
  const refuse = (status: number, refusal: Refusal) => {
    req.resume();
    res.setHeader('connection', 'close');
    sendJson(res, status, listener.surfaceError(path, refusal));
    return true;
  };
  if (listener.overLimit.has(req)) return refuse(503, { kind: 'unavailable', reason: 'too many requests on one connection: open a new one' });
  // after close() a kept-alive connection can still bring a request: refused while those in flight finish
  if (!server.listening) return refuse(503, { kind: 'unavailable', reason: 'shutting down' });
  // HTTP/1.1 requires Host (Node's own check answers with an empty 400); HTTP/1.0 may leave it out
  if (req.httpVersion === '1.1' && req.headers.host === undefined) return refuse(400, { kind: 'bad-request', reason: 'missing Host header' });
  return false;
}

function handleRequest(listener: Listener, server: Server, req: IncomingMessage, res: ServerResponse) {
  // the request's events run in this handler's context (the request scope opened for it)
  if (req instanceof GatewayRequest) req.bindEvents();
  const path = (req.url ?? '/').split('?')[0]!;
  if (refusedUnfit(listener, server, req, res, path)) return;
  if (path === '/healthz') return sendJson(res, 200, { status: 'ok' });
  // GraphiQL's page and assets are compressed once, at start, not per response
  const { graphiql, deps } = listener;
  if (graphiql && (path === '/graphql' || path === '/graphql/') && wantsGraphiql(req)) return graphiql.page(req, res);
  if (graphiql && path.startsWith(assetPrefix)) return graphiql.asset(req, res);
  if (path !== '/readyz') return listener.compress(req, res, () => route(listener, req, res, path));
  deps.store.ping().then(
    () => sendJson(res, 200, { status: 'ready', ...(deps.freshness?.() ?? {}) }),
    (error: unknown) => sendJson(res, 503, {
      status: 'unavailable',
      reason: error instanceof ServiceUnavailableError ? error.reason : 'database unreachable',
    }),
  );
}

/** A surface's request, once the access hook lets it through (a preflight carries no credentials). */
function guarded(listener: Listener, req: IncomingMessage, res: ServerResponse, path: string, run: () => void) {
  const { access } = listener.deps;
  const pending = access && req.method !== 'OPTIONS' ? access(req, res) : null;
  if (pending === null) return run();
  void pending.then((refusal) => {
    if (!refusal) return run();
    req.resume();
    if (refusal.retryAfterS !== undefined) res.setHeader('retry-after', String(refusal.retryAfterS));
    sendJson(res, refusal.status, listener.surfaceError(path, refusal));
  });
}

/** The surfaces, behind compression. */
function route(listener: Listener, req: IncomingMessage, res: ServerResponse, path: string) {
  const { deps } = listener;
  if (path === '/metrics' && deps.metrics) return serveMetrics(deps.metrics, res);
  if (deps.rpc && (path === '/v2' || path.startsWith('/v2/'))) return guarded(listener, req, res, path, () => routeRpc(listener, req, res, 'v2'));
  if (deps.rpc && (path === '/v1' || path.startsWith('/v1/'))) return guarded(listener, req, res, path, () => routeRpc(listener, req, res, 'v1'));
  if (path === '/graphql' || path === '/graphql/') return routeGraphql(listener, req, res, path);
  if (path.startsWith('/graphql/')) {
    // yoga would answer an empty 404 here
    req.resume();
    return sendJson(res, 404, { errors: [{ message: 'Not found: the GraphQL endpoint is /graphql', extensions: { code: 'NOT_FOUND' } }] });
  }
  if (path === '/') {
    res.writeHead(302, { location: '/graphql' });
    return res.end();
  }
  sendJson(res, 404, { error: 'not found' });
}

/** A JSON-RPC request, answered by src/rpc/handler.ts and written here with the surface's CORS headers. */
function routeRpc(listener: Listener, req: IncomingMessage, res: ServerResponse, iface: 'v1' | 'v2') {
  const answer = listener.deps.rpc!(req, iface);
  if (!(answer instanceof Promise)) return writeRpc(listener, req, res, answer);
  void answer.then((ready) => (ready ? writeRpc(listener, req, res, ready) : void res.destroy()));
}

function writeRpc(listener: Listener, req: IncomingMessage, res: ServerResponse, answer: RpcAnswer) {
  const headers = { ...listener.rpcCors(req), ...answer.headers };
  if (answer.text === null) {
    res.writeHead(answer.status, headers);
    res.end();
    return;
  }
  res.writeHead(answer.status, {
    ...headers, 'content-type': 'application/json; charset=utf-8', 'content-length': String(Buffer.byteLength(answer.text)),
  });
  res.end(answer.text);
}

function serveMetrics(metrics: NonNullable<HttpDeps['metrics']>, res: ServerResponse) {
  metrics().then(
    ({ contentType, body }) => {
      res.writeHead(200, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
      res.end(body);
    },
    () => sendJson(res, 500, { error: 'metrics unavailable' }),
  );
}

function routeGraphql(listener: Listener, req: IncomingMessage, res: ServerResponse, path: string) {
  for (const [name, value] of Object.entries(listener.cors.headers(req.headers, graphqlCors))) res.setHeader(name, value);
  if (req.method === 'OPTIONS') {
    req.resume();
    res.writeHead(204, { 'content-length': '0' });
    return res.end();
  }
  // GET answers GraphiQL's page or JSON by Accept: a shared cache keeps them apart (set beside CORS' Vary: Origin)
  if (req.method === 'GET' || req.method === 'HEAD') {
    const vary = res.getHeader('vary');
    res.setHeader('vary', vary ? `${String(vary)}, Accept` : 'Accept');
  }
  guarded(listener, req, res, path, () => listener.deps.yoga(req, res));
}

// ------------------------------------------------------------------------------------ graceful shutdown
// A connection is closed only once it has been idle for `idleGraceMs`, since Node's server.close() resets
// a kept-alive connection whose client is just sending its next request.

/** Each open connection of a server: requests on it not yet answered, and since when it has had none. */
const connectionStates = new WeakMap<Server, Map<Socket, { busy: number; idleSince: number }>>();

/** The connections each listener holds before closing them (held.ts): closed at once when it shuts down. */
const heldOf = new WeakMap<Server, HeldConnections>();

function trackForDrain(server: Server): void {
  const connections = new Map<Socket, { busy: number; idleSince: number }>();
  connectionStates.set(server, connections);
  server.on('connection', (socket: Socket) => {
    connections.set(socket, { busy: 0, idleSince: performance.now() });
    socket.once('close', () => connections.delete(socket));
  });
  server.on('request', (req: IncomingMessage, res: ServerResponse) => {
    const state = connections.get(req.socket as Socket);
    if (!state) return;
    state.busy++;
    res.once('close', () => {
      state.busy--;
      state.idleSince = performance.now();
    });
  });
}

/**
 * Closes `server` (built by createHttpServer) without resetting a kept-alive connection: see above.
 * Resolves once every connection has closed (connections still busy are the caller's to cut: a deadline).
 */
export function closeGracefully(server: Server, idleGraceMs: number): Promise<void> {
  if (!server.listening) return Promise.resolve();
  const connections = connectionStates.get(server) ?? new Map();
  return new Promise((resolve) => {
    // refused and cut ones have their answer already: nothing to drain
    heldOf.get(server)?.closeAll();
    let timer: NodeJS.Timeout | undefined;
    let closed = false;
    // done once the server's own connections have ended and so have those its other listening handles took
    // (src/server/accept-handles.ts: net.Server's close counts only its own)
    const finished = () => {
      if (!closed || connections.size > 0) return false;
      clearTimeout(timer);
      resolve();
      return true;
    };
    // net.Server's own close: stops accepting and calls back once every connection has ended, without
    // http.Server's closing of idle connections (its timeout checks keep running meanwhile)
    NetServer.prototype.close.call(server, () => {
      closed = true;
      finished();
    });
    const sweep = () => {
      if (finished()) return;
      const now = performance.now();
      let next = Math.max(idleGraceMs, 10);
      for (const [socket, state] of connections) {
        if (state.busy > 0) continue;
        const idle = now - state.idleSince;
        if (idle >= idleGraceMs) socket.destroy();
        else next = Math.min(next, idleGraceMs - idle);
      }
      timer = setTimeout(sweep, Math.min(next, 100));
      timer.unref();
    };
    sweep();
  });
}

/** Sockets open on a listener built by createHttpServer, whichever of its handles accepted them. */
export function openSockets(server: NetServer): number {
  return connectionStates.get(server as Server)?.size ?? 0;
}

// One CORS policy for both surfaces: `*` never allows credentials, since echoing any origin with them would
// let any site read answers with the user's cookies; a listed origin is echoed, an unlisted one gets nothing.

export interface CorsPolicy {
  /**
   * The CORS response headers for a request with these headers. `methods` and `allowHeaders` are the
   * surface's own; `allowHeaders: 'reflect'` allows the headers a preflight asks for.
   */
  headers(request: IncomingHttpHeaders, surface: CorsSurface): Record<string, string>;
  /**
   * The same for one surface, as a function of the request; computed once when no request can change it
   * (`*` without reflected headers). The object returned is shared: copy it to change it.
   */
  forSurface(surface: CorsSurface): (req: IncomingMessage) => Readonly<Record<string, string>>;
}

export interface CorsSurface { methods: string; allowHeaders: string | 'reflect' }

export function corsPolicy(origins: string, credentials: boolean): CorsPolicy {
  const any = origins.trim() === '*';
  const listed = new Set(any ? [] : origins.split(',').map((o) => o.trim().toLowerCase()).filter(Boolean));
  if (any && credentials) throw new Error('CORS: credentials cannot be allowed with CORS_ORIGIN=*');
  const policy: CorsPolicy = {
    forSurface(surface) {
      if (any && surface.allowHeaders !== 'reflect') {
        const fixed = policy.headers({}, surface);
        return () => fixed;
      }
      return (req) => policy.headers(req.headers, surface);
    },
    headers(request, surface) {
      const out: Record<string, string> = {};
      if (any) {
        out['access-control-allow-origin'] = '*';
      } else {
        out.vary = 'Origin';
        const origin = request.origin;
        if (!origin || !listed.has(origin.toLowerCase())) return out;
        out['access-control-allow-origin'] = origin;
        if (credentials) out['access-control-allow-credentials'] = 'true';
      }
      out['access-control-allow-methods'] = surface.methods;
      if (surface.allowHeaders !== 'reflect') {
        out['access-control-allow-headers'] = surface.allowHeaders;
      } else {
        const asked = request['access-control-request-headers'];
        // only a plain header list is reflected (no CR/LF or other bytes a header value cannot hold)
        if (asked && /^[\w-]+(\s*,\s*[\w-]+)*$/.test(asked)) {
          out['access-control-allow-headers'] = asked;
          out.vary = out.vary ? `${out.vary}, Access-Control-Request-Headers` : 'Access-Control-Request-Headers';
        }
      }
      out['access-control-max-age'] = '86400';
      return out;
    },
  };
  return policy;
}

// Response compression for every surface (expressjs' `compression`); a compressed answer's strong ETag gets
// its coding as a suffix, since a strong ETag names one representation.

export interface CompressionSettings {
  /** Bodies smaller than this are sent as they are (compressing them costs more than it saves). */
  minBytes: number;
}

/** compression's filter (a compressible content type), never an event stream. */
function compressible(req: IncomingMessage, res: ServerResponse): boolean {
  return !String(res.getHeader('content-type') ?? '').startsWith('text/event-stream') && compression.filter(req as never, res as never);
}

function compressor(settings: CompressionSettings): (req: IncomingMessage, res: ServerResponse, next: () => void) => void {
  const compress = compression({
    threshold: settings.minBytes,
    // brotli quality 5 and gzip level 6: within a few per cent of the best ratio on JSON for a fraction of
    // the time (quality 11 takes seconds on the GraphiQL page)
    brotli: { params: { [constants.BROTLI_PARAM_QUALITY]: 5 } },
    level: 6,
    // never an event stream (subscriptions): a compressor holds events back until its buffer fills (yoga's
    // `content-encoding: none` on them keeps compression off too; this does not depend on it)
    filter: compressible,
  });
  return (req, res, next) => {
    // No Accept-Encoding: compression would answer identity (its enforceEncoding default); what it would
    // still do, add `Vary: Accept-Encoding`, is done by one head hook without its per-request proxies.
    if (req.headers['accept-encoding'] === undefined) {
      asGatewayResponse(res).beforeHead(identityVary(req));
      return next();
    }
    // runs after compression's own header hook (which sets Content-Encoding) and before the headers go out
    asGatewayResponse(res).beforeHead(codedEtag);
    compress(req as never, res as never, next);
  };
}

/** A compressed answer's strong ETag names its coding; a 304 carries the Vary its 200 would have. */
function codedEtag(res: ServerResponse, status: number): void {
  const coding = res.getHeader('content-encoding');
  const etag = res.getHeader('etag');
  if (typeof coding === 'string' && coding !== 'identity' && typeof etag === 'string' && /^"[^"]*"$/.test(etag)) {
    res.setHeader('etag', `${etag.slice(0, -1)}-${coding}"`);
  }
  // compression skips a 304 (it has no content type)
  if (status === 304) vary(res, 'Accept-Encoding');
}

const noTransform = /(?:^|,)\s*?no-transform\s*?(?:,|$)/;

/**
 * What `compression` does to the headers of an answer to a request without Accept-Encoding: `Vary:
 * Accept-Encoding` (by `vary`, compression's own) when the answer passes `compressible` and its
 * Cache-Control allows transforms.
 */
function identityVary(req: IncomingMessage): HeadHook {
  return (res, status) => {
    const cacheControl = res.getHeader('cache-control');
    const transformable = !(cacheControl && noTransform.test(String(cacheControl)));
    if ((compressible(req, res) || status === 304) && transformable) vary(res, 'Accept-Encoding');
  };
}

/** Every response of the listener is one (createServer's `ServerResponse` option). */
function asGatewayResponse(res: ServerResponse): GatewayResponse {
  if (!(res instanceof GatewayResponse)) throw new TypeError('a response not created by the gateway\'s listener');
  return res;
}

/** Runs just before a response's status line and headers are written; `status` is the one about to go out. */
export type HeadHook = (res: GatewayResponse, status: number) => void;

/**
 * The listener's response class (createServer's `ServerResponse` option): a layer that must adjust headers
 * once they are final (compression's ETag and Vary) registers a hook here instead of replacing writeHead.
 */
export class GatewayResponse<Request extends IncomingMessage = IncomingMessage> extends ServerResponse<Request> {
  private headHooks: HeadHook[] | undefined;

  /** Adds `hook`, run once when the headers are written (by writeHead, or implicitly by write/end). */
  beforeHead(hook: HeadHook): void {
    (this.headHooks ??= []).push(hook);
  }

  override writeHead(status: number, ...rest: unknown[]): this {
    const hooks = this.headHooks;
    if (!hooks) return (super.writeHead as (status: number, ...rest: unknown[]) => this)(status, ...rest);
    this.headHooks = undefined;
    // the headers given here are set first, so that the hooks see the response's final headers
    const reason = typeof rest[0] === 'string' ? rest[0] : undefined;
    setHeaders(this, rest[reason === undefined ? 0 : 1] as OutgoingHttpHeaders | OutgoingHttpHeader[] | undefined);
    this.statusCode = status;
    for (const hook of hooks) hook(this, status);
    return reason === undefined ? super.writeHead(this.statusCode) : super.writeHead(this.statusCode, reason);
  }
}

function setHeaders(res: ServerResponse, headers: OutgoingHttpHeaders | OutgoingHttpHeader[] | undefined): void {
  if (Array.isArray(headers)) {
    if (headers.length && Array.isArray(headers[0])) for (const [k, v] of headers as unknown as [string, string][]) res.setHeader(k, v);
    else for (let i = 0; i + 1 < headers.length; i += 2) res.setHeader(String(headers[i]), headers[i + 1]!);
  } else if (headers) {
    for (const k of Object.keys(headers)) if (k) res.setHeader(k, headers[k]!);
  }
}

/**
 * The listener's request class (createServer's `IncomingMessage` option). Its own events ('data', 'end')
 * come from the socket's async context; once bound, they run in the context its handler was called in, so
 * that work started on 'end' (the JSON-RPC layer, yoga's body reader) keeps that handler's context.
 */
export class GatewayRequest extends IncomingMessage {
  private context: AsyncResource | undefined;

  /** Binds this request's events from now on to the current async context. */
  bindEvents(): void {
    this.context ??= new AsyncResource('igw.request');
  }

  override emit(event: string | symbol, ...args: unknown[]): boolean {
    const context = this.context;
    return context ? context.runInAsyncScope(super.emit, this, event, ...args) : super.emit(event, ...args);
  }
}
