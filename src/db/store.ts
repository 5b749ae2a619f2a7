import { createRunner, type Sql } from './client.js';
import { createActivityStore } from './activity.js';
import { createBalanceStore } from './balances.js';
import { createChainStore } from './chains.js';
import { createLookupStore } from './lookups.js';
import { createMovementStore } from './movements.js';
import { createTickStore } from './ticks.js';
import { createTransactionStore } from './transactions.js';
import { createUtxoStore } from './utxos.js';

/** The gateway's whole data access: one sub-store per resource, all SQL behind it. */
export function createStore(sql: Sql, options: { timeoutMs: number }) {
  const run = createRunner(options.timeoutMs);
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
    /** Readiness probe: one round trip. */
    async ping(): Promise<void> {
      await run(sql`SELECT 1`);
    },
  };
}

export type Store = ReturnType<typeof createStore>;
