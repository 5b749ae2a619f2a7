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
 * A limit the client's own request ran into (its row budget, its database time budget, a history scan
 * too deep): the client's doing, not an outage. Answered as JSON-RPC -32005 "limit exceeded" (EIP-1474)
 * with `data.reason`, GraphQL `LIMIT_EXCEEDED`, never retryable as sent, logged at info as a client failure.
 * `reason` names the limit; the same call in a smaller request is answered.
 */
export class ClientLimitError extends Error {
  constructor(readonly reason: string) {
    // no stack: it is the client's doing, never logged with one, and a refused batch or alias list builds many
    const depth = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(`Limit exceeded: ${reason}`);
    Error.stackTraceLimit = depth;
    this.name = 'ClientLimitError';
  }
}

/**
 * The request has fetched its share of rows (REQUEST_MAX_ROWS): its further statements are refused so one
 * request cannot monopolise the pool. The same call in a request of its own, or a smaller batch, is answered.
 */
export class RequestBudgetError extends ClientLimitError {
  constructor() {
    super('request row budget exceeded');
    this.name = 'RequestBudgetError';
  }
}

/** The request's statements have held database connections for DB_REQUEST_TIME_BUDGET_MS: its further ones are refused. */
export class RequestTimeBudgetError extends ClientLimitError {
  constructor() {
    super('request database time budget exceeded');
    this.name = 'RequestTimeBudgetError';
  }
}

/**
 * The rows held by every request in progress are past REQUESTS_MAX_ROWS_HELD and this request already holds
 * many: its further statements are refused, the heaviest first, so that answers being built cannot fill the
 * heap whatever the number of clients. A request holding few rows is never refused.
 */
export class RequestsBusyError extends ClientLimitError {
  constructor() {
    super('server overloaded: rows held by all requests past REQUESTS_MAX_ROWS_HELD; retry with smaller requests or later');
    this.name = 'RequestsBusyError';
  }
}

/** Finds a ClientLimitError in an error's cause chain (GraphQL errors wrap the resolver's in `originalError`). */
export function clientLimitOf(error: unknown): ClientLimitError | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current; depth++) {
    if (current instanceof ClientLimitError) return current;
    const next = current as { originalError?: unknown; cause?: unknown };
    current = next.originalError ?? next.cause;
  }
  return undefined;
}

/**
 * A read replica no longer proven within MAX_REPLICA_LAG_MS when a statement was about to be sent to it
 * (src/db/sources.ts): the statement goes to the primary instead (a retry that never reached a server).
 */
export class ReplicaBehindError extends Error {
  readonly code = 'IGW_REPLICA_BEHIND';
  constructor() {
    super('read replica behind the lag budget');
    this.name = 'ReplicaBehindError';
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

// SQLSTATE classes/codes that mean "the database is not answering (this statement) right now", not "the
// query is wrong": 57014 query_canceled (statement_timeout), 40001 serialization_failure (on a standby: a
// recovery conflict cancelled the statement), 40P01 deadlock_detected, 57P01–57P03 admin/crash shutdown,
// cannot_connect_now, 53300 too_many_connections and class 08 (connection exceptions).
const unavailableStates = new Set(['57014', '40001', '40P01', '57P01', '57P02', '57P03', '53300']);
const unavailableNodeCodes = new Set([
  'ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EPIPE', 'ETIMEDOUT', 'ENOENT', 'EHOSTUNREACH',
  'CONNECT_TIMEOUT', 'CONNECTION_CLOSED', 'CONNECTION_DESTROYED', 'CONNECTION_ENDED',
]);

// 26000 invalid_sql_statement_name ("prepared statement … does not exist") and 42P05
// duplicate_prepared_statement: the gateway's own prepared statements, lost or found again on another server
// session between two statements of one connection. Only a transaction pooler in front does that.
const sessionLostStates = new Set(['26000', '42P05']);

/** A statement failed because the server session changed under the connection (a transaction pooler). */
export function isSessionLost(error: unknown): boolean {
  const code = codeOf(error);
  return code !== undefined && sessionLostStates.has(code);
}

const codeOf = (error: unknown) => {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
};

export function isUnavailable(error: unknown): boolean {
  if (error instanceof ServiceUnavailableError || error instanceof ReplicaBehindError) return true;
  const code = codeOf(error);
  if (code === undefined) return false;
  return unavailableNodeCodes.has(code) || unavailableStates.has(code) || code.startsWith('08') || sessionLostStates.has(code);
}

/**
 * A read that failed for a reason of the server or the connection, not of the statement: sent again
 * (once, on another source when there is one) it may well succeed. Not a timeout (57014: the statement
 * is slow, another try doubles the load) and not the gateway's own refusals (server busy, row budget).
 */
export function isRetryable(error: unknown): boolean {
  if (error instanceof ServiceUnavailableError) return false;
  const code = codeOf(error);
  return code !== undefined && code !== '57014' && isUnavailable(error);
}

/** Failures in which the source itself cannot be reached (as opposed to one statement being cancelled). */
export function isConnectFailure(error: unknown): boolean {
  const code = codeOf(error);
  return code !== undefined && (unavailableNodeCodes.has(code) || code === '57P03' || code === '53300' || code.startsWith('08'));
}

export function describeUnavailable(error: unknown): string {
  if (error instanceof ServiceUnavailableError) return error.reason;
  const code = codeOf(error);
  if (code === '57014') return 'query timed out';
  if (code === '40001' || code === '40P01') return 'query cancelled by a database conflict';
  if (error instanceof ReplicaBehindError) return 'no database source within the replica lag budget';
  if (isSessionLost(error)) return 'database session lost between statements (a transaction pooler without DB_POOLER=pgbouncer)';
  return 'database unreachable';
}
