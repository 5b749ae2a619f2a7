import { pino, type DestinationStream, type Logger, type LevelWithSilent } from 'pino';
import pretty from 'pino-pretty';
import { currentScope } from './scope.js';

export type { Logger };

export interface LoggerOptions {
  level: LevelWithSilent;
  /** Where lines go; default stdout. Tests pass a stream to read them. */
  destination?: DestinationStream;
  /** Human-readable lines; default: when stdout is a terminal. */
  pretty?: boolean;
}

/**
 * JSON lines (one object per line, pino's format) for log shippers; colourised, aligned lines when a person
 * is watching a terminal. Request lines never carry bodies, headers or credentials: only the fields
 * written by the request logger (src/observability/http.ts) and errors with their stack.
 */
export function createLogger(options: LoggerOptions): Logger {
  const base = {
    level: options.level,
    base: { service: 'inscription-gateway' },
    timestamp: pino.stdTimeFunctions.isoTime,
    // defence in depth: should an object with credentials ever be logged, these paths are blanked
    redact: {
      paths: ['password', '*.password', 'url', '*.url', 'authorization', '*.authorization', 'headers', '*.headers'],
      censor: '[redacted]',
    },
    formatters: { level: (label: string) => ({ level: label }) },
  };
  const usePretty = options.pretty ?? (options.destination === undefined && process.stdout.isTTY === true);
  if (usePretty) {
    return pino(base, pretty({ colorize: true, translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname,service', singleLine: true, destination: options.destination ?? 1, sync: true }));
  }
  return options.destination ? pino(base, options.destination) : pino(base);
}

/** A logger that writes nothing (tests that do not look at logs, tools). */
export function silentLogger(): Logger {
  return pino({ level: 'silent' });
}

/**
 * yoga's logger interface on pino: errors (a masked unexpected error is logged by yoga with its stack)
 * carry the request id of the line they belong to. Only messages and errors are written, never the
 * extra arguments (yoga's debug output may include request parameters).
 */
export function yogaLogger(logger: Logger) {
  const at = (level: 'debug' | 'info' | 'warn' | 'error') => (...args: unknown[]) => {
    if (!logger.isLevelEnabled(level)) return;
    const [first] = args;
    const reqId = currentScope()?.id;
    if (first instanceof Error) logger[level]({ reqId, err: first }, `graphql: ${first.message}`);
    else logger[level]({ reqId }, `graphql: ${typeof first === 'string' ? first : 'event'}`);
  };
  return { debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}
