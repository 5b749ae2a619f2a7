import postgres from 'postgres';
import type { GatewayConfig } from '../../src/app.js';
import { createSql, type Sql } from '../../src/db/client.js';
import { startEmbedded, type EmbeddedDatabase } from '../../src/db/embedded.js';
import { migrate } from '../../src/db/migrate.js';
import { portAnswers } from './ports.js';

// Every test file gets its own fresh database: on a server (DATABASE_URL, else 127.0.0.1:5432 if it
// answers) a new database per file; otherwise an in-memory embedded engine per file.

export type Engine = 'server' | 'embedded';

const localUrl = 'postgres://postgres@127.0.0.1:5432/postgres';

let serverUrl: Promise<string | null> | undefined;
/** The server the tests use, or null when only the embedded engine is available. */
export function findServer(): Promise<string | null> {
  return (serverUrl ??= (async () => {
    if (process.env.DATABASE_URL) return process.env.DATABASE_URL;
    if (process.env.TEST_ENGINE === 'embedded') return null;
    return (await portAnswers('127.0.0.1', 5432)) ? localUrl : null;
  })());
}

export interface TestDatabase {
  engine: Engine;
  target: { url?: string; socketPath?: string };
  /** A writable connection (fixtures); the gateway under test connects read-only. */
  sql: Sql;
  close(): Promise<void>;
}

export async function createTestDatabase(): Promise<TestDatabase> {
  const base = await findServer();
  if (base) {
    const name = `igw_test_${process.pid}_${Math.random().toString(36).slice(2, 10)}`;
    const admin = postgres(base, { max: 1, onnotice: () => {} });
    await admin.unsafe(`CREATE DATABASE ${name}`);
    const url = new URL(base);
    url.pathname = `/${name}`;
    const sql = createSql({ url: url.toString(), poolMax: 2, statementTimeoutMs: 120_000, connectTimeoutS: 10, readOnly: false });
    await migrate(sql);
    return {
      engine: 'server',
      target: { url: url.toString() },
      sql,
      async close() {
        await sql.end({ timeout: 5 });
        await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
        await admin.end({ timeout: 5 });
      },
    };
  }
  const embedded: EmbeddedDatabase = await startEmbedded({ maxConnections: 16 });
  const sql = createSql({ socketPath: embedded.socketPath, poolMax: 1, statementTimeoutMs: 120_000, connectTimeoutS: 10, readOnly: false });
  await migrate(sql);
  return {
    engine: 'embedded',
    target: { socketPath: embedded.socketPath },
    sql,
    async close() {
      await sql.end({ timeout: 5 });
      await embedded.stop();
    },
  };
}

export const testConfig: GatewayConfig = {
  DB_POOL_MAX: 4,
  DB_STATEMENT_TIMEOUT_MS: 10_000,
  DB_CONNECT_TIMEOUT_S: 5,
  DEFAULT_PAGE_SIZE: 10,
  MAX_PAGE_SIZE: 1_000,
  GRAPHQL_INTROSPECTION: true,
  CORS_ORIGIN: '*',
  RPC_MAX_BODY_BYTES: 1024 * 1024,
  RPC_MAX_BATCH: 100,
  GRAPHQL_MAX_BODY_BYTES: 1024 * 1024,
  GRAPHQL_MAX_DEPTH: 15,
  GRAPHQL_MAX_ALIASES: 15,
  GRAPHQL_MAX_TOKENS: 2_000,
  GRAPHQL_MAX_COST: 250_000,
  GRAPHQL_MAX_RESULT_NODES: 100_000,
  GRAPHQL_MAX_RESPONSE_BYTES: 16 * 1024 * 1024,
  // the data path is what most tests look at (statement counts, fresh fixtures): the cache tests turn it on
  CACHE: false,
  LOG_LEVEL: 'silent',
  // every test client is 127.0.0.1 and some open hundreds of connections at once; the per-client cap is
  // proven with its own settings (and other addresses) in test/server/connections.test.ts
  HTTP_MAX_CONNECTIONS_PER_CLIENT: 0,
  // likewise the per-client byte budget (test/server/client-budget.test.ts)
  HTTP_CLIENT_BYTES_PER_S: 0,
  // a request's database time, like the statement timeout above, is stretched by a loaded test machine:
  // the budget itself is proven with its own settings (test/graphql/history-bounds.test.ts)
  DB_REQUEST_TIME_BUDGET_MS: 60_000,
  // and load shedding: a loaded test machine's event loop is late for reasons of its own
  // (test/server/shedding.test.ts makes the lag itself)
  SHED_EVENT_LOOP_LAG_MS: 0,
  // a loaded test machine can take longer than the production 50 ms for one Redis command, and a timed-out
  // command is a skipped cache write or a bypass by design (fail soft); the cache tests look at what is
  // stored, so they get a generous bound. Timeouts themselves: test/cache/redis-faults.test.ts (SIGSTOP).
  REDIS_COMMAND_TIMEOUT_MS: 1_000,
};
