// The read model's rows as they are written (the sync maps the source's rows to them in src/sync/mapping.ts;
// src/db/writes.ts writes them for the sync and the demo player). Named *Write apart from the rows the
// gateway reads (src/db/<resource>.ts), which have other shapes.

export interface TickKey {
  chain: string; protocol: string; tick: string;
  /** the read model's id of that tick, when the caller has resolved it already (else the write looks it up) */
  tick_id?: string;
}

export interface ChainWrite {
  chain: string; chain_id: string; outer_chain: string; name: string; logo: string; network_id: string; ext: string;
  display_order: number;
}

export interface BlockWrite { chain: string; block_number: string; block_time: string; indexed_at: string }

export interface TickWrite {
  id: string; chain: string; protocol: string; tick: string; name: string; limit_per_mint: string; deploy_by: string;
  total_supply: string; deploy_hash: string; deploy_time: string; transfer_type: number; decimals: number;
  created_at: string; updated_at: string | null;
}

export interface BalanceWrite extends TickKey { address: string; balance: string; available: string; updated_at: string }

export interface MovementWrite extends TickKey {
  id: string; address: string; tx_hash: string; amount: string; event: number; operate: string;
  created_at: string; updated_at: string;
}

export interface TransactionWrite {
  id: string; chain: string; protocol: string; block_height: string; position_in_block: string; block_time: string;
  tx_hash: string; from_address: string; to_address: string; op: string; tick: string; amt: string; gas: string;
  gas_price: string; status: number; created_at: string; updated_at: string;
}

export interface UtxoWrite extends TickKey {
  id: string; address: string; root_hash: string; amount: string; status: number; created_at: string; updated_at: string;
}

export interface HistoryWrite extends TickKey {
  id: string; address: string; block_height: string | null; amount: string; balance: string; available: string;
  event: number; tx_hash: string; created_at: string;
}
