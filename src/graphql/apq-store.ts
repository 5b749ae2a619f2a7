import { LRUCache } from 'lru-cache';

// The store of automatic persisted queries, bounded per client (entries and bytes) so that no client can
// evict another's entries: past its quota a client replaces its own oldest ones, and idle entries expire.

export interface ApqStoreLimits {
  maxEntries: number;
  maxBytes: number;
  /** Entries and bytes one client may hold. */
  clientMaxEntries: number;
  clientMaxBytes: number;
  /** An entry unused this long expires. */
  idleTtlMs: number;
}

/** Bytes an entry takes in memory: the document in UTF-16 and its hash. */
const sizeOf = (hash: string, document: string) => document.length * 2 + hash.length;

export interface ApqStore {
  get(hash: string): string | undefined;
  /** Registers `document` for `client`; false when it was not kept (quota, full store, too large). */
  register(hash: string, document: string, client: string): boolean;
  readonly size: number;
}

export function createApqStore(limits: ApqStoreLimits): ApqStore {
  // client → its hashes, oldest registration first (a Set keeps insertion order)
  const owned = new Map<string, Set<string>>();
  // hash → who registered it and its size; client → the bytes it holds
  const ownerOf = new Map<string, { client: string; size: number }>();
  const bytesOf = new Map<string, number>();
  const disown = (hash: string) => {
    const owner = ownerOf.get(hash);
    if (owner === undefined) return;
    ownerOf.delete(hash);
    const { client, size } = owner;
    const hashes = owned.get(client)!;
    hashes.delete(hash);
    const left = bytesOf.get(client)! - size;
    if (hashes.size === 0) {
      owned.delete(client);
      bytesOf.delete(client);
    } else bytesOf.set(client, left);
  };
  // max/maxSize one above the limits: evictions are decided below, never by the LRU itself
  const entries = new LRUCache<string, string>({
    max: limits.maxEntries + 1,
    maxSize: limits.maxBytes + 1,
    sizeCalculation: (document, hash) => sizeOf(hash, document),
    ttl: limits.idleTtlMs,
    updateAgeOnGet: true,
    dispose: (_document, hash) => disown(hash),
  });
  const full = (size: number) => entries.size + 1 > limits.maxEntries || entries.calculatedSize + size > limits.maxBytes;
  const overQuota = (client: string, size: number) =>
    (owned.get(client)?.size ?? 0) + 1 > limits.clientMaxEntries || (bytesOf.get(client) ?? 0) + size > limits.clientMaxBytes;
  /** Deletes the client's oldest entry; false when it holds none. */
  const dropOldest = (client: string) => {
    const oldest = owned.get(client)?.values().next().value;
    if (oldest === undefined) return false;
    entries.delete(oldest);
    return true;
  };
  return {
    get: (hash) => entries.get(hash),
    get size() {
      return entries.size;
    },
    register(hash, document, client) {
      if (entries.has(hash)) return true;
      const size = sizeOf(hash, document);
      if (size > limits.clientMaxBytes || size > limits.maxBytes) return false;
      while (overQuota(client, size)) dropOldest(client);
      if (full(size)) entries.purgeStale();
      while (full(size)) if (!dropOldest(client)) return false;
      entries.set(hash, document);
      ownerOf.set(hash, { client, size });
      if (!owned.has(client)) owned.set(client, new Set());
      owned.get(client)!.add(hash);
      bytesOf.set(client, (bytesOf.get(client) ?? 0) + size);
      return true;
    },
  };
}
