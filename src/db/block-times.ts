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
