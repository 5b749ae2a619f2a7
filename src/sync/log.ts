// JSON lines on stdout (pino), one logger for the whole sync process.
import pino from 'pino';

export type Logger = pino.Logger;

/** The sync process's logger (the gateway's is createLogger in src/observability/logger.ts). */
export function createSyncLogger(level: string): Logger {
  return pino({ level, base: { service: 'igw-sync' }, timestamp: pino.stdTimeFunctions.isoTime });
}
