import postgres from 'postgres';
import { trackDbStatement } from '../observability/scope.js';
import { InvalidInputError, ServiceUnavailableError, describeUnavailable, isInvalidInput, isUnavailable } from './errors.js';

export type Sql = postgres.Sql<Record<string, never>>;

export interface DbOptions {
  /** postgres:// URL of a server, or… */
  url?: string;
  /** …the unix socket file of the embedded engine. */
  socketPath?: string;
  poolMax: number;
  statementTimeoutMs: number;
  connectTimeoutS: number;
  /** The gateway's sessions are read-only; migrations and loaders open a writable client. */
  readOnly: boolean;
  /** Called with the text (and bound parameters) of every statement sent (metrics, the no-N+1 test, bench/). */
  onQuery?: (text: string, params?: readonly unknown[]) => void;
}

export function createSql(options: DbOptions): Sql {
  const common = {
    max: options.poolMax,
    connect_timeout: options.connectTimeoutS,
    idle_timeout: 60,
    // Reconnect delay after failed connects. The driver's default grows 3^n/100 s up to 20 s and only
    // resets on a successful connect, so after a few seconds of outage every connection waits up to 20 s
    // before trying again; capped at 0.5 s (jittered), service is back right after the database is.
    backoff: (retries: number) => (0.5 + Math.random() / 2) * Math.min(0.05 * 2 ** retries, 0.5),
    // prepared statements: planned once per connection; also required by the embedded engine (stack notes)
    prepare: true,
    onnotice: () => {},
    debug: options.onQuery ? (_conn: number, query: string, params: unknown[]) => options.onQuery?.(query, params) : undefined,
    connection: {
      application_name: 'inscription-gateway',
      statement_timeout: options.statementTimeoutMs,
      ...(options.readOnly ? { default_transaction_read_only: true } : {}),
    },
  } satisfies postgres.Options<Record<string, never>>;
  if (options.url) return postgres(options.url, common);
  if (options.socketPath) {
    return postgres({ ...common, path: options.socketPath, user: 'postgres', database: 'postgres', host: 'localhost' });
  }
  throw new Error('createSql needs a url or a socketPath');
}

/**
 * Runs one statement with an application-side time limit. The server's statement_timeout is the real
 * limit; this one backs it up where the engine cannot enforce it (the embedded engine ignores startup
 * parameters), and maps connection failures to ServiceUnavailableError.
 */
export function createRunner(timeoutMs: number) {
  return async function run<T>(query: PromiseLike<T>): Promise<T> {
    // database time of the current request (request log) and in-flight statements (pool metrics)
    const settled = trackDbStatement();
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ServiceUnavailableError('query timed out')), timeoutMs);
    });
    try {
      return await Promise.race([query, limit]);
    } catch (error) {
      if (isUnavailable(error)) throw new ServiceUnavailableError(describeUnavailable(error));
      if (isInvalidInput(error)) throw new InvalidInputError('text arguments must not contain NUL (U+0000) characters');
      throw error;
    } finally {
      clearTimeout(timer);
      settled();
    }
  };
}

export type Runner = ReturnType<typeof createRunner>;
