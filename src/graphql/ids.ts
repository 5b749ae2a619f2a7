import { badInput } from './paging.js';

// The keys inside global ids (base64 of `Type:key`, the relay plugin's encoding; src/graphql/builder.ts):
// - Tick, TickStats, Transaction, AddressTransaction: the record id (TickStats: its tick's);
// - Chain: the chain name;
// - Balance, Holder: `<tick record id>:<address>` (the pair the balances table is keyed on), and
//   `<tick record id>:<address>@<height>` for one at a block height (atBlock): a past balance is another
//   object than the current one, so a client cache never merges the two.
// A key that cannot be one of ours is refused before any statement (a bigint cast would fail in SQL).

const recordId = /^\d{1,19}$/;

export function parseRecordId(key: string): string {
  if (!recordId.test(key) || BigInt(key) > 2n ** 63n - 1n) throw badInput('Invalid global id: bad record id');
  return key;
}

export const balanceKey = (row: { tick_id: string; address: string; at_block?: string }) =>
  row.at_block != null ? `${row.tick_id}:${row.address}@${row.at_block}` : `${row.tick_id}:${row.address}`;

export function parseBalanceKey(key: string): { tickId: string; address: string; atBlock?: string } {
  const colon = key.indexOf(':');
  let address = key.slice(colon + 1);
  // addresses never hold '@': a suffix `@<height>` is the height of a past balance
  const at = /@(\d{1,19})$/.exec(address);
  if (at) address = address.slice(0, at.index);
  if (colon < 0 || address === '' || address.length > 200 || address.includes('@')) throw badInput('Invalid global id: bad balance key');
  const tickId = parseRecordId(key.slice(0, colon));
  return at ? { tickId, address, atBlock: parseRecordId(at[1]!) } : { tickId, address };
}

export function parseChainKey(key: string): string {
  if (key.length > 100) throw badInput('Invalid global id: bad chain name');
  return key;
}
