import type { Config } from '../config.js';
import type { Sql } from './client.js';
import { createRunner, type PoolShares, type Router } from './statement-runner.js';
import { ServiceUnavailableError } from './errors.js';
import { createActivityStore } from './activity.js';
import { createBalanceStore } from './balances.js';
import { createChainStore } from './chains.js';
import { createHistoryStore } from './history.js';
import { createLookupStore } from './lookups.js';
import { createMovementStore } from './movements.js';
import { createTickStore } from './ticks.js';
import { createTransactionStore } from './transactions.js';
import { createUtxoStore } from './utxos.js';

/** The pool's fair-use limits (src/config.ts), given whole by the composition root (src/app.ts). */
export type StoreLimits = Pick<Config,
  'DB_POOL_MAX' | 'DB_MAX_QUEUE' | 'DB_QUEUE_TIMEOUT_MS' | 'REQUEST_MAX_ROWS' | 'REQUEST_MAX_CONCURRENT_STATEMENTS'> &
  Partial<Pick<Config, 'DB_REQUEST_TIME_BUDGET_MS' | 'REQUESTS_MAX_ROWS_HELD'>>;

/** Every statement on `sql` itself, never retried: a store without replicas (tools, tests). */
function singleSource(): Router {
  const source = { label: 'primary', send: <T>(query: PromiseLike<T>) => Promise.resolve(query), failed: () => {} };
  return { pinned: () => source, retryTarget: () => null };
}

/**
 * The gateway's whole data access: one sub-store per resource, all SQL behind it. `timeoutMs` is the
 * application-side limit of one statement (counted once it holds a connection); `limits` share each
 * pool fairly between requests (src/db/statement-runner.ts). Statements are built with `sql` and sent where
 * `router` says (src/db/sources.ts: the primary or a read replica); `unready` tells /readyz why no
 * source can serve.
 */
export function createStore(sql: Sql, options: {
  timeoutMs: number; limits: StoreLimits; router?: Router; unready?: () => string | null;
  /** Servers the router sends to, each with a pool of DB_POOL_MAX (default 1). */
  servers?: number;
  /** The share of each pool anonymous requests may hold now (src/db/statement-runner.ts); default all of it. */
  shares?: PoolShares;
}) {
  const { limits } = options;
  const run = createRunner({
    timeoutMs: options.timeoutMs,
    poolMax: limits.DB_POOL_MAX,
    maxQueue: limits.DB_MAX_QUEUE,
    queueTimeoutMs: limits.DB_QUEUE_TIMEOUT_MS,
    requestMaxRows: limits.REQUEST_MAX_ROWS,
    requestMaxConcurrent: limits.REQUEST_MAX_CONCURRENT_STATEMENTS,
    requestTimeBudgetMs: limits.DB_REQUEST_TIME_BUDGET_MS,
    maxLiveRows: limits.REQUESTS_MAX_ROWS_HELD,
    servers: options.servers ?? 1,
    shares: options.shares,
  }, options.router ?? singleSource());
  return {
    sql,
    chains: createChainStore(sql, run),
    ticks: createTickStore(sql, run),
    balances: createBalanceStore(sql, run),
    history: createHistoryStore(sql, run),
    movements: createMovementStore(sql, run),
    transactions: createTransactionStore(sql, run),
    lookups: createLookupStore(sql, run),
    activity: createActivityStore(sql, run),
    utxos: createUtxoStore(sql, run),
    /** The admission gate now: connections held by statements, statements waiting, pool size. */
    poolState: () => run.pool(),
    /** Readiness probe: what the sources' states say, then one round trip to the source a request would use. */
    async ping(): Promise<void> {
      const reason = options.unready?.();
      if (reason) throw new ServiceUnavailableError(reason);
      await run(sql`SELECT 1`);
    },
  };
}

export type Store = ReturnType<typeof createStore>;
