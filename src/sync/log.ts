// JSON lines on stdout (pino), one logger for the whole sync process.
import pino from 'pino';

export type Logger = pino.Logger;

export function createLogger(level: string): Logger {
  return pino({ level, base: { service: 'igw-sync' }, timestamp: pino.stdTimeFunctions.isoTime });
}
