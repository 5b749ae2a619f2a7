import type { Sql } from './client.js';

/**
 * Time of the newest indexed block per chain (ms since epoch), for the data-age metric. Read on the
 * data-version watcher's own connection when the version changes, never per request or per scrape.
 */
export async function readBlockTimes(sql: Sql): Promise<Record<string, number>> {
  const rows = await sql<{ chain: string; ms: string }[]>`
    SELECT chain, (extract(epoch FROM block_time) * 1000)::int8::text AS ms FROM indexed_blocks`;
  return Object.fromEntries(rows.map((r) => [r.chain, Number(r.ms)]));
}

/**
 * The newest block time per chain as last read: `refresh` re-reads it on `sql` (the data-version
 * watcher's connection, when the version changes); a later read never loses to an earlier one that
 * finishes after it.
 */
export function blockTimesReader(sql: Sql, onError: (error: unknown) => void) {
  let times: Record<string, number> | null = null;
  let reads = 0;
  return {
    current: (): Record<string, number> | null => times,
    refresh(): void {
      const seq = ++reads;
      readBlockTimes(sql).then((next) => { if (seq === reads) times = next; }, onError);
    },
  };
}
