import { readApiKeys, listenApiKeys, type ApiKeyRow } from '../db/api-keys.js';
import type { Sql } from '../db/client.js';
import { createNotifiedState, type ReadVia } from '../db/notified-state.js';
import { within } from '../db/deadline.js';
import { parseKey, secretMatches } from './key-format.js';
import type { QuotaLimits } from './limits.js';

// The gateway's copy of api_keys (sql/018), read with its read-only role and kept in memory: a lookup costs
// a map read and one SHA-256, never a round trip. Reloaded whole (a few rows per partner) when the
// trigger's NOTIFY igw_api_keys arrives, and every `reloadMs`
// in case a notification was lost (a reconnect, a pooler that drops LISTEN, the embedded engine).

/** A valid key as the rest of the gateway sees it: its name and prefix may be logged, nothing else of it. */
export interface AccessKey {
  id: string;
  name: string;
  prefix: string;
  limits: QuotaLimits;
  /** Per-key overrides of the gateway's limits (null: the default). */
  overrides: { maxPageSize: number | null; maxCost: number | null; maxStreams: number | null };
}

export type KeyLookup =
  | { status: 'valid'; key: AccessKey }
  /** Not a key at all, or no key has this prefix and secret. */
  | { status: 'unknown'; prefix: string | null }
  | { status: 'revoked' | 'expired'; prefix: string; name: string }
  /** The keys were never read (database down since the start): neither valid nor invalid. */
  | { status: 'unavailable'; prefix: string | null };

export interface KeyRegistryOptions {
  sql: Sql;
  /** LISTEN for changes (off behind a transaction pooler and on the embedded engine: polling only). */
  listen: boolean;
  /** Fallback reload interval (ms). */
  reloadMs: number;
  /** Client-side bound on one read (ms). */
  readTimeoutMs?: number;
  onReload?: (keys: number, via: 'start' | 'notify' | 'poll') => void;
  onError?: (error: unknown, where: 'read' | 'listen') => void;
  now?: () => number;
}

export interface KeyRegistry {
  lookup(presented: string): KeyLookup;
  /** The valid-or-not keys held, by prefix. */
  prefixes(): ReadonlySet<string>;
  size(): number;
  loaded(): boolean;
  listening(): boolean;
  /** Reads the table now. */
  reload(): Promise<void>;
  start(): Promise<void>;
  stop(): Promise<void>;
}

interface Entry {
  row: ApiKeyRow;
  key: AccessKey;
}

function toEntry(row: ApiKeyRow): Entry {
  return {
    row,
    key: {
      id: row.id, name: row.name, prefix: row.prefix,
      limits: { ratePerS: row.ratePerS, burst: row.burst, dailyAllowance: row.dailyAllowance },
      overrides: { maxPageSize: row.maxPageSize, maxCost: row.maxCost, maxStreams: row.maxStreams },
    },
  };
}

export function createKeyRegistry(options: KeyRegistryOptions): KeyRegistry {
  const now = options.now ?? Date.now;
  const readTimeoutMs = options.readTimeoutMs ?? 10_000;
  let byPrefix: Map<string, Entry> | null = null;
  let prefixSet: ReadonlySet<string> = new Set();
  let errorReported = false;

  const state = createNotifiedState({
    pollMs: options.reloadMs,
    listenTimeoutMs: readTimeoutMs,
    listenLabel: 'API keys LISTEN',
    onListenError: (error) => options.onError?.(error, 'listen'),
    async readOnce(via) {
      try {
        const rows = await within(readApiKeys(options.sql), readTimeoutMs, 'API keys read');
        byPrefix = new Map(rows.map((row) => [row.prefix, toEntry(row)]));
        prefixSet = new Set(byPrefix.keys());
        errorReported = false;
        options.onReload?.(rows.length, via);
      } catch (error) {
        // the keys last read stay in force
        if (!errorReported) options.onError?.(error, 'read');
        errorReported = true;
      }
    },
  });
  const load = (via: ReadVia) => state.read(via);

  return {
    lookup(presented) {
      const parsed = parseKey(presented);
      if (!parsed) return { status: 'unknown', prefix: null };
      if (!byPrefix) return { status: 'unavailable', prefix: parsed.prefix };
      const entry = byPrefix.get(parsed.prefix);
      // the hash is compared even for an unknown prefix (against a dummy), in constant time
      if (!secretMatches(parsed.secret, entry?.row.secretSha256) || !entry) return { status: 'unknown', prefix: parsed.prefix };
      if (entry.row.revokedAt) return { status: 'revoked', prefix: entry.row.prefix, name: entry.row.name };
      if (entry.row.expiresAt && entry.row.expiresAt.getTime() <= now()) return { status: 'expired', prefix: entry.row.prefix, name: entry.row.name };
      return { status: 'valid', key: entry.key };
    },
    prefixes: () => prefixSet,
    size: () => byPrefix?.size ?? 0,
    loaded: () => byPrefix !== null,
    listening: () => state.listening(),
    reload: () => load('poll'),
    // settles once the first read is done (or failed); LISTEN is set up meanwhile and does not hold the start
    async start() {
      if (options.listen) void state.listen(() => listenApiKeys(options.sql, () => void load('notify'), () => void load('notify')));
      state.poll();
      await load('start');
    },
    stop: () => state.stop(),
  };
}
