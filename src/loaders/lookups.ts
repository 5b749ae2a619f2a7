import DataLoader from 'dataloader';
import type { ChainMovementRow } from '../db/lookups.js';
import type { UtxoRow } from '../db/utxos.js';
import { requestLoader, type RequestContext } from './per-request.js';

const movementKey = (chain: string, hash: string) => `${chain.toLowerCase()} ${hash.toLowerCase()}`;

/** The movements a transaction caused, by (chain, hash): inds_getTransactionByHash. */
export function movementsLoader(ctx: RequestContext) {
  return requestLoader(ctx, 'movementsOfTransaction', () =>
    new DataLoader<{ chain: string; txHash: string }, ChainMovementRow[], string>(
      async (keys) => {
        const rows = await ctx.store.lookups.movementsOfTransactions(keys);
        const byKey = new Map<string, ChainMovementRow[]>();
        for (const row of rows) {
          const k = movementKey(row.chain, row.tx_hash);
          byKey.set(k, [...(byKey.get(k) ?? []), row]);
        }
        return keys.map((k) => byKey.get(movementKey(k.chain, k.txHash)) ?? []);
      },
      { cacheKeyFn: (k) => movementKey(k.chain, k.txHash) },
    ));
}

/** An address's unspent UTXOs of a tick, at most `limit` each: inds_getAddressBalance. */
export function utxoLoader(ctx: RequestContext, limit: number) {
  return requestLoader(ctx, `unspentUtxos:${limit}`, () =>
    new DataLoader<{ tickId: string; address: string }, UtxoRow[], string>(
      async (keys) => {
        const rows = await ctx.store.utxos.unspent(keys, limit);
        return keys.map((_k, i) => rows.filter((r) => r.key === String(i + 1)));
      },
      { cacheKeyFn: (k) => `${k.tickId} ${k.address.toLowerCase()}` },
    ));
}
