import type { Sql } from './client.js';
import { within } from './deadline.js';
import { createNotifiedState, type ReadVia } from './notified-state.js';

// The data version (sql/004_data_version.sql) and the indexed height per chain, as one consistent
// snapshot. The gateway keeps the latest one in memory: cache keys and the freshness extension of every
// GraphQL response are taken from it, never from a per-request round trip.

export const dataVersionChannel = 'igw_data_version';

export interface DataSnapshot {
  /** int8 as text. */
  version: string;
  /** Names the database (see the migration): cache keys use `<epoch>.<version>`. */
  epoch: string;
  /** Latest indexed block per chain (numeric as text); null = the chain has indexed nothing yet. */
  heights: Record<string, string | null>;
  /** The newest indexed block time of any chain (ISO 8601), null = nothing indexed: the data's age. */
  newestBlockTime: string | null;
}

/** Seconds since the newest indexed block time (the data's age, for /readyz and GraphQL freshness). */
export function dataAgeSeconds(snapshot: DataSnapshot, now = Date.now()): number | null {
  if (!snapshot.newestBlockTime) return null;
  return Math.max(0, Math.round((now - Date.parse(snapshot.newestBlockTime)) / 1000));
}

/** One statement, so the version and the heights belong together. */
export async function readSnapshot(sql: Sql): Promise<DataSnapshot> {
  const [row] = await sql<{ version: string; epoch: string; heights: Record<string, string | null>; newest: string | null }[]>`
    SELECT (SELECT version FROM data_version)::text AS version, (SELECT epoch FROM data_version) AS epoch,
           (SELECT to_char(max(block_time) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"') FROM indexed_blocks) AS newest,
           coalesce((SELECT json_object_agg(c.chain, b.block_number::text ORDER BY c.display_order)
                       FROM chains c LEFT JOIN indexed_blocks b ON b.chain = c.chain), '{}'::json) AS heights`;
  if (!row || row.version === null) throw new Error('data_version has no row (migration 004 not applied?)');
  return { version: row.version, epoch: row.epoch, heights: row.heights ?? {}, newestBlockTime: row.newest ?? null };
}

export interface VersionWatcherOptions {
  /** Fallback poll interval; also the bound on staleness when notifications are lost. */
  pollMs: number;
  /** Client-side bound on one read, and on establishing LISTEN (src/db/deadline.ts); default 10 s. */
  readTimeoutMs?: number;
  /** LISTEN for the triggers' notifications (off: polling only, e.g. behind a transaction pooler). */
  listen: boolean;
  onChange?: (next: DataSnapshot, previous: DataSnapshot | null, via: 'start' | 'notify' | 'poll') => void;
  /**
   * Every successful read, changed or not, with the moment it was sent (performance.now()): the database's
   * data was at most this version then (its snapshot was taken after). Replica freshness is proven from it.
   */
  onRead?: (snapshot: DataSnapshot, sentAt: number) => void;
  onError?: (error: unknown, where: 'read' | 'listen') => void;
}

export interface VersionWatcher {
  current(): DataSnapshot | null;
  /** True once LISTEN is established, while the database answers (a failed read means LISTEN is down too). */
  listening(): boolean;
  /** True while the last read failed (until a read succeeds again). */
  failing(): boolean;
  /** First read (and LISTEN); resolves even if they fail (the gateway then answers without the cache). */
  start(): Promise<void>;
  /** Reads the version now (tests, and operators wanting read-your-writes). */
  refresh(): Promise<DataSnapshot | null>;
  stop(): Promise<void>;
}

export function createVersionWatcher(sql: Sql, options: VersionWatcherOptions): VersionWatcher {
  const readTimeoutMs = options.readTimeoutMs ?? 10_000;
  let snapshot: DataSnapshot | null = null;
  let errorReported = false;
  let readOk = false;

  const state = createNotifiedState({
    pollMs: options.pollMs,
    listenTimeoutMs: readTimeoutMs,
    listenLabel: 'LISTEN',
    onListenError: (error) => options.onError?.(error, 'listen'),
    async readOnce(via) {
      try {
        const sentAt = performance.now();
        const next = await within(readSnapshot(sql), readTimeoutMs, 'data version read');
        options.onRead?.(next, sentAt);
        errorReported = false;
        readOk = true;
        // any change counts (not only an increase): a restored database must not reuse old keys' data
        if (!snapshot || next.version !== snapshot.version || next.epoch !== snapshot.epoch || !sameHeights(next.heights, snapshot.heights)) {
          const previous = snapshot;
          snapshot = next;
          options.onChange?.(next, previous, previous ? via : 'start');
        }
      } catch (error) {
        readOk = false;
        if (!errorReported) options.onError?.(error, 'read');
        errorReported = true;
      }
    },
  });
  const refresh = (via: ReadVia): Promise<DataSnapshot | null> => state.read(via).then(() => snapshot);

  return {
    current: () => snapshot,
    listening: () => state.listening() && readOk,
    failing: () => errorReported,
    refresh: () => refresh('poll'),
    async start() {
      await refresh('start');
      if (options.listen) {
        await state.listen(() => sql.listen(
          dataVersionChannel,
          (payload) => {
            if (payload !== snapshot?.version) void refresh('notify');
          },
          // also after every reconnect: notifications sent while disconnected are lost
          () => void refresh('notify'),
        ));
      }
      state.poll();
    },
    stop: () => state.stop(),
  };
}

function sameHeights(a: Record<string, string | null>, b: Record<string, string | null>): boolean {
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => a[k] === b[k]);
}
