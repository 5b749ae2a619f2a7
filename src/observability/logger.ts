import { GraphQLError } from 'graphql';
import { pino, type DestinationStream, type Logger, type LevelWithSilent } from 'pino';
import pretty from 'pino-pretty';
import { clientLimitOf, describeUnavailable, InvalidInputError, isInvalidInput, isUnavailable } from '../db/errors.js';
import { currentScope } from '../request/scope.js';

export type { Logger };

export interface LoggerOptions {
  level: LevelWithSilent;
  /**
   * The process whose lines these are (their `service` field): the gateway (default), or the sync
   * (`npm run sync`), whose lines keep pino's numeric levels (its supervisors read them) and are never pretty.
   */
  service?: 'inscription-gateway' | 'igw-sync';
  /** Where lines go; default stdout. Tests pass a stream to read them. */
  destination?: DestinationStream;
  /** Human-readable lines; default: when stdout is a terminal. */
  pretty?: boolean;
}

/**
 * JSON lines (one object per line, pino's format) for log shippers; colourised, aligned lines when a person
 * is watching a terminal. Request lines never carry bodies, headers or credentials: only the fields
 * written by the request logger (src/observability/request.ts) and errors with their stack.
 */
export function createLogger(options: LoggerOptions): Logger {
  const sync = options.service === 'igw-sync';
  const base = {
    level: options.level,
    base: { service: options.service ?? 'inscription-gateway' },
    timestamp: pino.stdTimeFunctions.isoTime,
    // defence in depth: should an object with credentials ever be logged, these paths are blanked
    redact: {
      paths: ['password', '*.password', 'url', '*.url', 'authorization', '*.authorization', 'headers', '*.headers'],
      censor: '[redacted]',
    },
    ...(sync ? {} : { formatters: { level: (label: string) => ({ level: label }) } }),
  };
  const usePretty = !sync && (options.pretty ?? (options.destination === undefined && process.stdout.isTTY === true));
  if (usePretty) {
    return pino(base, pretty({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service', singleLine: true, destination: options.destination ?? 1, sync: true }));
  }
  return options.destination ? pino(base, options.destination) : pino(base);
}

/**
 * What an error that reached a log says about the gateway:
 * - `client`: the client's own mistake (a value the database cannot take, such as text with NUL) or a limit
 *   its own request ran into (src/db/errors.ts ClientLimitError: row or database time budget, history depth);
 * - `outage`: the database is unreachable or timed out — expected now and then, answered as retryable;
 * - `bug`: anything else.
 * The cause chain is followed (GraphQL errors wrap the resolver's error in `originalError`).
 */
export function classifyFailure(error: unknown): 'client' | 'outage' | 'bug' {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current; depth++) {
    if (current instanceof InvalidInputError || isInvalidInput(current) || clientLimitOf(current)) return 'client';
    if (isUnavailable(current)) return 'outage';
    current = current instanceof GraphQLError ? current.originalError : (current as { cause?: unknown }).cause;
  }
  return 'bug';
}

function unavailableReason(error: unknown): string {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current; depth++) {
    if (isUnavailable(current)) return describeUnavailable(current);
    current = current instanceof GraphQLError ? current.originalError : (current as { cause?: unknown }).cause;
  }
  return 'unavailable';
}

/**
 * Logs an error at the level its kind deserves: a client's mistake at info and an outage at warn, both
 * as one line without a stack (they are not the gateway's fault, and an outage can produce thousands);
 * only a bug at error, with its stack. Each carries the `reqId` of the request it happened in.
 */
export function logFailure(logger: Logger, error: unknown, context: Record<string, unknown>, msg: string): void {
  const kind = classifyFailure(error);
  const limit = clientLimitOf(error);
  const scope = currentScope();
  // a limit the request ran into: said once, on the request's own line (failure "client", limit), not once per
  // element (a batch of 100 that exhausts its row budget would write 80 lines)
  if (limit && scope) {
    scope.limit ??= limit.reason;
    return;
  }
  // the request line's id, so that the failure and its request can be found together
  const fields = { reqId: scope?.id, ...context };
  if (kind === 'client') logger.info({ ...fields, failure: kind, reason: (error as Error)?.message }, `${msg}: client input refused`);
  else if (kind === 'outage') logger.warn({ ...fields, failure: kind, reason: unavailableReason(error) }, `${msg}: database unavailable`);
  else logger.error({ ...fields, err: error }, `${msg}: internal error`);
}

/**
 * yoga's logger interface on pino: errors (yoga logs every error it masks) carry the request id of the line
 * they belong to and are logged by kind (logFailure). Only messages and errors are written, never the
 * extra arguments (yoga's debug output may include request parameters).
 */
export function yogaLogger(logger: Logger) {
  const at = (level: 'debug' | 'info' | 'warn' | 'error') => (...args: unknown[]) => {
    const [first] = args;
    const reqId = currentScope()?.id;
    if (first instanceof Error) {
      if (level === 'error') return logFailure(logger, first, {}, 'graphql');
      if (logger.isLevelEnabled(level)) logger[level]({ reqId, err: first }, `graphql: ${first.message}`);
      return;
    }
    if (logger.isLevelEnabled(level)) logger[level]({ reqId }, `graphql: ${typeof first === 'string' ? first : 'event'}`);
  };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
