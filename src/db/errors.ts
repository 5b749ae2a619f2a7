// Errors the data layer lets escape. Everything else from the driver is treated as internal and never
// shown to clients (it may carry SQL text).

/** The database cannot answer right now (down, connection lost, timed out): the client may retry. */
export class ServiceUnavailableError extends Error {
  constructor(readonly reason: string) {
    super(`Service unavailable: ${reason}`);
    this.name = 'ServiceUnavailableError';
  }
}

/**
 * The request has fetched its share of rows (REQUEST_MAX_ROWS): its further statements are refused so one
 * request cannot monopolise the pool. A kind of "unavailable" (-32000 / SERVICE_UNAVAILABLE): the same
 * call in a request of its own, or a smaller batch, is answered.
 */
export class RequestBudgetError extends ServiceUnavailableError {
  constructor() {
    super('request row budget exceeded');
    this.name = 'RequestBudgetError';
  }
}

/** A value sent by the client that the database cannot take (text with a NUL character): the client's mistake. */
export class InvalidInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidInputError';
  }
}

// 22021 character_not_in_repertoire (a NUL byte in text), 22P05 untranslatable_character: only a
// client's string can bring these into a read query
const invalidInputStates = new Set(['22021', '22P05']);

export function isInvalidInput(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' && invalidInputStates.has(code);
}

// SQLSTATE classes/codes that mean "the database is not answering", not "the query is wrong".
const unavailableStates = new Set(['57014', '57P01', '57P02', '57P03', '53300']);
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
  return 'database unreachable';
}
