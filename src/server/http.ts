import { createServer, STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { ServiceUnavailableError } from '../db/errors.js';
import type { Store } from '../db/store.js';
import type { GraphqlServer } from '../graphql/yoga.js';
import { rpcErrors, type RpcError } from '../rpc/errors.js';

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
}

function sendJson(res: ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

const isRpcPath = (path: string) => /^\/v[12](\/|$)/.test(path);

/** An error body in the shape of the surface that `path` belongs to (JSON-RPC, GraphQL or plain). */
function surfaceError(path: string, rpc: RpcError, graphqlCode: string): unknown {
  if (isRpcPath(path)) return { jsonrpc: '2.0', error: rpc, id: null };
  const reason = rpc.data?.reason;
  if (path.startsWith('/graphql')) {
    return { errors: [{ message: reason ? `${rpc.message}: ${reason}` : rpc.message, extensions: { code: graphqlCode } }] };
  }
  return { status: 'error', reason: reason ?? rpc.message };
}

/** 503 and the connection closed: the client retries elsewhere. */
function refuseWhileDraining(res: ServerResponse, path: string) {
  res.setHeader('connection', 'close');
  sendJson(res, 503, surfaceError(path, rpcErrors.unavailable('shutting down'), 'SERVICE_UNAVAILABLE'));
}

/**
 * HTTP that never becomes a request (headers over Node's 16 KB, a malformed request line, a request not
 * received in time): Node would answer with an empty 400/431/408; the client gets the same status with
 * an error body of its surface.
 */
function answerClientError(error: NodeJS.ErrnoException & { rawPacket?: Buffer }, socket: Duplex) {
  if (error.code === 'ECONNRESET' || !socket.writable) return socket.destroy();
  const status = error.code === 'HPE_HEADER_OVERFLOW' ? 431 : error.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 408 : 400;
  const path = /^[A-Z]+ (\/[^\s?]*)/.exec(error.rawPacket?.toString('latin1') ?? '')?.[1] ?? '';
  const reason = status === 431 ? 'request line and headers exceed 16 KB' : status === 408 ? 'request not received in time' : 'malformed HTTP request';
  const text = JSON.stringify(surfaceError(path, rpcErrors.invalidRequest(reason), 'BAD_REQUEST'));
  socket.end(`HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nconnection: close\r\ncontent-type: application/json; charset=utf-8\r\n` +
    `content-length: ${Buffer.byteLength(text)}\r\n\r\n${text}`);
}

/** One listener for every surface: /graphql, /v2/rpc…, /v1/rpc…, /healthz, /readyz, /metrics. */
export function createHttpServer(deps: HttpDeps): Server {
  const wrap = deps.wrap ?? ((handler) => handler);
  const server = createServer(wrap((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    // After close() (shutdown) no new connection is accepted, but a kept-alive one can still bring a
    // request: it is refused cleanly while the requests already in flight finish.
    if (!server.listening) {
      req.resume();
      return refuseWhileDraining(res, path);
    }
    if (path === '/healthz') return sendJson(res, 200, { status: 'ok' });
    if (path === '/readyz') {
      deps.store.ping().then(
        () => sendJson(res, 200, { status: 'ready', ...(deps.freshness?.() ?? {}) }),
        (error: unknown) => sendJson(res, 503, {
          status: 'unavailable',
          reason: error instanceof ServiceUnavailableError ? error.reason : 'database unreachable',
        }),
      );
      return;
    }
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
    if (path === '/graphql' || path.startsWith('/graphql/')) return deps.yoga(req, res);
    if (path === '/') {
      res.writeHead(302, { location: '/graphql' });
      return res.end();
    }
    sendJson(res, 404, { error: 'not found' });
  }));
  server.on('clientError', answerClientError);
  return server;
}
