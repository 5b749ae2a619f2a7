import { eventCode, integer, isoTime, percent4, tickStatusCode, transferTypeCode, unixTime } from '../format.js';
import type { Result } from '../declaration.js';

// The GraphQL selections and v2 reshapes of the spec's entries that several methods share.

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
  position_in_block: integer(x.positionInBlock),
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
