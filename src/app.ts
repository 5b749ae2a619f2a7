import type { Server } from 'node:http';
import type { Config } from './config.js';
import { createSql, type Sql } from './db/client.js';
import { createStore, type Store } from './db/store.js';
import { createContext } from './graphql/context.js';
import { createGraphqlServer, type GraphqlServer } from './graphql/yoga.js';
import { methods as v2Methods } from './rpc/methods.js';
import { createRpcHandler } from './rpc/server.js';
import { createHttpServer } from './server/http.js';

export interface Gateway {
  sql: Sql;
  store: Store;
  yoga: GraphqlServer;
  server: Server;
  close(): Promise<void>;
}

export type GatewayConfig = Pick<Config,
  'DB_POOL_MAX' | 'DB_STATEMENT_TIMEOUT_MS' | 'DB_CONNECT_TIMEOUT_S' | 'DEFAULT_PAGE_SIZE' | 'MAX_PAGE_SIZE' |
  'GRAPHQL_INTROSPECTION' | 'CORS_ORIGIN' | 'RPC_MAX_BODY_BYTES' | 'RPC_MAX_BATCH'>;

/** Everything but listening: tests build their own gateway on their own database. */
export function createGateway(
  config: GatewayConfig,
  target: { url?: string; socketPath?: string },
  hooks: { onQuery?: (text: string) => void; onError?: (error: unknown, where: string) => void } = {},
): Gateway {
  const sql = createSql({
    ...target,
    poolMax: config.DB_POOL_MAX,
    statementTimeoutMs: config.DB_STATEMENT_TIMEOUT_MS,
    connectTimeoutS: config.DB_CONNECT_TIMEOUT_S,
    readOnly: true,
    onQuery: hooks.onQuery,
  });
  // the application-side limit backs up statement_timeout (a little later, so the server's fires first)
  const store = createStore(sql, { timeoutMs: config.DB_STATEMENT_TIMEOUT_MS + 1_000 });
  const paging = { defaultPageSize: config.DEFAULT_PAGE_SIZE, maxPageSize: config.MAX_PAGE_SIZE };
  const yoga = createGraphqlServer({ store, paging, introspection: config.GRAPHQL_INTROSPECTION, corsOrigin: config.CORS_ORIGIN });
  const rpc = createRpcHandler({
    tables: { v1: [], v2: v2Methods },
    newContext: () => createContext(store, paging),
    limits: paging,
    maxBodyBytes: config.RPC_MAX_BODY_BYTES,
    maxBatch: config.RPC_MAX_BATCH,
    corsOrigin: config.CORS_ORIGIN,
    onError: hooks.onError,
  });
  const server = createHttpServer({ store, yoga, rpc });
  return {
    sql,
    store,
    yoga,
    server,
    async close() {
      await new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()));
      await sql.end({ timeout: 5 });
    },
  };
}
