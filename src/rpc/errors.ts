import type { GraphQLError } from 'graphql';

// The JSON-RPC error codes and messages of the v2 interface (reference notes §2). Errors are plain
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
    case 'BAD_USER_INPUT':
    case 'GRAPHQL_VALIDATION_FAILED':
      return rpcErrors.invalidParams(first.message);
    default:
      return rpcErrors.internal();
  }
}

/** The JSON-RPC body of a refusal by the HTTP listener on an RPC path (src/server/http.ts's Refusal). */
export function rpcRefusalBody(refusal: { kind: 'unavailable' | 'bad-request' | 'too-many-requests'; reason: string }): unknown {
  const error = refusal.kind === 'bad-request' ? rpcErrors.invalidRequest(refusal.reason) : rpcErrors.unavailable(refusal.reason);
  return { jsonrpc: '2.0', error, id: null };
}
