import DataLoader from 'dataloader';
import type { ChainRow, IndexedBlockRow } from '../db/chains.js';
import type { Store } from '../db/store.js';

export function createChainLoaders(store: Store) {
  const chainByName = new DataLoader<string, ChainRow | null>(
    async (names) => {
      const rows = await store.chains.byNames(names);
      const map = new Map(rows.map((r) => [r.chain, r]));
      // keys keep the caller's spelling; rows carry the stored lower-case name
      return names.map((n) => map.get(n.toLowerCase()) ?? null);
    },
    { cacheKeyFn: (n) => n.toLowerCase() },
  );
  const latestBlock = new DataLoader<string, IndexedBlockRow | null>(async (chains) => {
    const rows = await store.chains.latestBlocks(chains);
    const map = new Map(rows.map((r) => [r.chain, r]));
    return chains.map((c) => map.get(c) ?? null);
  });
  return { chainByName, latestBlock };
}
