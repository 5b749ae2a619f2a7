import postgres from 'postgres';
import { ServiceUnavailableError, describeUnavailable, isUnavailable } from './errors.js';

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
  /** Called with the text of every statement sent (metrics and the no-N+1 test use it). */
  onQuery?: (text: string) => void;
}

export function createSql(options: DbOptions): Sql {
  const common = {
    max: options.poolMax,
    connect_timeout: options.connectTimeoutS,
    idle_timeout: 60,
    // prepared statements: planned once per connection; also required by the embedded engine (stack notes)
    prepare: true,
    onnotice: () => {},
    debug: options.onQuery ? (_conn: number, query: string) => options.onQuery?.(query) : undefined,
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
    let timer: NodeJS.Timeout | undefined;
    const limit = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new ServiceUnavailableError('query timed out')), timeoutMs);
    });
    try {
      return await Promise.race([query, limit]);
    } catch (error) {
      if (isUnavailable(error)) throw new ServiceUnavailableError(describeUnavailable(error));
      throw error;
    } finally {
      clearTimeout(timer);
    }
  };
}

export type Runner = ReturnType<typeof createRunner>;
