import type { Sql } from './client.js';
import type { Runner } from './statement-runner.js';

export interface ChainRow {
  chain: string;
  chain_id: string;
  outer_chain: string;
  name: string;
  logo: string;
  network_id: string;
  ext: string;
  display_order: number;
}

export interface IndexedBlockRow {
  chain: string;
  block_number: string;
  block_time: Date;
  indexed_at: Date;
}

export function createChainStore(sql: Sql, run: Runner) {
  return {
    /** All chains in their configured display order. */
    async all(): Promise<ChainRow[]> {
      return run(sql<ChainRow[]>`SELECT * FROM chains ORDER BY display_order`);
    },

    /** Chains by name (case-insensitive), for the loader; unknown names have no row. */
    async byNames(names: readonly string[]): Promise<ChainRow[]> {
      return run(sql<ChainRow[]>`SELECT * FROM chains WHERE chain = ANY(${names.map((n) => n.toLowerCase())}::text[])`);
    },

    async latestBlocks(chains: readonly string[]): Promise<IndexedBlockRow[]> {
      return run(sql<IndexedBlockRow[]>`
        SELECT chain, block_number, block_time, indexed_at FROM indexed_blocks WHERE chain = ANY(${chains as string[]}::text[])`);
    },
  };
}

export type ChainStore = ReturnType<typeof createChainStore>;
