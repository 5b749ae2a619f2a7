import { GraphQLError } from 'graphql';
import { maskError as yogaMaskError } from 'graphql-yoga';
import { InvalidInputError, ServiceUnavailableError } from '../db/errors.js';

/**
 * What a client may see of an error: its own mistakes (GraphQL errors raised on purpose, with a code)
 * in full; a database outage as SERVICE_UNAVAILABLE (retryable); a value the database cannot take (NUL in
 * text) as BAD_USER_INPUT; anything else masked by yoga as "Unexpected error." with no SQL, stack or path
 * in it.
 */
export function maskError(error: unknown, message: string, isDev?: boolean): Error {
  const original = error instanceof GraphQLError ? error.originalError : error;
  const code = original instanceof ServiceUnavailableError ? 'SERVICE_UNAVAILABLE'
    : original instanceof InvalidInputError ? 'BAD_USER_INPUT'
    : null;
  if (code) {
    return new GraphQLError((original as Error).message, {
      nodes: error instanceof GraphQLError ? error.nodes : undefined,
      path: error instanceof GraphQLError ? error.path : undefined,
      extensions: { code },
    });
  }
  return yogaMaskError(error, message, isDev);
}
