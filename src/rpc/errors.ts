import type { GraphQLError } from 'graphql';

// The JSON-RPC error codes and messages of the v2 interface (docs/json-rpc.md). Errors are plain
// objects: jayson passes a thrown `{code, message, data}` to the wire verbatim.

export interface RpcError {
  code: number;
  message: string;
  data?: Record<string, unknown>;
}

export const rpcErrors = {
  parse: (reason?: string): RpcError => withData(-32700, 'Parse error', reason),
  invalidRequest: (reason?: string): RpcError => withData(-32600, 'Invalid request', reason),
  methodNotFound: (method: string): RpcError => ({ code: -32601, message: 'Method not found', data: { method } }),
  invalidParams: (reason: string, param?: { position: number; name: string }): RpcError => ({
    code: -32602,
    message: `Invalid params: ${reason}`,
    data: { reason, ...(param ? { param: param.name, position: param.position } : {}) },
  }),
  notFound: (reason: string): RpcError => ({ code: -32603, message: 'Record not found', data: { reason } }),
  internal: (): RpcError => ({ code: -32604, message: 'Internal error' }),
  unavailable: (reason: string): RpcError => ({ code: -32000, message: 'Service unavailable', data: { reason, retryable: true } }),
  /** No valid API key (HTTP 401): unknown, revoked, expired, or none where ANONYMOUS_ACCESS=deny. */
  unauthorized: (reason: string): RpcError => ({ code: -32001, message: 'Unauthorized', data: { reason } }),
  /**
   * A limit of the client's own making (EIP-1474's -32005 "limit exceeded"): its request's row or database
   * time budget, a history scan too deep, a byte budget, the load shedder. Never `retryable` as sent;
   * `retryAfter` (s) when waiting helps.
   */
  limitExceeded: (reason: string, retryAfter?: number): RpcError =>
    ({ code: -32005, message: 'limit exceeded', data: retryAfter === undefined ? { reason } : { reason, retryAfter } }),
  /** Over an API key's quota (HTTP 429): retry after this many seconds. */
  tooManyRequests: (reason: string, retryAfter: number): RpcError => ({ code: -32005, message: 'Too many requests', data: { reason, retryAfter } }),
};

function withData(code: number, message: string, reason?: string): RpcError {
  return reason ? { code, message, data: { reason } } : { code, message };
}

export function isRpcError(value: unknown): value is RpcError {
  return typeof value === 'object' && value !== null && Number.isInteger((value as RpcError).code) &&
    typeof (value as RpcError).message === 'string';
}

/** Maps the (already masked) errors of a GraphQL result to one JSON-RPC error. */
export function fromGraphqlErrors(errors: readonly GraphQLError[]): RpcError {
  const first = errors[0]!;
  switch (first.extensions?.code) {
    case 'SERVICE_UNAVAILABLE':
      return rpcErrors.unavailable(first.message.replace(/^Service unavailable: /, ''));
    case 'LIMIT_EXCEEDED':
      return rpcErrors.limitExceeded(String(first.extensions.reason ?? first.message.replace(/^Limit exceeded: /, '')));
    case 'BAD_USER_INPUT':
    case 'GRAPHQL_VALIDATION_FAILED':
      return rpcErrors.invalidParams(first.message);
    default:
      return rpcErrors.internal();
  }
}

/** The JSON-RPC body of a refusal by the HTTP listener on an RPC path (src/server/http.ts's Refusal). */
export function rpcRefusalBody(
  refusal: { kind: 'unavailable' | 'bad-request' | 'too-many-requests' | 'unauthenticated'; reason: string; retryAfterS?: number; limit?: boolean },
): unknown {
  const error = refusal.kind === 'bad-request' ? rpcErrors.invalidRequest(refusal.reason)
    : refusal.kind === 'unauthenticated' ? rpcErrors.unauthorized(refusal.reason)
    // an API key's quota (src/access) says how long to wait; the listener's own per-client limits (byte
    // budget, load shedding) are the client's limits too: -32005 "limit exceeded", never -32000 retryable
    : refusal.kind === 'too-many-requests' && refusal.retryAfterS !== undefined && !refusal.limit ? rpcErrors.tooManyRequests(refusal.reason, refusal.retryAfterS)
    : refusal.kind === 'too-many-requests' ? rpcErrors.limitExceeded(refusal.reason, refusal.retryAfterS)
    : rpcErrors.unavailable(refusal.reason);
  return { jsonrpc: '2.0', error, id: null };
}
