import { eventCode, integer, isoTime, percent4, tickStatusCode, transferTypeCode, unixTime } from '../format.js';
import type { Result, Schema } from '../declaration.js';

// The pieces several method groups (src/rpc/methods/<group>.ts) share: the descriptions of common params,
// JSON Schema helpers and the shared result schemas (components.schemas of the OpenRPC documents), the
// GraphQL selections and v2 reshapes of the spec's entries, and the demo records the examples use. What a
// declaration is made of (its type, param constructors, decoding) is src/rpc/declaration.ts.

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

// --- the demo records the examples use -----------------------------------------------------------

export const crazydogDeployer = '0xF2f9D2575023D320475ed7875FCDCB9b52787E59';
export const scripted = '0x4273173187f1108007b1C1ABE5301eFa03f7fc8A';
export const avasHash = '0x7ffc56b2bf20f4f3474c1fd503fc3f1fb9066c8b0665d6da11185cac892108a5';
export const lobbyHash = '0x947022fc38f5c1c3349d0b2f77c82917ea3663141c535d07d674c1e21fd0c601';
export const satsHash = '9b664bdd6f5ed80d8d88957b63364c41f3ad4efb8eee11366aa16435974d9333';
export const tomrayMint = '646174613a2c7b2270223a226173632d3230222c226f70223a226d696e74222c227469636b223a22746f6d726179222c22616d74223a2231227d';
export const notFoundTick = 'the tick does not exist';

// --- selections and v2 entries shared by several methods ------------------------------------------

export const tickListFields = `chainName protocol tick deployBy deployHash totalSupply limitPerMint transferType createdAt
  stats { minted holders txCount progress status }`;

type Tick<Fields extends string> =
  Result<`{ tick(chain: "", protocol: "", tick: "") { ${Fields} } }`> extends { tick: infer T } ? NonNullable<T> : never;
export type TickListNode = Tick<typeof tickListFields>;

/** Spec 2.1 */
export const tickListEntry = (t: TickListNode) => ({
  chain: t.chainName,
  protocol: t.protocol,
  tick: t.tick,
  deploy_by: t.deployBy,
  deploy_hash: t.deployHash,
  total_supply: t.totalSupply,
  minted_percent: percent4(t.stats.progress),
  limit_per_mint: t.limitPerMint,
  holders: t.stats.holders,
  transfer_type: transferTypeCode(t.transferType),
  status: tickStatusCode(t.stats.status),
  minted: t.stats.minted,
  tx_cnt: t.stats.txCount,
  created_at: unixTime(t.createdAt),
});

// the selection of index_getInscriptionByTick (its document spells it out)
export type TickEntryNode =
  Tick<'chainName protocol tick name limitPerMint deployBy totalSupply deployHash deployTime transferType createdAt updatedAt decimals'>;

/** Spec 2.2 */
export const tickEntry = (t: TickEntryNode) => ({
  chain: t.chainName,
  protocol: t.protocol,
  tick: t.tick,
  name: t.name,
  limit_per_mint: t.limitPerMint,
  deploy_by: t.deployBy,
  total_supply: t.totalSupply,
  deploy_hash: t.deployHash,
  deploy_time: unixTime(t.deployTime),
  transfer_type: transferTypeCode(t.transferType),
  created_at: unixTime(t.createdAt),
  updated_at: unixTime(t.updatedAt),
  decimals: t.decimals,
});

export const transactionFields = `id: recordId chainName protocol blockHeight positionInBlock blockTime txHash from to op tickName amount
  gas gasPrice status createdAt updatedAt`;

export type TransactionNode = NonNullable<Result<`{ transaction(chain: "", hash: "") { ${typeof transactionFields} } }`>['transaction']>;

/** Spec 2.7 */
export const transactionEntry = (x: TransactionNode) => ({
  id: integer(x.id),
  chain: x.chainName,
  protocol: x.protocol,
  block_height: integer(x.blockHeight),
  position_in_block: x.positionInBlock,
  block_time: isoTime(x.blockTime),
  tx_hash: x.txHash,
  from: x.from,
  to: x.to,
  op: x.op,
  tick: x.tickName,
  amt: x.amount,
  gas: integer(x.gas),
  gas_price: integer(x.gasPrice),
  status: x.status,
  created_at: isoTime(x.createdAt),
  updated_at: isoTime(x.updatedAt),
});

// the movement selection of inds_getTransactionByAddress and inds_getTransactionByHash
type MovementFields = 'address txHash amount event operate createdAt updatedAt tick { chainName protocol tick }';
export type MovementNode = NonNullable<Result<`{ transaction(chain: "", hash: "") { movements { ${MovementFields} } } }`>['transaction']>['movements'][number];

/** Spec 2.6 */
export const movementEntry = (m: MovementNode) => ({
  chain: m.tick.chainName,
  protocol: m.tick.protocol,
  tick: m.tick.tick,
  address: m.address,
  tx_hash: m.txHash,
  amount: m.amount,
  event: eventCode(m.event),
  operate: m.operate,
  created_at: unixTime(m.createdAt),
  updated_at: unixTime(m.updatedAt),
});

export const tickDetailFields = `chainName protocol tick name limitPerMint deployBy totalSupply deployHash deployTime
  transferType createdAt updatedAt decimals stats { minted holders txCount progress }`;

export type TickDetailNode = Tick<typeof tickDetailFields>;

/** Spec 2.2 plus the live stats (the existing service's InscriptionInfo, in its key order). */
export const tickDetailEntry = (t: TickDetailNode) => ({
  ...tickEntry(t),
  minted: t.stats.minted,
  holders: t.stats.holders,
  tx_cnt: t.stats.txCount,
  progress: t.stats.progress,
});
