import type { Schema } from '../declaration.js';

// What several method groups' OpenRPC declarations share: common param descriptions, JSON Schema helpers
// and the shared result schemas (components.schemas).

/** Descriptions of params that mean the same in every method that has them (a param's own wins). */
export const commonParamDescriptions: Record<string, string> = {
  limit: 'Page size; 0 gives an empty page with the real total; above the maximum it is clamped (the reply echoes the effective value).',
  offset: 'Page offset.',
  chain: 'Chain name (eth, avalanche, arbitrum, bsc, fantom, polygon, btc); case-insensitive; "" = no filter.',
  protocol: 'Protocol (asc-20, brc-20, …); case-insensitive; "" = no filter.',
  tick: 'Tick; case-insensitive; "" = no filter.',
  deploy_by: 'Deployer address; case-insensitive; "" = no filter.',
  deploy_hash: 'Deploy transaction hash; case-insensitive.',
  address: 'Address; case-insensitive.',
  key: 'Plain text matched as a case-insensitive substring of the tick ("" = no filter).',
  chains: 'Chain names; an empty list means every chain.',
  selectors: 'Ticks to describe, by chain and deploy hash.',
  call_data: 'Transaction input data in hex, with or without 0x.',
  tx_hash: 'Transaction hash (64 hex digits, with or without 0x; case-insensitive).',
  keyword: 'A tick name or its beginning, an address, or a transaction hash.',
};

// --- JSON Schema helpers -----------------------------------------------------------------------------

export const ref = (name: string): Schema => ({ $ref: `#/components/schemas/${name}` });
export const int = (extra: Schema = {}): Schema => ({ type: 'integer', ...extra });
export const count: Schema = int({ minimum: 0 });
export const str = (extra: Schema = {}): Schema => ({ type: 'string', ...extra });
export const array = (items: Schema, extra: Schema = {}): Schema => ({ type: 'array', items, ...extra });
const nullable = (schema: Schema): Schema => ({ oneOf: [schema, { type: 'null' }] });
/** An object with exactly these members (all required unless listed in `optional`). */
export const object = (properties: Record<string, Schema>, optional: readonly string[] = [], extra: Schema = {}): Schema => ({
  type: 'object',
  properties,
  required: Object.keys(properties).filter((k) => !optional.includes(k)),
  additionalProperties: false,
  ...extra,
});
export const page = (listName: string, item: Schema, extra: Record<string, Schema> = {}): Schema =>
  object({ [listName]: array(item), total: count, limit: count, offset: count, ...extra });

export const listOf = (item: string): Schema => ({ type: 'array', items: ref(item) });

// --- shared schemas (components.schemas) ----------------------------------------------------------

export const componentSchemas: Record<string, Schema> = {
  Decimal: str({
    description: 'Exact non-negative decimal in plain notation, trailing fractional zeros trimmed: "21000000", "0.5", "5".',
    pattern: '^(0|[1-9][0-9]*)(\\.[0-9]*[1-9])?$',
  }),
  MintedPercent: str({ description: 'minted ÷ total supply capped at 1, four decimals, truncated.', pattern: '^[01]\\.[0-9]{4}$' }),
  UnixTime: int({ minimum: 0, description: 'Unix seconds; 0 for a time that never happened.' }),
  IsoTime: str({
    description: 'ISO 8601 UTC, second precision; 0001-01-01T00:00:00Z for a time that never happened.',
    pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}Z$',
  }),
  GoTime: str({
    description: 'Go time.Time String() in UTC, second precision: "2024-01-16 10:18:46 +0000 UTC".',
    pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2} \\+0000 UTC$',
  }),
  PercentChange: nullable(str({
    description: 'Percent change from the previous window, two decimals, signed ("25.00", "-50.00"); null when the previous window is empty.',
    pattern: '^-?[0-9]+\\.[0-9]{2}$',
  })),
  TransferType: int({ enum: [0, 1, 2], description: '0 not set, 1 by UTXO hash, 2 by balance.' }),
  TickListEntry: object({
    chain: str(), protocol: str(), tick: str(), deploy_by: str(), deploy_hash: str(), total_supply: ref('Decimal'),
    minted_percent: ref('MintedPercent'), limit_per_mint: ref('Decimal'), holders: count, transfer_type: ref('TransferType'),
    status: int({ enum: [1, 2], description: '1 minting, 2 fully minted.' }), minted: ref('Decimal'), tx_cnt: count,
    created_at: ref('UnixTime'),
  }, [], { description: 'A tick in a list.' }),
  TickList: page('inscriptions', ref('TickListEntry')),
  TickDetail: object({
    chain: str(), protocol: str(), tick: str(), name: str(), limit_per_mint: ref('Decimal'), deploy_by: str(),
    total_supply: ref('Decimal'), deploy_hash: str(), deploy_time: ref('UnixTime'), transfer_type: ref('TransferType'),
    created_at: ref('UnixTime'), updated_at: ref('UnixTime'), decimals: count,
  }, [], { description: 'Tick detail.' }),
  TickDetailWithStats: object({
    chain: str(), protocol: str(), tick: str(), name: str(), limit_per_mint: ref('Decimal'), deploy_by: str(),
    total_supply: ref('Decimal'), deploy_hash: str(), deploy_time: ref('UnixTime'), transfer_type: ref('TransferType'),
    created_at: ref('UnixTime'), updated_at: ref('UnixTime'), decimals: count, minted: ref('Decimal'), holders: count,
    tx_cnt: count, progress: ref('Decimal'),
  }, [], { description: 'Tick detail plus the live stats; progress = minted ÷ total supply capped at 1, trimmed.' }),
  TickBrief: object({
    id: count, chain: str(), protocol: str(), tick: str(), name: str(), limit_per_mint: ref('Decimal'), deploy_by: str(),
    total_supply: ref('Decimal'), deploy_hash: str(), deploy_time: ref('IsoTime'), transfer_type: ref('TransferType'),
    created_at: ref('IsoTime'), updated_at: ref('IsoTime'), decimals: count, holders: count, minted: ref('Decimal'),
    tx_cnt: count, progress: ref('Decimal'),
  }, [], { description: 'Tick brief.' }),
  BalanceEntry: object({
    chain: str(), protocol: str(), tick: str(), address: str(), balance: ref('Decimal'), deploy_hash: str(),
    transfer_type: ref('TransferType'),
  }, [], { description: 'A balance of an address.' }),
  HolderEntry: object({
    chain: str(), protocol: str(), tick: str(), deploy_hash: str(), address: str(), balance: ref('Decimal'),
    total_supply: ref('Decimal'),
  }, [], { description: 'A holder of a tick.' }),
  AddressTransaction: object({
    chain: str(), protocol: str(), tick: str(), address: str(), tx_hash: str(), amount: ref('Decimal'),
    event: int({ enum: [1, 2, 3, 4], description: '1 deploy, 2 mint, 3 transfer in, 4 transfer out.' }), operate: str(),
    created_at: ref('UnixTime'), updated_at: ref('UnixTime'),
  }, [], { description: "One leg of a transaction in an address's movement log." }),
  Transaction: object({
    id: count, chain: str(), protocol: str(), block_height: count, position_in_block: count, block_time: ref('IsoTime'),
    tx_hash: str({ description: 'As stored for its chain (EVM 0x + 64 hex, btc 64 hex).' }), from: str(), to: str(), op: str(),
    tick: str(), amt: ref('Decimal'), gas: count, gas_price: count, status: int(), created_at: ref('IsoTime'),
    updated_at: ref('IsoTime'),
  }, [], { description: 'A raw transaction.' }),
  Chain: object({
    chain_id: count, chain: str(), outer_chain: str(), name: str(), logo: str(), network_id: count, ext: str(),
    block_number: str({ pattern: '^[0-9]+$' }), block_time: ref('IsoTime'), timestamp: ref('IsoTime'),
  }, [], { description: 'An indexed chain with its latest indexed block.' }),
};
