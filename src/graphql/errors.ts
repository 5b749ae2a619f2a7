import { GraphQLError } from 'graphql';
import { maskError as yogaMaskError } from 'graphql-yoga';
import { ServiceUnavailableError } from '../db/errors.js';

/**
 * What a client may see of an error: its own mistakes (GraphQL errors raised on purpose, with a code)
 * in full; a database outage as SERVICE_UNAVAILABLE (retryable); anything else masked by yoga as
 * "Unexpected error." with no SQL, stack or path in it.
 */
export function maskError(error: unknown, message: string, isDev?: boolean): Error {
  const original = error instanceof GraphQLError ? error.originalError : error;
  if (original instanceof ServiceUnavailableError) {
    return new GraphQLError(original.message, {
      nodes: error instanceof GraphQLError ? error.nodes : undefined,
      path: error instanceof GraphQLError ? error.path : undefined,
      extensions: { code: 'SERVICE_UNAVAILABLE' },
    });
  }
  return yogaMaskError(error, message, isDev);
}
