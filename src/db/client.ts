import postgres from 'postgres';
import { parseTimestamptz } from '../domain/utc-time.js';

export type Sql = postgres.Sql<Record<string, never>>;

/** postgres.js' own date type for timestamptz, with the gateway's parser (serialising as it does). */
const timestamptz = {
  to: 1184,
  from: [1184],
  serialize: (x: Date | string | number) => (x instanceof Date ? x : new Date(x)).toISOString(),
  parse: parseTimestamptz,
};

// typed as the gateway's Sql has it (no custom types): the values stay the Dates the driver's own type gives
const timestampTypes: Record<never, never> = { timestamptz };

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
  /**
   * `pgbouncer`: a transaction pooler in front. Server sessions change between transactions, so no
   * prepared statements and no startup parameters but the application name (PgBouncer refuses the
   * others); read-only and statement_timeout are then set per transaction (src/db/source-routing.ts).
   */
  pooler?: 'none' | 'pgbouncer';
  /** application_name of the sessions (default `inscription-gateway`). */
  applicationName?: string;
  /** Called with the text (and bound parameters) of every statement sent (metrics, the no-N+1 test, bench/). */
  onQuery?: (text: string, params?: readonly unknown[]) => void;
  /**
   * Notifications that arrive on this client's connections though it LISTENs on nothing: on the embedded
   * engine, where every connection shares one session, a NOTIFY reaches the connection that committed it
   * (src/db/embedded.ts). postgres.js takes this as its `onnotify` option (the one its own listen() uses).
   */
  onNotify?: (channel: string, payload: string) => void;
}

export function createSql(options: DbOptions): Sql {
  const pooled = options.pooler === 'pgbouncer';
  const common = {
    max: options.poolMax,
    connect_timeout: options.connectTimeoutS,
    idle_timeout: 60,
    // Reconnect delay after failed connects. The driver's default grows 3^n/100 s up to 20 s and only
    // resets on a successful connect, so after a few seconds of outage every connection waits up to 20 s
    // before trying again; capped at 0.5 s (jittered), service is back right after the database is.
    backoff: (retries: number) => (0.5 + Math.random() / 2) * Math.min(0.05 * 2 ** retries, 0.5),
    // prepared statements: planned once per connection; also required by the embedded engine.
    // Behind a transaction pooler a statement prepared on one server session is not there in the next.
    prepare: !pooled,
    onnotice: () => {},
    // the parser only: the values stay Dates, as the driver's own type gives them
    types: timestampTypes,
    debug: options.onQuery ? (_conn: number, query: string, params: unknown[]) => options.onQuery?.(query, params) : undefined,
    connection: pooled ? { application_name: options.applicationName ?? 'inscription-gateway' } : {
      application_name: options.applicationName ?? 'inscription-gateway',
      statement_timeout: options.statementTimeoutMs,
      ...(options.readOnly ? { default_transaction_read_only: true } : {}),
    },
  } satisfies postgres.Options<Record<string, never>>;
  if (options.url) return postgres(options.url, common);
  if (options.socketPath) {
    const notify: object = options.onNotify ? { onnotify: options.onNotify } : {};
    return postgres({ ...common, ...notify, path: options.socketPath, user: 'postgres', database: 'postgres', host: 'localhost' });
  }
  throw new Error('createSql needs a url or a socketPath');
}
