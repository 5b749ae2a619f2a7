import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Store } from '../db/store.js';
import type { GraphqlServer } from '../graphql/yoga.js';

export interface HttpDeps {
  store: Store;
  yoga: GraphqlServer;
  /** JSON-RPC handler for /v2/rpc… (and /v1/rpc…), when mounted. */
  rpc?: (req: IncomingMessage, res: ServerResponse, version: 'v1' | 'v2') => void;
}

function sendJson(res: ServerResponse, status: number, body: unknown) {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
  res.end(text);
}

/** One listener for every surface: /graphql, /v2/rpc…, /v1/rpc…, /healthz, /readyz. */
export function createHttpServer(deps: HttpDeps): Server {
  return createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    if (path === '/healthz') return sendJson(res, 200, { status: 'ok' });
    if (path === '/readyz') {
      deps.store.ping().then(
        () => sendJson(res, 200, { status: 'ready' }),
        () => sendJson(res, 503, { status: 'unavailable', reason: 'database unreachable' }),
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
  });
}
