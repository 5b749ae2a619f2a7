import DataLoader from 'dataloader';
import type { BalanceRow } from '../db/balances.js';
import type { HistoricalBalanceRow } from '../db/history.js';
import { requestLoader, type RequestContext } from './per-request.js';

/** One balance row by (tick, address), zero balances included: Tick.balanceOf and node(id). */
export function balanceLoader(ctx: RequestContext) {
  return requestLoader(ctx, 'balanceOfTickAndAddress', () =>
    new DataLoader<{ tickId: string; address: string }, BalanceRow | null, string>(
      async (keys) => {
        const rows = await ctx.store.balances.byTickAndAddress(keys);
        const map = new Map(rows.map((r) => [`${r.tick_id} ${r.address_key}`, r]));
        return keys.map((k) => map.get(`${k.tickId} ${k.address.toLowerCase()}`) ?? null);
      },
      { cacheKeyFn: (k) => `${k.tickId} ${k.address.toLowerCase()}` },
    ));
}

export interface BalanceAtKey { tickId: string; address: string; atBlock: string }

/** One (tick, address) balance at a height, zero included; null if the address had no change by then. */
export function balanceAtLoader(ctx: RequestContext) {
  return requestLoader(ctx, 'balanceOfTickAndAddressAt', () =>
    new DataLoader<BalanceAtKey, HistoricalBalanceRow | null, string>(
      async (keys) => {
        const rows = await ctx.store.history.byTickAndAddressAt(keys);
        const map = new Map(rows.map((r) => [`${r.tick_id} ${r.address_key} ${r.at_block}`, r]));
        return keys.map((k) => map.get(`${k.tickId} ${k.address.toLowerCase()} ${k.atBlock}`) ?? null);
      },
      { cacheKeyFn: (k) => `${k.tickId} ${k.address.toLowerCase()} ${k.atBlock}` },
    ));
}

/** Holder counts of ticks at one height: one statement for every tick of the request at that height. */
export function holderCountAtLoader(ctx: RequestContext, h: string) {
  return requestLoader(ctx, `holderCountAt:${h}`, () =>
    new DataLoader<string, number>(async (ids) => {
      const counts = await ctx.store.history.holderCountsAt(ids, h);
      return ids.map((id) => counts.get(id) ?? 0);
    }));
}
