// Errors the data layer lets escape. Everything else from the driver is treated as internal and never
// shown to clients (it may carry SQL text).

/** The database cannot answer right now (down, connection lost, timed out): the client may retry. */
export class ServiceUnavailableError extends Error {
  constructor(readonly reason: string) {
    super(`Service unavailable: ${reason}`);
    this.name = 'ServiceUnavailableError';
  }
}

// SQLSTATE classes/codes that mean "the database is not answering", not "the query is wrong".
const unavailableStates = new Set(['57014', '57P01', '57P02', '57P03', '53300', '25006']);
const unavailableNodeCodes = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EPIPE', 'ETIMEDOUT', 'ENOENT', 'EHOSTUNREACH',
  'CONNECT_TIMEOUT', 'CONNECTION_CLOSED', 'CONNECTION_DESTROYED', 'CONNECTION_ENDED',
]);

export function isUnavailable(error: unknown): boolean {
  if (error instanceof ServiceUnavailableError) return true;
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return false;
  return unavailableNodeCodes.has(code) || unavailableStates.has(code) || code.startsWith('08');
}

export function describeUnavailable(error: unknown): string {
  if (error instanceof ServiceUnavailableError) return error.reason;
  const code = (error as { code?: string }).code;
  if (code === '57014') return 'query timed out';
  if (code === '25006') return 'read-only transaction';
  return 'database unreachable';
}
