import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { ServiceUnavailableError } from '../db/errors.js';
import type { Store } from '../db/store.js';
import type { GraphqlServer } from '../graphql/yoga.js';
import { checkInterval, trackConnections, type ConnectionTracker, type HttpSettings } from './connections.js';
import { clientBudget } from './client-budget.js';
import { compressor, type CompressionSettings } from './compression.js';
import { corsPolicy, type CorsPolicy } from './cors.js';
import { graphiqlPage, wantsGraphiql } from './graphiql.js';

/**
 * Why the listener refuses a request before any surface has it (shutdown, limits, malformed HTTP). Each
 * surface words it in its own shape (src/rpc/errors.ts, src/graphql/errors.ts): the listener imports none.
 */
export interface Refusal {
  kind: 'unavailable' | 'bad-request' | 'too-many-requests';
  reason: string;
}

/** A surface's error body for a refusal. */
export type RefusalBody = (refusal: Refusal) => unknown;

export interface HttpDeps {
  store: Store;
  yoga: GraphqlServer;
  /** JSON-RPC handler for /v2/rpc… (and /v1/rpc…), when mounted. */
  rpc?: (req: IncomingMessage, res: ServerResponse, version: 'v1' | 'v2') => void;
  /** Prometheus exposition for GET /metrics, when mounted. */
  metrics?: () => Promise<{ contentType: string; body: string }>;
  /** The data version and age (seconds since the newest indexed block time) for the /readyz body. */
  freshness?: () => { dataVersion: string; dataAgeSeconds: number | null } | null;
  /** Wraps the whole handler (request id, request log, request metrics): src/observability/http.ts. */
  wrap?: (handler: (req: IncomingMessage, res: ServerResponse) => void) => (req: IncomingMessage, res: ServerResponse) => void;
  /** CORS for /graphql (the RPC handler applies the same policy itself); default `*` without credentials. */
  cors?: CorsPolicy;
  /** Whether GraphiQL is served (GRAPHQL_INTROSPECTION): its page is then kept, compressed, in memory. */
  graphiql?: boolean;
  /** Response compression (HTTP_COMPRESSION): src/server/compression.ts; none when absent. */
  compression?: CompressionSettings;
  /** Error bodies of the surfaces, for refusals on their paths (elsewhere, and without one: a plain body). */
  errorBodies?: { rpc?: RefusalBody; graphql?: RefusalBody };
}

/** The CORS headers of the GraphQL surface (yoga's own CORS is off: one policy for both surfaces). */
const graphqlCors = { methods: 'GET, POST, OPTIONS', allowHeaders: 'reflect' } as const;

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

/** 503 and the connection closed: the client retries elsewhere. */
function refuseWhileDraining(res: ServerResponse, path: string, surfaceError: SurfaceError) {
  res.setHeader('connection', 'close');
  sendJson(res, 503, surfaceError(path, { kind: 'unavailable', reason: 'shutting down' }));
}

function rawReply(socket: Duplex, status: number, body: unknown, extra = '') {
  const text = JSON.stringify(body);
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nconnection: close\r\n${extra}content-type: application/json; charset=utf-8\r\n` +
    `content-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
}

/**
 * HTTP that never becomes a request (headers over Node's 16 KB, a malformed request line, headers or a
 * request not received in time): Node would answer with an empty 400/431/408; the client gets the same
 * status with an error body of its surface. A request timeout while its body is still arriving is
 * answered through that request's own response.
 */
function answerClientError(tracker: ConnectionTracker, surfaceError: SurfaceError) {
  return (error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) return socket.destroy();
    const timedOut = error.code === 'ERR_HTTP_REQUEST_TIMEOUT';
    if (timedOut && tracker.cutReceiving(socket as Socket, 'request not received in time')) return;
    // a pipelined request late or malformed while an earlier response is being written: no room for a reply
    if (tracker.busy(socket as Socket)) return socket.destroy();
    const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : timedOut ? 408 : 400;
    const path = /^[A-Z]+ (\/[^\s?]*)/.exec(error.rawPacket?.toString('latin1') ?? '')?.[1] ?? '';
    const reason = status === 431 ? 'request line and headers exceed 16 KB' : status === 408 ? 'request not received in time' : 'malformed HTTP request';
    rawReply(socket, status, surfaceError(path, { kind: 'bad-request', reason }));
  };
}

/** A body too slow or too late: 408 with a body of its surface, and the connection closed once it is sent. */
function cutRequest(surfaceError: SurfaceError) {
  return (req: IncomingMessage, res: ServerResponse, path: string, reason: string) => {
    if (res.headersSent || res.writableEnded) return void req.socket.destroy();
    res.setHeader('connection', 'close'); // Node closes the socket after this response, dropping the rest of the body
    sendJson(res, 408, surfaceError(path, { kind: 'bad-request', reason }));
  };
}

/**
 * A connection over the per-client cap, answered at once without reading its request (its surface is not
 * known yet): 429 with a plain error body, then closed.
 */
function refuseConnection(socket: Socket) {
  socket.on('error', () => socket.destroy());
  rawReply(socket, 429, { status: 'error', reason: 'too many connections from this client address' }, 'retry-after: 1\r\n');
  socket.once('finish', () => socket.destroy());
  setTimeout(() => socket.destroy(), 1_000).unref(); // a client that does not even take the reply
}

/** One listener for every surface: /graphql, /v2/rpc…, /v1/rpc…, /healthz, /readyz, /metrics. */
export function createHttpServer(deps: HttpDeps, limits: HttpSettings): Server {
  const wrap = deps.wrap ?? ((handler) => handler);
  const surfaceError = surfaceErrors(deps.errorBodies);
  const cors = deps.cors ?? corsPolicy('*', false);
  const overLimit = new WeakSet<IncomingMessage>();
  const compress = deps.compression ? compressor(deps.compression) : (_req: IncomingMessage, _res: ServerResponse, next: () => void) => next();
  // GraphiQL's page, rendered and compressed once (src/server/graphiql.ts)
  const graphiql = deps.graphiql ? graphiqlPage(async () => {
    const page = await deps.yoga.fetch('http://gateway/graphql', { headers: { accept: 'text/html' } });
    const headers: Record<string, string> = {};
    for (const name of ['content-type', 'cache-control']) {
      const value = page.headers.get(name);
      if (value !== null) headers[name] = value;
    }
    if (page.status !== 200) throw new Error(`GraphiQL answered ${page.status}`);
    return { body: Buffer.from(await page.arrayBuffer()), headers };
  }, { compress: deps.compression !== undefined }) : undefined;
  const budget = clientBudget({ bytesPerS: limits.HTTP_CLIENT_BYTES_PER_S, burstBytes: limits.HTTP_CLIENT_BURST_BYTES });
  const handle = wrap((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    // pipelined past HTTP_MAX_REQUESTS_PER_SOCKET (the response before it closed the connection)
    if (overLimit.has(req)) {
      req.resume();
      res.setHeader('connection', 'close');
      return sendJson(res, 503, surfaceError(path, { kind: 'unavailable', reason: 'too many requests on one connection: open a new one' }));
    }
    // After close() (shutdown) no new connection is accepted, but a kept-alive one can still bring a
    // request: it is refused cleanly while the requests already in flight finish.
    if (!server.listening) {
      req.resume();
      return refuseWhileDraining(res, path, surfaceError);
    }
    // HTTP/1.1 requires Host (Node's own check answers with an empty 400); HTTP/1.0 may leave it out
    if (req.httpVersion === '1.1' && req.headers.host === undefined) {
      req.resume();
      res.setHeader('connection', 'close');
      return sendJson(res, 400, surfaceError(path, { kind: 'bad-request', reason: 'missing Host header' }));
    }
    if (path === '/healthz') return sendJson(res, 200, { status: 'ok' });
    if (path !== '/readyz') return compress(req, res, () => route(req, res, path));
    deps.store.ping().then(
      () => sendJson(res, 200, { status: 'ready', ...(deps.freshness?.() ?? {}) }),
      (error: unknown) => sendJson(res, 503, {
        status: 'unavailable',
        reason: error instanceof ServiceUnavailableError ? error.reason : 'database unreachable',
      }),
    );
  });
  /** The surfaces, behind compression. */
  const route = (req: IncomingMessage, res: ServerResponse, path: string) => {
    if (path === '/metrics' && deps.metrics) {
      deps.metrics().then(
        ({ contentType, body }) => {
          res.writeHead(200, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
          res.end(body);
        },
        () => sendJson(res, 500, { error: 'metrics unavailable' }),
      );
      return;
    }
    if (deps.rpc && (path === '/v2' || path.startsWith('/v2/'))) return deps.rpc(req, res, 'v2');
    if (deps.rpc && (path === '/v1' || path.startsWith('/v1/'))) return deps.rpc(req, res, 'v1');
    if (path === '/graphql' || path === '/graphql/') {
      for (const [name, value] of Object.entries(cors.headers(req.headers, graphqlCors))) res.setHeader(name, value);
      if (req.method === 'OPTIONS') {
        req.resume();
        res.writeHead(204, { 'content-length': '0' });
        return res.end();
      }
      if (graphiql && wantsGraphiql(req)) return graphiql(req, res);
      // GET answers GraphiQL's page or JSON by Accept: a shared cache keeps them apart (yoga's response
      // headers are copied over these, so Vary is set here, beside CORS' Vary: Origin)
      if (req.method === 'GET' || req.method === 'HEAD') {
        const vary = res.getHeader('vary');
        res.setHeader('vary', vary ? `${String(vary)}, Accept` : 'Accept');
      }
      return deps.yoga(req, res);
    }
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
  };
  const server = createServer({
    headersTimeout: limits.HTTP_HEADERS_TIMEOUT_MS,
    requestTimeout: limits.HTTP_REQUEST_TIMEOUT_MS,
    connectionsCheckingInterval: checkInterval(limits),
    requireHostHeader: false, // checked above, to answer with a body
  }, (req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    const admission = tracker.admit(req, res, path);
    if (admission === 'ignore') return;
    if (admission === 'over-limit') overLimit.add(req);
    // a client that has been answered more than its byte budget allows waits (probes are exempt). Refused
    // here, before the request log and metrics: a client hammering in debt costs a parse and a short write
    if (path !== '/healthz' && path !== '/readyz' && path !== '/metrics') {
      const retryAfter = budget.retryAfterS(req);
      if (retryAfter > 0) {
        req.resume();
        res.setHeader('retry-after', String(retryAfter));
        return sendJson(res, 429, surfaceError(path,
          { kind: 'too-many-requests', reason: `too much data answered to this client address: retry after ${retryAfter} s` }));
      }
      budget.charge(req, res);
    }
    handle(req, res);
  });
  const tracker = trackConnections(server, limits, { refuse: refuseConnection, cut: cutRequest(surfaceError) });
  server.on('clientError', answerClientError(tracker, surfaceError));
  return server;
}
