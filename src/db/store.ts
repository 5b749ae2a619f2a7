import { configSchema, type Config } from '../config.js';
import { createRunner, type Sql } from './client.js';
import { createActivityStore } from './activity.js';
import { createBalanceStore } from './balances.js';
import { createChainStore } from './chains.js';
import { createLookupStore } from './lookups.js';
import { createMovementStore } from './movements.js';
import { createTickStore } from './ticks.js';
import { createTransactionStore } from './transactions.js';
import { createUtxoStore } from './utxos.js';

/** The pool's fair-use limits (src/config.ts), each defaulted when not given. */
export type StoreLimits = Partial<Pick<Config,
  'DB_POOL_MAX' | 'DB_MAX_QUEUE' | 'DB_QUEUE_TIMEOUT_MS' | 'REQUEST_MAX_ROWS' | 'REQUEST_MAX_CONCURRENT_STATEMENTS'>>;

export const storeLimitDefaults = configSchema.pick({
  DB_POOL_MAX: true, DB_MAX_QUEUE: true, DB_QUEUE_TIMEOUT_MS: true, REQUEST_MAX_ROWS: true, REQUEST_MAX_CONCURRENT_STATEMENTS: true,
}).parse({});

/**
 * The gateway's whole data access: one sub-store per resource, all SQL behind it. `timeoutMs` is the
 * application-side limit of one statement (counted once it holds a connection); `limits` share the pool
 * fairly between requests (src/db/admission.ts).
 */
export function createStore(sql: Sql, options: { timeoutMs: number; limits?: StoreLimits }) {
  const limit = <K extends keyof StoreLimits>(key: K) => options.limits?.[key] ?? storeLimitDefaults[key];
  const run = createRunner({
    timeoutMs: options.timeoutMs,
    poolMax: limit('DB_POOL_MAX'),
    maxQueue: limit('DB_MAX_QUEUE'),
    queueTimeoutMs: limit('DB_QUEUE_TIMEOUT_MS'),
    requestMaxRows: limit('REQUEST_MAX_ROWS'),
    requestMaxConcurrent: limit('REQUEST_MAX_CONCURRENT_STATEMENTS'),
  });
  return {
    sql,
    chains: createChainStore(sql, run),
    ticks: createTickStore(sql, run),
    balances: createBalanceStore(sql, run),
    movements: createMovementStore(sql, run),
    transactions: createTransactionStore(sql, run),
    lookups: createLookupStore(sql, run),
    activity: createActivityStore(sql, run),
    utxos: createUtxoStore(sql, run),
    /** The admission gate now: connections held by statements, statements waiting, pool size. */
    poolState: () => run.pool(),
    /** Readiness probe: one round trip. */
    async ping(): Promise<void> {
      await run(sql`SELECT 1`);
    },
  };
}

export type Store = ReturnType<typeof createStore>;
