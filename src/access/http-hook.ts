import type { IncomingMessage, ServerResponse } from 'node:http';
import { currentScope } from '../request/scope.js';
import type { Access, AccessGate, AccessRefusal } from './gate.js';
import { setAccess } from './request-access.js';

// The one call the HTTP listener makes before a surface runs a request (src/server/http.ts): it decides the
// request's access class through the gate, sets the RateLimit fields (and Retry-After, WWW-Authenticate) on
// the response, keeps the class for the surfaces (./request-access.ts) and counts a keyed request's outcome
// when its response ends. A refusal comes back for the listener to word in the surface's error shape. A
// request with no credentials while anonymous access is allowed costs nothing: no promise, no lookup.

export interface HookRefusal extends AccessRefusal {
  status: 401 | 429 | 503;
}

/**
 * Who a request is (an API key or anonymous) and whether it may go on, decided before a surface runs it.
 * null: go on now; a promise: wait for it, then go on (null) or a refusal with its status, which the listener
 * answers in the surface's error shape. It sets its own response headers. Never rejects.
 */
export type AccessHook = (req: IncomingMessage, res: ServerResponse) => Promise<HookRefusal | null> | null;

export function createAccessHook(gate: AccessGate, options: { anonymous: 'allow' | 'deny'; clientKey: (address: string) => string }): AccessHook {
  return (req, res) => {
    const headers = req.headers;
    if (options.anonymous === 'allow' && headers.authorization === undefined && headers['x-api-key'] === undefined) return null;
    const address = req.socket.remoteAddress;
    return gate.check(headers, address === undefined ? 'unknown' : options.clientKey(address)).then((verdict) => {
      for (const [name, value] of Object.entries(verdict.headers)) res.setHeader(name, value);
      if (verdict.ok) {
        setAccess(req, verdict.access);
        if (verdict.access.kind === 'key') {
          const scope = currentScope();
          if (scope) {
            scope.keyName = verdict.access.key.name;
            // the JSON-RPC layer's share of a key's overrides, read there without asking this layer again
            const { maxPageSize } = verdict.access.key.overrides;
            if (maxPageSize !== null) scope.keyMaxPageSize = maxPageSize;
          }
          countOutcome(gate, verdict.access, req, res);
        }
        return null;
      }
      if (verdict.status === 401) res.setHeader('www-authenticate', 'Bearer realm="inscription-gateway"');
      return { ...verdict.refusal, status: verdict.status };
    }, (): HookRefusal => ({ kind: 'unavailable', reason: 'access check failed', status: 503, retryAfterS: 1 }));
  };
}

/**
 * Bytes written for the response and whether it was an error: an HTTP error status, a GraphQL error, or a
 * JSON-RPC error of any call (recorded in the request scope, src/request/scope.ts).
 */
function countOutcome(gate: AccessGate, access: Access, req: IncomingMessage, res: ServerResponse) {
  const socket = req.socket;
  const before = socket.bytesWritten;
  const scope = currentScope();
  res.once('close', () => {
    const error = res.statusCode >= 400 || (scope !== undefined &&
      (scope.errorCodes.length > 0 || scope.envelopeCode !== undefined || scope.rpc.some((call) => call.code !== undefined)));
    gate.finish(access, { error, bytes: Math.max(0, socket.bytesWritten - before) });
  });
}
