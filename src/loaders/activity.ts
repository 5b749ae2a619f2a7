import DataLoader from 'dataloader';
import type { BlockActivityRow } from '../db/activity.js';
import { requestLoader, type RequestContext } from './per-request.js';

/** One row per chain from `load`, batched per request under `name`; null for a chain without one. */
export function chainLoader<V>(ctx: RequestContext, name: string, load: (chains: readonly string[]) => Promise<(V & { chain: string })[]>) {
  return requestLoader(ctx, name, () =>
    new DataLoader<string, V | null>(async (chains) => {
      const rows = await load(chains);
      const map = new Map(rows.map((r) => [r.chain, r]));
      return chains.map((c) => map.get(c) ?? null);
    }));
}

/** The newest `last` blocks with indexed transactions, per chain. */
export function recentBlocksLoader(ctx: RequestContext, last: number) {
  return requestLoader(ctx, `recentBlocks:${last}`, () =>
    new DataLoader<string, BlockActivityRow[]>(async (chains) => {
      const rows = await ctx.store.activity.recentBlocks(chains, last);
      return chains.map((chain) => rows.filter((r) => r.chain === chain));
    }));
}
