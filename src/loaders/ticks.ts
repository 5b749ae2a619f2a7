import DataLoader from 'dataloader';
import type { Store } from '../db/store.js';
import type { TickRow } from '../db/ticks.js';

// Keys are normalised the way the database compares them (chain/protocol/tick lower case, hashes
// case-insensitive), so two spellings of one tick share one load.
const tickKey = (chain: string, protocol: string, tick: string) =>
  JSON.stringify([chain.toLowerCase(), protocol.toLowerCase(), tick.toLowerCase()]);
const deployHashKey = (chain: string, hash: string) => JSON.stringify([chain.toLowerCase(), hash.toLowerCase()]);

export function createTickLoaders(store: Store) {
  const byId = new DataLoader<string, TickRow | null>(async (ids) => {
    const rows = await store.ticks.byIds(ids);
    rows.forEach(primeNow);
    const map = new Map(rows.map((r) => [r.id, r]));
    return ids.map((id) => map.get(id) ?? null);
  });

  const byKey = new DataLoader<{ chain: string; protocol: string; tick: string }, TickRow | null, string>(
    async (keys) => {
      const rows = await store.ticks.byKeys(keys);
      rows.forEach(primeNow);
      const map = new Map(rows.map((r) => [tickKey(r.chain, r.protocol, r.tick), r]));
      return keys.map((k) => map.get(tickKey(k.chain, k.protocol, k.tick)) ?? null);
    },
    { cacheKeyFn: (k) => tickKey(k.chain, k.protocol, k.tick) },
  );

  const byDeployHash = new DataLoader<{ chain: string; deployHash: string }, TickRow | null, string>(
    async (keys) => {
      const rows = await store.ticks.byDeployHashes(keys);
      rows.forEach(primeNow);
      const map = new Map(rows.map((r) => [deployHashKey(r.chain, r.deploy_hash), r]));
      return keys.map((k) => map.get(deployHashKey(k.chain, k.deployHash)) ?? null);
    },
    { cacheKeyFn: (k) => deployHashKey(k.chain, k.deployHash) },
  );

  // A tick found one way (a page, or any of the loaders) is primed by id and by key, so a nested look-up
  // of it costs no statement: `tick(chain, protocol, tick) { holders { … tick { tick } } }` is the tick and
  // the holders page, nothing more. Both are unique. A deploy hash is not (the sync keeps source ticks that
  // share one, and a look-up by it answers the lowest id): a row found another way may not be that answer,
  // so it is never primed by its hash. Priming a key already loaded or pending is a no-op.
  function primeNow(row: TickRow) {
    byId.prime(row.id, row);
    byKey.prime({ chain: row.chain, protocol: row.protocol, tick: row.tick }, row);
  }
  // Rows found outside these loaders (a page of ticks) are primed when a tick loader is next asked for
  // (`flush`, src/loaders/index.ts), not as they arrive: a request that never looks a tick up again (a
  // JSON-RPC tick list) pays nothing for them, and one that does finds them primed, in the same order.
  const pending: TickRow[] = [];
  function prime(row: TickRow) {
    pending.push(row);
    return row;
  }
  function flush() {
    for (let i = 0; i < pending.length; i++) primeNow(pending[i]!);
    pending.length = 0;
  }

  return { tickById: byId, tickByKey: byKey, tickByDeployHash: byDeployHash, primeTick: prime, flush };
}
