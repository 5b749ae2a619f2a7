// The integer codes of the v2 interface and the GraphQL enum names they stand for, in one place:
// the GraphQL schema defines its enums from these lists and the RPC layer maps back through them.

/** transfer_type: 0 not set, 1 by UTXO hash, 2 by balance. Index = code. */
export const transferTypes = ['NONE', 'UTXO_HASH', 'BALANCE'] as const;

/** status of a tick: 1 minting, 2 fully minted (minted ≥ total supply). */
export const tickStatuses = { MINTING: 1, COMPLETED: 2 } as const;

/** event of an address movement: 1 deploy, 2 mint, 3 transfer in, 4 transfer out. */
export const movementEvents = { DEPLOY: 1, MINT: 2, TRANSFER_IN: 3, TRANSFER_OUT: 4 } as const;

/** Event filters of a movement list and the event codes each keeps (v2 event type 0–3). */
export const movementEventFilters = {
  ALL: [],
  DEPLOY: [1],
  MINT: [2],
  TRANSFER: [3, 4],
  TRANSFER_IN: [3],
  TRANSFER_OUT: [4],
} as const satisfies Record<string, readonly number[]>;

/** inds_getTicks sort codes 0–4 → tick list orders. */
export const tickOrders = ['ID', 'DEPLOY_TIME', 'PROGRESS', 'HOLDERS', 'TX_COUNT'] as const;
