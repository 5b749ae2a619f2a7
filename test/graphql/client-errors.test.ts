import { GraphQLError } from 'graphql';
import { describe, expect, it } from 'vitest';
import { clientError, maskError } from '../../src/graphql/errors.js';
import { ClientLimitError } from '../../src/db/errors.js';

// The errors of a client's own request are built without a stack trace (src/graphql/errors.ts): an
// error-heavy load (every alias over a limit) rebuilt each of them with one as it was masked.

describe('client errors', () => {
  it('carry no stack frames, and the stack trace limit is put back', () => {
    const before = Error.stackTraceLimit;
    const error = clientError('over the limit', { extensions: { code: 'LIMIT_EXCEEDED' } });
    expect(error).toBeInstanceOf(GraphQLError);
    expect(error.toJSON()).toEqual({ message: 'over the limit', extensions: { code: 'LIMIT_EXCEEDED' } });
    expect(error.stack?.split('\n').filter((line) => line.trimStart().startsWith('at '))).toEqual([]);
    expect(Error.stackTraceLimit).toBe(before);
    // an unexpected error keeps its stack for the logs
    expect(new Error('unexpected').stack?.split('\n').filter((line) => line.trimStart().startsWith('at ')).length).toBeGreaterThan(0);
  });

  it("a client's own limit is masked as LIMIT_EXCEEDED with its reason, without a stack", () => {
    const limit = new ClientLimitError('too many rows for one request');
    const masked = maskError(new GraphQLError('x', { originalError: limit, path: ['tick', 'holders'] }), 'Unexpected error.') as GraphQLError;
    expect(masked.toJSON()).toMatchObject({ path: ['tick', 'holders'], extensions: { code: 'LIMIT_EXCEEDED' } });
    expect(masked.message).toBe('Limit exceeded: too many rows for one request');
    expect(masked.stack?.includes('\n    at ')).toBe(false);
  });
});
