import { GraphQLError, type GraphQLErrorOptions } from 'graphql';
import { maskError as yogaMaskError } from 'graphql-yoga';
import { clientLimitOf, InvalidInputError, ServiceUnavailableError } from '../db/errors.js';

/**
 * What a client may see of an error: its own mistakes (GraphQL errors raised on purpose, with a code)
 * in full; a database outage as SERVICE_UNAVAILABLE (retryable); a limit of the client's own request (row or
 * database time budget, src/db/errors.ts ClientLimitError) as LIMIT_EXCEEDED with `extensions.reason`; a
 * value the database cannot take (NUL in text) as BAD_USER_INPUT; anything else masked by yoga as
 * "Unexpected error." with no SQL, stack or path in it.
 */
/**
 * A GraphQLError made without capturing a stack trace: the errors of a client's own request (limits, input)
 * and the copies made of them. Their stack is never shown or logged, and capturing it took 2–4 % of the CPU
 * of an error-heavy load (bench/README.md, "Held connections": every error of a reply is rebuilt as it is masked).
 */
export function clientError(message: string, options?: GraphQLErrorOptions): GraphQLError {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new GraphQLError(message, options);
  } finally {
    Error.stackTraceLimit = limit;
  }
}

export function maskError(error: unknown, message: string, isDev?: boolean): Error {
  const original = error instanceof GraphQLError ? error.originalError : error;
  const limit = clientLimitOf(original);
  if (limit) {
    return clientError(limit.message, {
      nodes: error instanceof GraphQLError ? error.nodes : undefined,
      path: error instanceof GraphQLError ? error.path : undefined,
      extensions: { code: 'LIMIT_EXCEEDED', reason: limit.reason },
    });
  }
  const code = original instanceof ServiceUnavailableError ? 'SERVICE_UNAVAILABLE'
    : original instanceof InvalidInputError ? 'BAD_USER_INPUT'
    : null;
  if (code) {
    return clientError((original as Error).message, {
      nodes: error instanceof GraphQLError ? error.nodes : undefined,
      path: error instanceof GraphQLError ? error.path : undefined,
      extensions: { code },
    });
  }
  return yogaMaskError(error, message, isDev);
}

const refusals = {
  'unavailable': { message: 'Service unavailable', code: 'SERVICE_UNAVAILABLE' },
  'too-many-requests': { message: 'Service unavailable', code: 'TOO_MANY_REQUESTS' },
  'bad-request': { message: 'Invalid request', code: 'BAD_REQUEST' },
  'unauthenticated': { message: 'Unauthenticated', code: 'UNAUTHENTICATED' },
} as const;

/**
 * The GraphQL body of a refusal by the HTTP listener on a /graphql path (src/server/http.ts's Refusal). An
 * API key's quota (a refusal with `retryAfterS`) is "Too many requests" with `extensions.retryAfter`; a
 * limit of the listener's own (`limit`: the byte budget, load shedding) is "Limit exceeded", LIMIT_EXCEEDED.
 */
export function graphqlRefusalBody(refusal: { kind: keyof typeof refusals; reason: string; retryAfterS?: number; limit?: boolean }): unknown {
  const limit = refusal.kind === 'too-many-requests' && refusal.limit === true;
  const quota = !limit && refusal.kind === 'too-many-requests' && refusal.retryAfterS !== undefined;
  const code = limit ? 'LIMIT_EXCEEDED' : refusals[refusal.kind].code;
  const message = limit ? 'Limit exceeded' : quota ? 'Too many requests' : refusals[refusal.kind].message;
  const retry = refusal.retryAfterS !== undefined && (quota || limit) ? { retryAfter: refusal.retryAfterS } : {};
  return {
    errors: [{
      message: refusal.reason ? `${message}: ${refusal.reason}` : message,
      extensions: { code, ...(limit ? { reason: refusal.reason } : {}), ...retry },
    }],
  };
}
