// The rows of the read model's tables as the sync writes them: src/sync/mapping.ts produces them from the
// source's rows, src/db/sync-apply.ts writes them. Kept in src/db, the lower layer, so that db imports
// nothing from src/sync.

export interface TickKey {
  chain: string; protocol: string; tick: string;
  /** the read model's id of that tick, when the caller has resolved it already (else the write looks it up) */
  tick_id?: string;
}

export interface ChainRow {
  chain: string; chain_id: string; outer_chain: string; name: string; logo: string; network_id: string; ext: string;
  display_order: number;
}

export interface BlockRow { chain: string; block_number: string; block_time: string; indexed_at: string }

export interface TickRow {
  id: string; chain: string; protocol: string; tick: string; name: string; limit_per_mint: string; deploy_by: string;
  total_supply: string; deploy_hash: string; deploy_time: string; transfer_type: number; decimals: number;
  created_at: string; updated_at: string | null;
}

export interface BalanceRow extends TickKey { address: string; balance: string; available: string; updated_at: string }

export interface MovementRow extends TickKey {
  id: string; address: string; tx_hash: string; amount: string; event: number; operate: string;
  created_at: string; updated_at: string;
}

export interface TransactionRow {
  id: string; chain: string; protocol: string; block_height: string; position_in_block: string; block_time: string;
  tx_hash: string; from_address: string; to_address: string; op: string; tick: string; amt: string; gas: string;
  gas_price: string; status: number; created_at: string; updated_at: string;
}

export interface UtxoRow extends TickKey {
  id: string; address: string; root_hash: string; amount: string; status: number; created_at: string; updated_at: string;
}

export interface HistoryRow extends TickKey {
  id: string; address: string; block_height: string | null; amount: string; balance: string; available: string;
  event: number; tx_hash: string; created_at: string;
}
